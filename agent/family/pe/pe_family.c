/*
 * pe_family.c - the `pe` family behind family.h: reads the job's generator
 * and variants, runs its stages (pe_generate.c, pe_build.c,
 * pe_transform.c, pe_verify.c) under the runner (runner/runner.h), gives
 * the driver what to time (pe_measure.c) and describes the result.
 */
#include "pe_family.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

/* The link set for VAR's flags, added when new. */
static int choose_set(struct pe_context *ctx, struct pe_variant *var)
{
	bool toolchain = strcmp(var->bases, "toolchain") == 0;
	for (size_t s = 0; s < ctx->set_count; s++)
		if (ctx->sets[s].toolchain_flags == toolchain && ctx->sets[s].ordinal == var->ordinal &&
		    ctx->sets[s].trace_order == var->trace_order) {
			var->link_set = s;
			return 0;
		}
	if (ctx->set_count == sizeof(ctx->sets) / sizeof(ctx->sets[0]))
		return err_set(LL_ETOOBIG, "Too many link configurations.");
	struct pe_link_set *set = &ctx->sets[ctx->set_count];
	char sub[64];
	set->toolchain_flags = toolchain;
	set->ordinal = var->ordinal;
	set->trace_order = var->trace_order;
	snprintf(sub, sizeof(sub), "sets/%s-%s-%s", toolchain ? "toolchain" : "fixed",
		 var->ordinal ? "ordinal" : "name", var->trace_order ? "trace" : "link");
	int rc = family_path(set->dir, ctx->work, sub);
	if (rc < 0)
		return rc;
	var->link_set = ctx->set_count++;
	return 0;
}

/* The generator and the variants of JOB (normalized) into CTX. */
static int read_job(struct pe_context *ctx, const cJSON *job)
{
	const cJSON *gen, *variants, *item;
	const char *main_mode;
	long long value;
	int rc;

	gen = cJSON_GetObjectItemCaseSensitive(job, "generator");
	if ((rc = json_get_int(gen, "dlls", 1, JOB_SPEC_MAX_DLLS, true, 0, &value)) < 0)
		return rc;
	ctx->dlls = (int)value;
	if ((rc = json_get_int(gen, "exports", 1, JOB_SPEC_MAX_EXPORTS, true, 0, &value)) < 0)
		return rc;
	ctx->exports = (int)value;
	if ((rc = json_get_int(gen, "globals_per_function", 0, JOB_SPEC_MAX_GLOBALS, false, 0, &value)) < 0)
		return rc;
	ctx->globals = (int)value;
	if ((rc = json_get_string(gen, "main", 16, false, "reference", &main_mode)) < 0)
		return rc;
	ctx->main_call = strcmp(main_mode, "call") == 0;
	variants = cJSON_GetObjectItemCaseSensitive(job, "variants");
	ctx->variant_count = (size_t)cJSON_GetArraySize(variants);
	ctx->variants = calloc(ctx->variant_count, sizeof(*ctx->variants));
	if (!ctx->variants)
		return LL_ENOMEM;
	size_t v = 0;
	cJSON_ArrayForEach(item, variants) {
		struct pe_variant *var = &ctx->variants[v++];
		const char *name, *bases, *imports, *order;
		bool bind;
		if ((rc = json_get_string(item, "name", JOB_SPEC_MAX_NAME, true, NULL, &name)) < 0 ||
		    (rc = json_get_string(item, "bases", 15, true, NULL, &bases)) < 0 ||
		    (rc = json_get_bool(item, "bind", true, false, &bind)) < 0 ||
		    (rc = json_get_string(item, "imports", 15, true, NULL, &imports)) < 0 ||
		    (rc = json_get_string(item, "order", 15, true, NULL, &order)) < 0)
			return rc;
		snprintf(var->name, sizeof(var->name), "%s", name);
		snprintf(var->bases, sizeof(var->bases), "%s", bases);
		var->bind = bind;
		var->ordinal = strcmp(imports, "ordinal") == 0;
		var->trace_order = strcmp(order, "trace") == 0;
		ctx->need_trace |= var->trace_order;
		if ((rc = choose_set(ctx, var)) < 0)
			return rc;
	}
	return 0;
}

static int knobs_json(const struct pe_variant *var, cJSON *o)
{
	cJSON *k = cJSON_AddObjectToObject(o, "knobs");
	if (!k || !cJSON_AddStringToObject(k, "bases", var->bases) || !cJSON_AddBoolToObject(k, "bind", var->bind) ||
	    !cJSON_AddStringToObject(k, "imports", var->ordinal ? "ordinal" : "name") ||
	    !cJSON_AddStringToObject(k, "order", var->trace_order ? "trace" : "link"))
		return LL_ENOMEM;
	return 0;
}

/* The variants, the floor, the measurement, the toolchain and the runner
 * of RESULT (schemas/result.json). On success the result owns the
 * variants' verify and files; on failure they stay in CTX. */
static int pe_describe(struct family_run *run, void *state, const struct family_measured *measured, cJSON *r)
{
	struct pe_context *ctx = state;
	cJSON *variants, *t, *floor;

	if (!(variants = cJSON_AddArrayToObject(r, "variants")))
		return LL_ENOMEM;
	for (size_t v = 0; v < ctx->variant_count; v++) {
		struct pe_variant *var = &ctx->variants[v];
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(variants, o)) {
			cJSON_Delete(o);
			return LL_ENOMEM;
		}
		if (!cJSON_AddStringToObject(o, "name", var->name) || knobs_json(var, o) < 0 ||
		    !cJSON_AddBoolToObject(o, "valid", var->valid))
			return LL_ENOMEM;
		if (!var->valid && !cJSON_AddStringToObject(o, "invalid_reason", var->invalid_reason))
			return LL_ENOMEM;
		if (var->verify) {
			if (!cJSON_AddItemToObject(o, "verify", var->verify))
				return LL_ENOMEM;
			var->verify = NULL;
		}
		if (var->files) {
			if (!cJSON_AddItemToObject(o, "files", var->files))
				return LL_ENOMEM;
			var->files = NULL;
		}
		if (var->valid && (family_add_measured(o, "warm", measured->warm, var->name) < 0 ||
				   family_add_measured(o, "cold", measured->cold, var->name) < 0))
			return LL_ENOMEM;
	}
	if (!(floor = cJSON_AddObjectToObject(r, "floor")) || !cJSON_AddStringToObject(floor, "name", "empty.exe"))
		return LL_ENOMEM;
	if (ctx->floor_files) {
		cJSON_AddItemToObject(floor, "files", ctx->floor_files);
		ctx->floor_files = NULL;
	}
	if (family_add_measured(floor, "warm", measured->warm, PE_FLOOR_NAME) < 0 ||
	    family_add_measured(floor, "cold", measured->cold, PE_FLOOR_NAME) < 0 ||
	    family_add_measurement(r, measured) < 0)
		return LL_ENOMEM;
	if (!(t = cJSON_AddObjectToObject(r, "toolchain")) || !cJSON_AddStringToObject(t, "kind", "mingw-w64") ||
	    !cJSON_AddStringToObject(t, "target", ctx->toolchain.target) ||
	    !cJSON_AddStringToObject(t, "compiler", ctx->toolchain.gcc) ||
	    !cJSON_AddStringToObject(r, "runner", ctx->runner.wine ? "wine" : "native"))
		return LL_ENOMEM;
	return 0;
}

static void pe_release(void *state)
{
	struct pe_context *ctx = state;

	if (!ctx)
		return;
	for (size_t v = 0; ctx->variants && v < ctx->variant_count; v++) {
		cJSON_Delete(ctx->variants[v].verify);
		cJSON_Delete(ctx->variants[v].files);
	}
	free(ctx->variants);
	for (int i = 0; ctx->trace && i < ctx->dlls; i++)
		free(ctx->trace[i]);
	free(ctx->trace);
	free(ctx->trace_count);
	cJSON_Delete(ctx->floor_files);
	for (size_t i = 0; i < ctx->measured_count; i++) {
		for (size_t f = 0; ctx->measured[i].files && ctx->measured[i].files[f]; f++)
			free(ctx->measured[i].files[f]);
		free(ctx->measured[i].files);
	}
	for (size_t i = 0; ctx->churn_libs[i]; i++)
		free(ctx->churn_libs[i]);
	runner_stop(&ctx->runner);
	free(ctx);
}

static int pe_validate(const struct family_run *run, void **ret_state)
{
	struct pe_context *ctx = calloc(1, sizeof(*ctx));
	int rc;

	if (!ctx)
		return LL_ENOMEM;
	ctx->task = run->task;
	/* The work folder first (the driver checked its length): read_job()
	 * places the link sets in it. */
	snprintf(ctx->work, sizeof(ctx->work), "%s", run->work);
	if ((rc = read_job(ctx, run->job)) < 0) {
		pe_release(ctx);
		return rc;
	}
	*ret_state = ctx;
	return 0;
}

/* The toolchain first, then every source. */
static int pe_generate_stage(struct family_run *run, void *state)
{
	struct pe_context *ctx = state;
	int rc;

	if ((rc = family_path(ctx->src, ctx->work, "src")) < 0 || (rc = family_path(ctx->obj, ctx->work, "obj")) < 0 ||
	    (rc = plat_mkdirs(ctx->src)) < 0 || (rc = plat_mkdirs(ctx->obj)) < 0 ||
	    (rc = runner_toolchain_find(ctx->work, &ctx->toolchain)) < 0)
		return rc;
	return pe_generate(ctx);
}

static int pe_build_stage(struct family_run *run, void *state)
{
	struct pe_context *ctx = state;

	return pe_build(ctx, false, ctx->need_trace);
}

/* The runner (phase "runner_start"), the startup trace and the
 * trace-ordered builds when a variant asks for them ("trace"), then the
 * variants' folders. */
static int pe_transform_stage(struct family_run *run, void *state)
{
	struct pe_context *ctx = state;
	int rc;

	if ((rc = runner_start(&ctx->runner, ctx->work, false)) < 0 ||
	    (rc = family_phase_done(run, "runner_start")) < 0)
		return rc;
	if (ctx->need_trace &&
	    ((rc = pe_build_trace_run(ctx)) < 0 || (rc = pe_generate_order(ctx)) < 0 ||
	     (rc = pe_build(ctx, true, false)) < 0 || (rc = family_phase_done(run, "trace")) < 0))
		return rc;
	return pe_transform(ctx);
}

static int pe_verify_stage(struct family_run *run, void *state)
{
	return pe_verify(state);
}

static int pe_timing_stage(struct family_run *run, void *state, struct family_timing *ret)
{
	return pe_timing(state, ret);
}

const struct family pe_family = {
	.name = "pe",
	.validate = pe_validate,
	.generate = pe_generate_stage,
	.build = pe_build_stage,
	.transform = pe_transform_stage,
	.verify = pe_verify_stage,
	.timing = pe_timing_stage,
	.describe = pe_describe,
	.release = pe_release,
};
