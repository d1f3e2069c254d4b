/*
 * test_elf_verify.c - the elf family's proofs from the files
 * (agent/family/elf/elf_read.c): each knob's check passes on a library
 * built with the knob's flag and fails, with a reason, on the same library
 * built without it (a mislabelled variant); trace order is proven from
 * .text; and the presets' knobs (job_spec_elf_preset()).
 *
 * Builds small libraries shaped as elf_generate.c writes them (3
 * functions, 1 global each, the table of function addresses) with gcc
 * and GNU ld in a temporary folder.
 */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "family/elf/elf_family.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/plat.h"

#define EXPORTS 3
#define GLOBALS 1

static char dir[PLAT_MAX_PATH];

/* lt0.c (ORDERED: f2, f0 in ".text.sorted.*" sections, f1 after them). */
static void write_source(const char *name, bool ordered)
{
	FILE *f = check_fopen(dir, name, "w");

	if (!f)
		return;
	fputs("#define LL_EXPORT __attribute__((visibility(\"default\")))\n", f);
	for (int j = 0; j < EXPORTS; j++) {
		fprintf(f, "static int lt0_g%d_0;\nint *lt0_p%d[1] = {&lt0_g%d_0};\n", j, j, j);
		if (ordered && j != 1)
			fprintf(f, "__attribute__((section(\".text.sorted.%06d\")))\n", j == 2 ? 0 : 1);
		fprintf(f, "LL_EXPORT void lt0_f%d(void)\n{\n\t*lt0_p%d[0] = %d;\n}\n", j, j, j + 1);
	}
	fputs("void (*const lt0_fns[])(void) = {lt0_f0, lt0_f1, lt0_f2};\n", f);
	fclose(f);
}

/* Compiles SOURCE with CFLAGS and links it with LDFLAGS (NULL-terminated
 * lists) into OUT; true when gcc exited 0. */
static bool build(const char *source, const char *const *cflags, const char *const *ldflags, const char *out)
{
	char src[PLAT_MAX_PATH + 64], obj[PLAT_MAX_PATH + 64], so[PLAT_MAX_PATH + 64];
	const char *argv[32];
	size_t n = 0;
	int code = -1;

	snprintf(src, sizeof(src), "%s/%s", dir, source);
	snprintf(obj, sizeof(obj), "%s/%s.o", dir, out);
	snprintf(so, sizeof(so), "%s/%s", dir, out);
	argv[n++] = "gcc";
	argv[n++] = "-O1";
	argv[n++] = "-fPIC";
	argv[n++] = "-c";
	argv[n++] = src;
	argv[n++] = "-o";
	argv[n++] = obj;
	for (; cflags && *cflags; cflags++)
		argv[n++] = *cflags;
	argv[n] = NULL;
	struct plat_spawn_options o = {.argv = argv};
	char gcc[PLAT_MAX_PATH];
	if (plat_find_program("gcc", gcc, sizeof(gcc)) < 0)
		return false;
	argv[0] = gcc;
	if (plat_run(&o, 60000, &code, NULL) < 0 || code != 0)
		return false;
	n = 0;
	argv[n++] = gcc;
	argv[n++] = "-shared";
	argv[n++] = "-nostdlib";
	argv[n++] = "-o";
	argv[n++] = so;
	argv[n++] = obj;
	for (; ldflags && *ldflags; ldflags++)
		argv[n++] = *ldflags;
	argv[n] = NULL;
	return plat_run(&o, 60000, &code, NULL) == 0 && code == 0;
}

/* Builds the library with every flag of PRESET (FLAGS) and checks it
 * valid; then without DROPPED (the mislabelled variant: same knobs, the
 * flag missing) and checks it invalid with a reason. */
static void knob(const char *preset, const char *const *cflags, const char *const *ldflags,
		 const char *const *cflags_mislabelled, const char *const *ldflags_mislabelled)
{
	struct job_spec_elf_knobs knobs;
	struct elf_object_facts f;
	char path[PLAT_MAX_PATH + 64], reason[400] = "";

	CHECK(job_spec_elf_preset(preset, &knobs) == 0);
	CHECK(build("lt0.c", cflags, ldflags, "good.so"));
	snprintf(path, sizeof(path), "%s/good.so", dir);
	CHECK(elf_read_object(path, &f) == 0);
	bool good = elf_check_object(&f, &knobs, false, EXPORTS, GLOBALS, reason, sizeof(reason));
	if (!good)
		fprintf(stderr, "%s: %s\n", preset, reason);
	CHECK(good);

	reason[0] = '\0';
	CHECK(build("lt0.c", cflags_mislabelled, ldflags_mislabelled, "bad.so"));
	snprintf(path, sizeof(path), "%s/bad.so", dir);
	CHECK(elf_read_object(path, &f) == 0);
	CHECK(!elf_check_object(&f, &knobs, false, EXPORTS, GLOBALS, reason, sizeof(reason)));
	CHECK(reason[0] != '\0');
	printf("%s without its flag: invalid: %s\n", preset, reason);
}

static void test_knobs(void)
{
	static const char *const lazy_gnu[] = {"-Wl,-z,lazy", "-Wl,--hash-style=gnu", NULL};
	static const char *const now[] = {"-Wl,-z,now", "-Wl,--hash-style=gnu", NULL};
	static const char *const relr[] = {"-Wl,-z,lazy", "-Wl,--hash-style=gnu",
					   "-Wl,-z,pack-relative-relocs", NULL};
	static const char *const symbolic[] = {"-Wl,-z,lazy", "-Wl,--hash-style=gnu", "-Wl,-Bsymbolic", NULL};
	static const char *const symbolic_relr[] = {"-Wl,-z,lazy", "-Wl,--hash-style=gnu", "-Wl,-Bsymbolic",
						    "-Wl,-z,pack-relative-relocs", NULL};
	static const char *const sysv[] = {"-Wl,-z,lazy", "-Wl,--hash-style=sysv", NULL};
	static const char *const hidden[] = {"-fvisibility=hidden", NULL};
	struct job_spec_elf_knobs knobs;
	struct elf_object_facts f;
	char path[PLAT_MAX_PATH + 64], reason[400];

	write_source("lt0.c", false);
	/* default, as built: valid; a default claim on a -z now library: not. */
	knob("default", NULL, lazy_gnu, NULL, now);
	knob("now", NULL, now, NULL, lazy_gnu);
	knob("relr", NULL, relr, NULL, lazy_gnu);
	knob("symbolic", NULL, symbolic, NULL, lazy_gnu);
	knob("symbolic+relr", NULL, symbolic_relr, NULL, symbolic);
	knob("hidden", hidden, lazy_gnu, NULL, lazy_gnu);
	knob("sysv-hash", NULL, sysv, NULL, lazy_gnu);

	/* What the reader counts, on the default build (elf_generate.c's
	 * shape: 3 R_X86_64_64 for the table, 3 RELATIVE for the pointer
	 * tables, 3 GLOB_DAT for the functions' reach of them). */
	CHECK(build("lt0.c", NULL, lazy_gnu, "counts.so"));
	snprintf(path, sizeof(path), "%s/counts.so", dir);
	CHECK(elf_read_object(path, &f) == 0);
	CHECK_EQ_INT(f.symbolic_64, EXPORTS);
	CHECK_EQ_INT(f.relative, EXPORTS * GLOBALS);
	CHECK_EQ_INT(f.glob_dat, EXPORTS);
	CHECK_EQ_INT(f.jump_slot, 0);
	CHECK_EQ_INT(f.dynsym_functions, EXPORTS);
	CHECK(f.gnu_hash && !f.sysv_hash && !f.relr && !f.bind_now && !f.symbolic);

	/* A program is checked for binding, hash and RELR only. */
	CHECK(job_spec_elf_preset("now", &knobs) == 0);
	CHECK(!elf_check_object(&f, &knobs, true, EXPORTS, GLOBALS, reason, sizeof(reason)));
	snprintf(path, sizeof(path), "%s/not-elf", dir);
	CHECK(plat_write_file(path, "text", 4) == 0);
	CHECK(elf_read_object(path, &f) == LL_EFORMAT);
}

static void test_order(void)
{
	static const char *const lazy_gnu[] = {"-Wl,-z,lazy", "-Wl,--hash-style=gnu", NULL};
	static const int trace[] = {2, 0};
	static const int wrong[] = {0, 2};
	char path[PLAT_MAX_PATH + 64], reason[400];
	bool ok = false;

	write_source("lt0_order.c", true);
	CHECK(build("lt0_order.c", NULL, lazy_gnu, "order.so"));
	snprintf(path, sizeof(path), "%s/order.so", dir);
	CHECK(elf_check_order(path, 0, trace, 2, &ok, reason, sizeof(reason)) == 0);
	CHECK(ok);
	CHECK(elf_check_order(path, 0, wrong, 2, &ok, reason, sizeof(reason)) == 0);
	CHECK(!ok);
	/* The reorder claim on a library in link order (the knob dropped). */
	CHECK(build("lt0.c", NULL, lazy_gnu, "link.so"));
	snprintf(path, sizeof(path), "%s/link.so", dir);
	ok = true;
	CHECK(elf_check_order(path, 0, trace, 2, &ok, reason, sizeof(reason)) == 0);
	CHECK(!ok);
	printf("reorder without its order: invalid: %s\n", reason);
}

static void test_presets(void)
{
	struct job_spec_elf_knobs k;

	CHECK(job_spec_elf_preset("symbolic+relr", &k) == 0);
	CHECK(k.symbolic && k.relr && !k.bind_now && !k.hidden && !k.trace_order && !k.sysv_hash);
	CHECK(job_spec_elf_preset("reorder", &k) == 0 && k.trace_order);
	CHECK(job_spec_elf_preset("bind", &k) == LL_EINVAL);
}

int main(void)
{
	char *temp = NULL;

	CHECK(plat_make_temp_dir("loadlab-elf-test-", &temp) == 0);
	if (!temp)
		return check_finish();
	snprintf(dir, sizeof(dir), "%s", temp);
	test_knobs();
	test_order();
	test_presets();
	plat_remove_tree(temp);
	free(temp);
	return check_finish();
}
