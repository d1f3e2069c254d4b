/*
 * elf_measure.c - what the driver times for the elf family (elf_timing()):
 * every valid variant's program and the empty program (the floor), run
 * natively in their folders, with the files a cold run evicts and checks
 * for residency (the program and its libraries). Churn is not part of
 * this family.
 */
#ifdef __linux__

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_family.h"
#include "loadlab/err.h"

/* The spawn options and file list of the program in DIR (main and
 * liblt0.so.. when not EMPTY, else empty). */
static int measured_init(const struct elf_context *ctx, const char *dir, bool empty, struct elf_measured *m,
			 struct measure_program *p)
{
	size_t n = 0, count = empty ? 1 : (size_t)ctx->dlls + 1;
	int rc;

	if (strlen(dir) > PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "The path %s is too long.", dir);
	memcpy(m->dir, dir, strlen(dir) + 1);
	if ((rc = family_path(m->exe, dir, empty ? "empty" : "main")) < 0)
		return rc;
	if (!(m->files = calloc(count + 1, sizeof(*m->files))) || !(m->files[0] = strdup(m->exe)))
		return LL_ENOMEM;
	for (int i = 0; !empty && i < ctx->dlls; i++) {
		char name[32], path[PLAT_MAX_PATH + 1];
		snprintf(name, sizeof(name), "liblt%d.so", i);
		if ((rc = family_path(path, dir, name)) < 0)
			return rc;
		if (!(m->files[++n] = strdup(path)))
			return LL_ENOMEM;
	}
	m->argv[0] = m->exe;
	m->argv[1] = NULL;
	p->spawn.argv = m->argv;
	p->spawn.cwd = m->dir;
	p->files = (const char *const *)m->files;
	return 0;
}

int elf_timing(struct elf_context *ctx, struct family_timing *ret)
{
	char empty_dir[PLAT_MAX_PATH + 1];
	size_t count = 0;
	int rc;

	memset(ret, 0, sizeof(*ret));
	if ((rc = family_path(empty_dir, ctx->work, "empty")) < 0 ||
	    (rc = elf_files_json(ctx, empty_dir, true, &ctx->floor_files)) < 0)
		return rc;
	for (size_t v = 0; v < ctx->variant_count; v++) {
		if (!ctx->variants[v].valid)
			continue;
		if (count + 1 >= MEASURE_MAX_PROGRAMS)
			return err_set(LL_ETOOBIG, "At most %d variants can be timed together.", MEASURE_MAX_PROGRAMS - 1);
		ret->programs[count].name = ctx->variants[v].name;
		ctx->measured_count = count + 1;
		if ((rc = measured_init(ctx, ctx->variants[v].dir, false, &ctx->measured[count], &ret->programs[count])) < 0)
			return rc;
		count++;
	}
	ret->programs[count].name = ELF_FLOOR_NAME;
	ctx->measured_count = count + 1;
	if ((rc = measured_init(ctx, empty_dir, true, &ctx->measured[count], &ret->programs[count])) < 0)
		return rc;
	ret->count = count + 1;
	return 0;
}

#endif /* __linux__ */
