/*
 * pe_measure.c - what the driver times for the pe family (pe_timing()):
 * every valid variant and the empty program (the floor), started as the
 * runner starts them, and the DLLs the churn test's "generated" set loads.
 */
#include "pe_family.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The spawn options and file list of the program in DIR (main.exe and
 * lt0.dll.. when not EMPTY, else empty.exe), started as runner_run()
 * starts it. */
static int measured_init(const struct pe_context *ctx, const char *dir, bool empty,
			 struct pe_measured *m, struct measure_program *p)
{
	size_t n = 0, count = empty ? 1 : (size_t)ctx->dlls + 1;
	int rc;

	if (strlen(dir) > PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "The path %s is too long.", dir);
	memcpy(m->dir, dir, strlen(dir) + 1);
	if ((rc = family_path(m->exe, dir, empty ? "empty.exe" : "main.exe")) < 0)
		return rc;
	if (!(m->files = calloc(count + 1, sizeof(*m->files))) || !(m->files[0] = strdup(m->exe)))
		return LL_ENOMEM;
	for (int i = 0; !empty && i < ctx->dlls; i++) {
		char name[32], path[PLAT_MAX_PATH + 1];
		snprintf(name, sizeof(name), "lt%d.dll", i);
		if ((rc = family_path(path, dir, name)) < 0)
			return rc;
		if (!(m->files[++n] = strdup(path)))
			return LL_ENOMEM;
	}
	n = 0;
	if (ctx->runner.through_wine64)
		m->argv[n++] = ctx->runner.wine64;
	m->argv[n++] = m->exe;
	m->argv[n] = NULL;
	p->spawn.argv = m->argv;
	p->spawn.env_add = ctx->runner.through_wine64 ? ctx->runner.env : NULL;
	p->spawn.cwd = m->dir; /* DIR may not outlive this call */
	p->files = (const char *const *)m->files;
	return 0;
}

int pe_timing(struct pe_context *ctx, struct family_timing *ret)
{
	char empty_dir[PLAT_MAX_PATH + 1];
	size_t count = 0;
	int rc = 0;

	memset(ret, 0, sizeof(*ret));
	if ((rc = family_path(empty_dir, ctx->work, "empty")) < 0 ||
	    (rc = pe_files_json(ctx, empty_dir, true, &ctx->floor_files)) < 0)
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
	ret->programs[count].name = PE_FLOOR_NAME;
	ctx->measured_count = count + 1;
	if ((rc = measured_init(ctx, empty_dir, true, &ctx->measured[count], &ret->programs[count])) < 0)
		return rc;
	ret->count = count + 1;
	/* "generated": the DLLs of the first variant that proved valid. */
	for (size_t v = 0; v < ctx->variant_count; v++) {
		if (!ctx->variants[v].valid)
			continue;
		for (int i = 0; i < ctx->dlls && i < CHURN_MAX_LIBS; i++) {
			char name[32], path[PLAT_MAX_PATH + 1];
			snprintf(name, sizeof(name), "lt%d.dll", i);
			if ((rc = family_path(path, ctx->variants[v].dir, name)) < 0)
				return rc;
			if (!(ctx->churn_libs[i] = strdup(path)))
				return LL_ENOMEM;
		}
		break;
	}
	ret->churn_libs = (const char *const *)ctx->churn_libs;
	ret->churn_wine = ctx->runner.through_wine64;
	return 0;
}
