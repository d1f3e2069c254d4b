/* toolchain.c - finds mingw-w64's gcc and its target for the pe family's
 * generated programs; the Linux toolchains of the elf family (runner.h). */
#include "runner/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"

static const char host_gcc[] = "x86_64-w64-mingw32-gcc";

/* The mingw-w64 compiler (runner.h) into RET, its target left empty;
 * LL_ENOTFOUND with a message when there is none. */
static int compiler_find(struct runner_toolchain *ret)
{
	const char *name = plat_runs_windows_programs() ? "gcc" : host_gcc;
	struct runner_toolchain t;

	memset(&t, 0, sizeof(t));
	if (plat_find_program(name, t.gcc, sizeof(t.gcc)) < 0) {
		/* A Windows agent under Wine: the host's cross compiler, run
		 * through the host's shell (plat.h, "Host programs"). */
		if (!plat_runs_windows_programs() || !plat_under_wine() ||
		    plat_find_host_program(host_gcc, t.gcc, sizeof(t.gcc)) < 0)
			return err_set(LL_ENOTFOUND, "No mingw-w64 compiler (%s) in PATH%s.", name,
				       plat_under_wine() ? ", nor the host's x86_64-w64-mingw32-gcc" : "");
		name = host_gcc;
		t.host = true;
	}
	*ret = t;
	return 0;
}

/* The first line of what the compiler T prints for ARG (through the file
 * NAME in WORK) into OUT, of SIZE bytes. */
static int toolchain_ask(const char *work, const struct runner_toolchain *t, const char *arg,
			 const char *name, char *out, size_t size)
{
	char path[PLAT_MAX_PATH + 1], text[256];
	const char *argv[] = {t->gcc, arg, NULL};
	struct plat_spawn_options o = {.argv = argv};
	int n, rc, code = 0;
	FILE *f;

	n = snprintf(path, sizeof(path), "%s/%s", work, name);
	if (n < 0 || n >= (int)sizeof(path))
		return err_set(LL_ETOOBIG, "The path %s/%s is too long.", work, name);
	o.stdout_path = path;
	rc = t->host ? plat_run_host(&o, 60000, &code, NULL) : plat_run(&o, 60000, &code, NULL);
	if (rc == 0 && code != 0)
		rc = err_set(LL_EIO, "%s %s exited with %d.", t->gcc, arg, code);
	if (rc < 0)
		return rc;
	if (!(f = fopen(path, "rb")))
		return err_set(LL_EIO, "Cannot open %s.", path);
	if (!fgets(text, sizeof(text), f))
		text[0] = '\0';
	fclose(f);
	text[strcspn(text, "\r\n")] = '\0';
	snprintf(out, size, "%.*s", (int)size - 1, text);
	return 0;
}

/* Asks the compiler T for its target into T->target and T->x86, and for
 * its version (the first line of `gcc --version`) into T->version. */
static int toolchain_target(const char *work, struct runner_toolchain *t)
{
	int rc;

	if ((rc = toolchain_ask(work, t, "-dumpmachine", "toolchain-target.txt", t->target,
				sizeof(t->target))) < 0 ||
	    (rc = toolchain_ask(work, t, "--version", "toolchain-version.txt", t->version,
				sizeof(t->version))) < 0)
		return rc;
	t->x86 = strncmp(t->target, "i686", 4) == 0 || strncmp(t->target, "i586", 4) == 0 ||
		 strncmp(t->target, "i386", 4) == 0;
	return 0;
}

int runner_toolchain_find(const char *work, struct runner_toolchain *ret)
{
	return runner_toolchain_find_named(work, NULL, ret);
}

int runner_toolchain_find_named(const char *work, const char *name, struct runner_toolchain *ret)
{
	struct runner_toolchain t;
	int rc;

	if (name) {
		memset(&t, 0, sizeof(t));
		if (plat_find_program(name, t.gcc, sizeof(t.gcc)) < 0)
			return err_set(LL_ENOTFOUND, "No %.64s in PATH: this agent cannot do this build.",
				       name);
	} else if ((rc = compiler_find(&t)) < 0) {
		return rc;
	}
	if ((rc = toolchain_target(work, &t)) < 0)
		return rc;
	*ret = t;
	return 0;
}

/* lld 14 has no -z pack-relative-relocs (lld 15 has): its older spelling. */
const struct runner_elf_toolchain runner_elf_toolchains[RUNNER_ELF_TOOLCHAINS] = {
	{"gcc+ld", "gcc", "ld", "GNU ld", "-fuse-ld=bfd", "-z,pack-relative-relocs", false, true},
	{"clang+lld", "clang", "ld.lld", "lld", "-fuse-ld=lld", "--pack-dyn-relocs=relr", true, false},
};

int runner_elf_toolchain(const char *kind, const struct runner_elf_toolchain **ret)
{
	for (size_t i = 0; i < RUNNER_ELF_TOOLCHAINS; i++)
		if (strcmp(runner_elf_toolchains[i].kind, kind) == 0) {
			*ret = &runner_elf_toolchains[i];
			return 0;
		}
	return err_set(LL_EINVAL, "Unknown toolchain '%.64s' (known: gcc+ld, clang+lld).", kind);
}
