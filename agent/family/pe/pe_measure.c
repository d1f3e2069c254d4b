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

int pe_timing(struct pe_context *ctx, struct family_timing *ret)
{
	int rc = family_timing(&ctx->base, &pe_names, ctx->variants, ctx->variant_count,
			       sizeof(ctx->variants[0]), PE_FLOOR_NAME, ret);

	if (rc < 0)
		return rc;
	/* Started as runner_run() starts them. */
	for (size_t i = 0; ctx->runner.through_wine64 && i < ret->count; i++) {
		struct family_program *m = &ctx->base.measured[i];
		m->argv[0] = ctx->runner.wine64;
		m->argv[1] = m->exe;
		m->argv[2] = NULL;
		ret->programs[i].spawn.env_add = ctx->runner.env;
	}
	/* "generated": the DLLs of the first variant that proved valid. */
	for (size_t v = 0; v < ctx->variant_count; v++) {
		if (!ctx->variants[v].base.valid)
			continue;
		for (int i = 0; i < ctx->base.dlls && i < CHURN_MAX_LIBS; i++) {
			char name[32], path[PLAT_MAX_PATH + 1];
			snprintf(name, sizeof(name), "lt%d.dll", i);
			if ((rc = family_path(path, ctx->variants[v].base.dir, name)) < 0)
				return rc;
			if (!(ctx->churn_libs[i] = strdup(path)))
				return LL_ENOMEM;
		}
		break;
	}
	ret->churn_libs = (const char *const *)ctx->churn_libs;
	ret->churn_wine = ctx->runner.through_wine64;
	ret->companion_pid = runner_server_pid(&ctx->runner);
	return 0;
}
