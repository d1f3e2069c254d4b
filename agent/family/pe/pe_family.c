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

#include "family/family_ship.h"
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
	int rc = family_path(set->dir, ctx->base.work, sub);
	if (rc < 0)
		return rc;
	var->link_set = ctx->set_count++;
	return 0;
}

/* The generator's pe-only knobs of JOB (normalized) into CTX->knobs. */
static int read_knobs(struct pe_context *ctx, const cJSON *job)
{
	const cJSON *gen = cJSON_GetObjectItemCaseSensitive(job, "generator");
	const cJSON *share = cJSON_GetObjectItemCaseSensitive(gen, "startup_share");
	const char *main_mode;
	long long bytes, align;
	int rc;

	if ((rc = json_get_int(gen, "function_bytes", 0, JOB_SPEC_MAX_FUNCTION_BYTES, false, 0, &bytes)) <
		    0 ||
	    (rc = json_get_int(gen, "file_alignment", 0, 4096, false, 0, &align)) < 0 ||
	    (rc = json_get_bool(gen, "crt", false, false, &ctx->knobs.crt)) < 0 ||
	    (rc = json_get_bool(gen, "strip_debug", false, false, &ctx->knobs.strip_debug)) < 0 ||
	    (rc = json_get_string(gen, "main", 16, false, "reference", &main_mode)) < 0)
		return rc;
	if (share && (!cJSON_IsNumber(share) || !(share->valuedouble >= JOB_SPEC_MIN_STARTUP_SHARE) ||
		      !(share->valuedouble <= 1)))
		return err_set(LL_ERANGE, "Field 'startup_share' must be a number %g..1.",
			       JOB_SPEC_MIN_STARTUP_SHARE);
	ctx->knobs.function_bytes = (int)bytes;
	ctx->knobs.file_alignment = (int)align;
	ctx->knobs.startup_share = share ? share->valuedouble : 0;
	ctx->knobs.main_startup = strcmp(main_mode, "startup") == 0;
	return 0;
}

/* The variants of JOB (normalized) into CTX. */
static int read_job(void *state, const cJSON *job)
{
	struct pe_context *ctx = state;
	const cJSON *variants, *item;
	int rc;

	if ((rc = read_knobs(ctx, job)) < 0)
		return rc;
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
		snprintf(var->base.name, sizeof(var->base.name), "%s", name);
		snprintf(var->bases, sizeof(var->bases), "%s", bases);
		var->bind = bind;
		var->ordinal = strcmp(imports, "ordinal") == 0;
		var->trace_order = strcmp(order, "trace") == 0;
		ctx->base.need_trace |= var->trace_order;
		if ((rc = choose_set(ctx, var)) < 0)
			return rc;
	}
	return 0;
}

/* VAR's knobs as the result lists them; NULL when out of memory. */
static cJSON *knobs_json(const void *variant)
{
	const struct pe_variant *var = variant;
	cJSON *k = cJSON_CreateObject();
	if (!k || !cJSON_AddStringToObject(k, "bases", var->bases) ||
	    !cJSON_AddBoolToObject(k, "bind", var->bind) ||
	    !cJSON_AddStringToObject(k, "imports", var->ordinal ? "ordinal" : "name") ||
	    !cJSON_AddStringToObject(k, "order", var->trace_order ? "trace" : "link")) {
		cJSON_Delete(k);
		return NULL;
	}
	return k;
}

/* RESULT's "build": how the DLLs were built (docs/pe-pipeline.md, "The
 * build record"). Wine maps a DLL's sections from its file only when their
 * file offsets are page aligned; otherwise it reads each section whole. */
static int build_json(const struct pe_context *ctx, cJSON *r)
{
	int align = ctx->knobs.file_alignment ? ctx->knobs.file_alignment : PE_LINKER_FILE_ALIGNMENT;
	cJSON *b = cJSON_AddObjectToObject(r, "build");

	if (!b || !cJSON_AddNumberToObject(b, "file_alignment", align) ||
	    !cJSON_AddStringToObject(b, "wine_dll_sections", align >= 4096 ? "mapped" : "read") ||
	    !cJSON_AddBoolToObject(b, "crt", ctx->knobs.crt) ||
	    !cJSON_AddBoolToObject(b, "strip_debug", ctx->knobs.strip_debug) ||
	    !cJSON_AddNumberToObject(b, "function_bytes", ctx->knobs.function_bytes) ||
	    !cJSON_AddStringToObject(b, "timed_path",
				     ctx->knobs.main_startup ? "startup"
				     : ctx->base.main_call   ? "all"
							     : "none"))
		return LL_ENOMEM;
	if (ctx->knobs.startup_share > 0 &&
	    !cJSON_AddNumberToObject(b, "startup_share", ctx->knobs.startup_share))
		return LL_ENOMEM;
	return 0;
}

/* RESULT's "toolchain": mingw-w64's target, compiler and version. */
static bool add_toolchain(const struct pe_context *ctx, cJSON *r)
{
	cJSON *t = family_add_toolchain(r, "mingw-w64", ctx->toolchain.target, ctx->toolchain.gcc);

	return t && cJSON_AddStringToObject(t, "version", ctx->toolchain.version);
}

/* The variants, the floor, the measurement, the toolchain and the runner
 * of RESULT (schemas/result.json). On success the result owns the
 * variants' verify and files; on failure they stay in CTX. */
static int pe_describe(struct family_run *run, void *state, const struct family_measured *measured, cJSON *r)
{
	struct pe_context *ctx = state;
	int rc;

	if (run->task->build_only) {
		if ((rc = family_ship_build(r, &ctx->base, &pe_names, ctx->variants, ctx->variant_count,
					    sizeof(*ctx->variants))) < 0)
			return rc;
		if (!add_toolchain(ctx, r))
			return LL_ENOMEM;
		return build_json(ctx, r);
	}
	if ((rc = family_describe(r, &ctx->base, ctx->variants, ctx->variant_count, sizeof(*ctx->variants),
				  knobs_json, "empty.exe", PE_FLOOR_NAME, measured)) < 0)
		return rc;
	/* Each variant's loader work (pe_loader.c), in variant order. */
	for (size_t v = 0; v < ctx->variant_count; v++) {
		cJSON *item = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "variants"), (int)v);
		if (!ctx->variants[v].loader || !item)
			continue;
		if (!cJSON_AddItemToObject(item, "loader", ctx->variants[v].loader))
			return LL_ENOMEM;
		ctx->variants[v].loader = NULL;
	}
	if (!add_toolchain(ctx, r) ||
	    !cJSON_AddStringToObject(r, "runner", ctx->runner.wine ? "wine" : "native"))
		return LL_ENOMEM;
	if (run->task->build && (rc = family_ship_note(r, run->task->build, "bind")) < 0)
		return rc;
	return build_json(ctx, r);
}

static void pe_release(void *state)
{
	struct pe_context *ctx = state;

	if (!ctx)
		return;
	for (size_t v = 0; ctx->variants && v < ctx->variant_count; v++)
		cJSON_Delete(ctx->variants[v].loader);
	family_variants_free(ctx->variants, ctx->variant_count, sizeof(*ctx->variants));
	family_context_release(&ctx->base);
	for (size_t i = 0; ctx->churn_libs[i]; i++)
		free(ctx->churn_libs[i]);
	runner_stop(&ctx->runner);
	free(ctx);
}

static int pe_validate(const struct family_run *run, void **ret_state)
{
	return family_state_new(run, sizeof(struct pe_context), read_job, pe_release, ret_state);
}

/* The compiler a build task names (its target's "toolchain"), or NULL. */
static const char *build_toolchain(const struct pipeline_task *task)
{
	const cJSON *toolchain = cJSON_GetObjectItemCaseSensitive(task->cell, "toolchain");

	return task->build_only && cJSON_IsString(toolchain) ? toolchain->valuestring : NULL;
}

/* The toolchain first, then every source; a shared build's files instead. */
static int pe_generate_stage(struct family_run *run, void *state)
{
	struct pe_context *ctx = state;
	int rc;

	if ((rc = family_context_folders(&ctx->base)) < 0)
		return rc;
	/* A shared build's files: no compiler on this machine. */
	if (run->task->build)
		return family_ship_fetch(&ctx->base, &pe_names, ctx->variants, ctx->variant_count,
					 sizeof(*ctx->variants));
	if ((rc = runner_toolchain_find_named(ctx->base.work, build_toolchain(run->task), &ctx->toolchain)) <
	    0)
		return rc;
	return pe_generate(ctx);
}

static int pe_build_stage(struct family_run *run, void *state)
{
	struct pe_context *ctx = state;

	if (run->task->build)
		return 0;
	return pe_build(ctx, false, ctx->base.need_trace);
}

/* The runner (phase "runner_start"), the startup trace and the
 * trace-ordered builds when a variant asks for them ("trace"), then the
 * variants' folders. */
static int pe_transform_stage(struct family_run *run, void *state)
{
	struct pe_context *ctx = state;
	int rc;

	if ((rc = runner_start(&ctx->runner, ctx->base.work, false)) < 0 ||
	    (rc = family_phase_done(run, "runner_start")) < 0)
		return rc;
	/* Binding is this machine's (its system DLLs): never the builder's. */
	if (run->task->build)
		return pe_transform_bind(ctx);
	if (ctx->base.need_trace &&
	    ((rc = pe_build_trace_run(ctx)) < 0 || (rc = pe_generate_order(ctx)) < 0 ||
	     (rc = pe_build(ctx, true, false)) < 0 || (rc = family_phase_done(run, "trace")) < 0))
		return rc;
	return pe_transform(ctx, !run->task->build_only);
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
