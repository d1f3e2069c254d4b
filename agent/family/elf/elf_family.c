/*
 * elf_family.c - the `elf` family behind family.h: reads the job's
 * generator and variants (each an elf preset, job_spec_elf_preset()),
 * runs its stages (elf_generate.c, elf_build.c, elf_verify.c), gives the
 * driver what to time (elf_measure.c) and describes the result in the
 * pe family's shape (variants[].warm/cold, floor), so the daemon's
 * reports read both alike.
 */
#ifdef __linux__

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_family.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

/* The generator and the variants of JOB (normalized) into CTX. */
static int read_job(struct elf_context *ctx, const cJSON *job)
{
	const cJSON *gen = cJSON_GetObjectItemCaseSensitive(job, "generator"), *variants, *item;
	const char *main_mode;
	long long value;
	size_t v = 0;
	int rc;

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
	if (!(ctx->variants = calloc(ctx->variant_count ? ctx->variant_count : 1, sizeof(*ctx->variants))))
		return LL_ENOMEM;
	cJSON_ArrayForEach(item, variants) {
		struct elf_variant *var = &ctx->variants[v];
		const char *name;
		char sub[32];
		if ((rc = json_get_string(item, "name", JOB_SPEC_MAX_NAME, true, NULL, &name)) < 0 ||
		    (rc = job_spec_elf_preset(name, &var->knobs)) < 0)
			return rc;
		snprintf(var->name, sizeof(var->name), "%s", name);
		snprintf(sub, sizeof(sub), "variants/%02zu", v);
		if ((rc = family_path(var->dir, ctx->work, sub)) < 0)
			return rc;
		ctx->need_trace |= var->knobs.trace_order;
		ctx->need_hidden |= var->knobs.hidden;
		v++;
	}
	return 0;
}

static int knobs_json(const struct job_spec_elf_knobs *k, cJSON *o)
{
	cJSON *j = cJSON_AddObjectToObject(o, "knobs");

	if (!j || !cJSON_AddStringToObject(j, "bind", k->bind_now ? "now" : "lazy") ||
	    !cJSON_AddStringToObject(j, "relocs", k->relr ? "relr" : "rela") ||
	    !cJSON_AddStringToObject(j, "visibility", k->hidden ? "hidden" : "default") ||
	    !cJSON_AddBoolToObject(j, "symbolic", k->symbolic) ||
	    !cJSON_AddStringToObject(j, "order", k->trace_order ? "trace" : "link") ||
	    !cJSON_AddStringToObject(j, "hash", k->sysv_hash ? "sysv" : "gnu") ||
	    !cJSON_AddStringToObject(j, "toolchain", "gcc+ld"))
		return LL_ENOMEM;
	return 0;
}

/* The variants, the floor, the measurement, the toolchain and the runner
 * of RESULT (schemas/result.json). On success the result owns the
 * variants' verify and files; on failure what is left stays in CTX. */
static int elf_describe(struct family_run *run, void *state, const struct family_measured *measured, cJSON *r)
{
	struct elf_context *ctx = state;
	cJSON *variants, *t, *floor;

	(void)run;
	if (!(variants = cJSON_AddArrayToObject(r, "variants")))
		return LL_ENOMEM;
	for (size_t v = 0; v < ctx->variant_count; v++) {
		struct elf_variant *var = &ctx->variants[v];
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(variants, o)) {
			cJSON_Delete(o);
			return LL_ENOMEM;
		}
		if (!cJSON_AddStringToObject(o, "name", var->name) || knobs_json(&var->knobs, o) < 0 ||
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
	if (!(floor = cJSON_AddObjectToObject(r, "floor")) || !cJSON_AddStringToObject(floor, "name", "empty"))
		return LL_ENOMEM;
	if (ctx->floor_files) {
		if (!cJSON_AddItemToObject(floor, "files", ctx->floor_files))
			return LL_ENOMEM;
		ctx->floor_files = NULL;
	}
	if (family_add_measured(floor, "warm", measured->warm, ELF_FLOOR_NAME) < 0 ||
	    family_add_measured(floor, "cold", measured->cold, ELF_FLOOR_NAME) < 0 ||
	    family_add_measurement(r, measured) < 0)
		return LL_ENOMEM;
	if (!(t = cJSON_AddObjectToObject(r, "toolchain")) || !cJSON_AddStringToObject(t, "kind", "gcc+ld") ||
	    !cJSON_AddStringToObject(t, "target", "x86_64-linux-gnu") ||
	    !cJSON_AddStringToObject(t, "compiler", ctx->gcc) ||
	    !cJSON_AddStringToObject(t, "version", ctx->gcc_version) ||
	    !cJSON_AddStringToObject(t, "linker", "GNU ld") || !cJSON_AddStringToObject(r, "runner", "native"))
		return LL_ENOMEM;
	return 0;
}

static void elf_release(void *state)
{
	struct elf_context *ctx = state;

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
	free(ctx);
}

static int elf_validate(const struct family_run *run, void **ret_state)
{
	struct elf_context *ctx = calloc(1, sizeof(*ctx));
	int rc;

	if (!ctx)
		return LL_ENOMEM;
	ctx->task = run->task;
	snprintf(ctx->work, sizeof(ctx->work), "%s", run->work);
	if ((rc = read_job(ctx, run->job)) < 0) {
		elf_release(ctx);
		return rc;
	}
	*ret_state = ctx;
	return 0;
}

/* gcc from PATH and its version (`gcc -dumpfullversion`, through a file
 * in the work folder). */
static int find_compiler(struct elf_context *ctx)
{
	char path[PLAT_MAX_PATH + 1];
	const char *argv[] = {ctx->gcc, "-dumpfullversion", NULL};
	struct plat_spawn_options o = {.argv = argv, .stdout_path = path};
	char *text = NULL;
	size_t len;
	int code = 0, rc;

	if (plat_find_program("gcc", ctx->gcc, sizeof(ctx->gcc)) < 0)
		return err_set(LL_ENOTFOUND, "No gcc in PATH: the elf family builds with gcc and GNU ld.");
	if ((rc = family_path(path, ctx->work, "gcc-version.txt")) < 0 ||
	    (rc = plat_run(&o, ELF_RUN_TIMEOUT_MS, &code, NULL)) < 0)
		return rc;
	if (code != 0)
		return err_set(LL_EIO, "%s -dumpfullversion exited with %d.", ctx->gcc, code);
	if ((rc = family_read_file(path, 4096, &text, &len)) < 0)
		return rc;
	text[strcspn(text, "\r\n")] = '\0';
	snprintf(ctx->gcc_version, sizeof(ctx->gcc_version), "%s", text);
	free(text);
	return 0;
}

/* The compiler first, then every source. */
static int elf_generate_stage(struct family_run *run, void *state)
{
	struct elf_context *ctx = state;
	int rc;

	(void)run;
	if ((rc = family_path(ctx->src, ctx->work, "src")) < 0 || (rc = family_path(ctx->obj, ctx->work, "obj")) < 0 ||
	    (rc = plat_mkdirs(ctx->src)) < 0 || (rc = plat_mkdirs(ctx->obj)) < 0 || (rc = find_compiler(ctx)) < 0)
		return rc;
	return elf_generate(ctx);
}

static int elf_build_stage(struct family_run *run, void *state)
{
	(void)run;
	return elf_build(state, false);
}

/* The startup trace and the trace-ordered builds, when a variant asks for
 * them (phase "trace"). */
static int elf_transform_stage(struct family_run *run, void *state)
{
	struct elf_context *ctx = state;
	int rc;

	if (!ctx->need_trace)
		return 0;
	if ((rc = elf_build_trace_run(ctx)) < 0 || (rc = elf_generate_order(ctx)) < 0 ||
	    (rc = elf_build(ctx, true)) < 0)
		return rc;
	return family_phase_done(run, "trace");
}

static int elf_verify_stage(struct family_run *run, void *state)
{
	(void)run;
	return elf_verify(state);
}

static int elf_timing_stage(struct family_run *run, void *state, struct family_timing *ret)
{
	(void)run;
	return elf_timing(state, ret);
}

const struct family elf_family = {
	.name = "elf",
	.validate = elf_validate,
	.generate = elf_generate_stage,
	.build = elf_build_stage,
	.transform = elf_transform_stage,
	.verify = elf_verify_stage,
	.timing = elf_timing_stage,
	.describe = elf_describe,
	.release = elf_release,
};

#endif /* __linux__ */
