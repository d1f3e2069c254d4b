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
#include "family/family_ship.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

/* The variants of JOB (normalized) into CTX. */
static int read_job(void *state, const cJSON *job)
{
	struct elf_context *ctx = state;
	const cJSON *variants, *item, *toolchain;
	size_t v = 0;
	int rc;

	/* The toolchain: the cell's (a matrix key that matches the fact),
	 * else gcc+ld. */
	toolchain = ctx->base.task->cell ? cJSON_GetObjectItemCaseSensitive(ctx->base.task->cell, "toolchain")
					 : NULL;
	if (toolchain && !cJSON_IsString(toolchain))
		return err_set(LL_EINVAL, "The cell's 'toolchain' must be a string.");
	if ((rc = runner_elf_toolchain(toolchain ? toolchain->valuestring : "gcc+ld", &ctx->toolchain)) < 0)
		return rc;

	variants = cJSON_GetObjectItemCaseSensitive(job, "variants");
	ctx->variant_count = (size_t)cJSON_GetArraySize(variants);
	if (!(ctx->variants = calloc(ctx->variant_count ? ctx->variant_count : 1, sizeof(*ctx->variants))))
		return LL_ENOMEM;
	cJSON_ArrayForEach(item, variants) {
		struct elf_variant *var = &ctx->variants[v];
		const char *name, *preset;
		char sub[32];
		/* "preset" when the variant has a name of its own (delay_us). */
		if ((rc = json_get_string(item, "name", JOB_SPEC_MAX_NAME, true, NULL, &name)) < 0 ||
		    (rc = json_get_string(item, "preset", JOB_SPEC_MAX_NAME, false, name, &preset)) < 0 ||
		    (rc = job_spec_elf_preset(preset, &var->knobs)) < 0)
			return rc;
		snprintf(var->base.name, sizeof(var->base.name), "%s", name);
		var->toolchain = ctx->toolchain->kind;
		snprintf(sub, sizeof(sub), "variants/%02zu", v);
		if ((rc = family_path(var->base.dir, ctx->base.work, sub)) < 0)
			return rc;
		ctx->base.need_trace |= var->knobs.trace_order;
		ctx->need_hidden |= var->knobs.hidden;
		v++;
	}
	return 0;
}

/* VARIANT's knobs as the result lists them; NULL when out of memory. */
static cJSON *knobs_json(const void *variant)
{
	const struct elf_variant *var = variant;
	const struct job_spec_elf_knobs *k = &var->knobs;
	cJSON *j = cJSON_CreateObject();

	if (!j || !cJSON_AddStringToObject(j, "bind", k->bind_now ? "now" : "lazy") ||
	    !cJSON_AddStringToObject(j, "relocs", k->relr ? "relr" : "rela") ||
	    !cJSON_AddStringToObject(j, "visibility", k->hidden ? "hidden" : "default") ||
	    !cJSON_AddBoolToObject(j, "symbolic", k->symbolic) ||
	    !cJSON_AddStringToObject(j, "order", k->trace_order ? "trace" : "link") ||
	    !cJSON_AddStringToObject(j, "hash", k->sysv_hash ? "sysv" : "gnu") ||
	    !cJSON_AddStringToObject(j, "toolchain", var->toolchain)) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

/* The variants, the floor, the measurement, the toolchain and the runner
 * of RESULT (schemas/result.json). On success the result owns the
 * variants' verify and files; on failure what is left stays in CTX. */
static int elf_describe(struct family_run *run, void *state, const struct family_measured *measured, cJSON *r)
{
	struct elf_context *ctx = state;
	cJSON *t;
	int rc;

	if (run->task->build_only)
		rc = family_ship_build(r, &ctx->base, &elf_names, ctx->variants, ctx->variant_count,
				       sizeof(*ctx->variants));
	else
		rc = family_describe(r, &ctx->base, ctx->variants, ctx->variant_count, sizeof(*ctx->variants),
				     knobs_json, "empty", ELF_FLOOR_NAME, measured);
	if (rc < 0)
		return rc;
	if (!(t = family_add_toolchain(r, ctx->toolchain->kind, "x86_64-linux-gnu", ctx->cc)) ||
	    !cJSON_AddStringToObject(t, "version", ctx->cc_version) ||
	    !cJSON_AddStringToObject(t, "linker", ctx->toolchain->linker_name) ||
	    (!run->task->build_only && !cJSON_AddStringToObject(r, "runner", "native")))
		return LL_ENOMEM;
	/* Every ELF transform is the linker's, done on the builder. */
	return run->task->build ? family_ship_note(r, run->task->build, "local") : 0;
}

static void elf_release(void *state)
{
	struct elf_context *ctx = state;

	if (!ctx)
		return;
	family_variants_free(ctx->variants, ctx->variant_count, sizeof(*ctx->variants));
	family_context_release(&ctx->base);
	free(ctx);
}

static int elf_validate(const struct family_run *run, void **ret_state)
{
	return family_state_new(run, sizeof(struct elf_context), read_job, elf_release, ret_state);
}

/* The toolchain's compiler and linker from PATH and the compiler's
 * version (gcc's `-dumpfullversion`, clang's `-dumpversion`, through a
 * file in the work folder). */
static int find_compiler(struct elf_context *ctx)
{
	const struct runner_elf_toolchain *t = ctx->toolchain;
	const char *flag = strcmp(t->compiler, "gcc") == 0 ? "-dumpfullversion" : "-dumpversion";
	char path[PLAT_MAX_PATH + 1], linker[PLAT_MAX_PATH];
	const char *argv[] = {ctx->cc, flag, NULL};
	struct plat_spawn_options o = {.argv = argv, .stdout_path = path};
	char *text = NULL;
	size_t len;
	int code = 0, rc;

	if (plat_find_program(t->compiler, ctx->cc, sizeof(ctx->cc)) < 0 ||
	    plat_find_program(t->linker, linker, sizeof(linker)) < 0)
		return err_set(LL_ENOTFOUND, "No %s or no %s in PATH: toolchain %s needs both.", t->compiler,
			       t->linker, t->kind);
	if ((rc = family_path(path, ctx->base.work, "compiler-version.txt")) < 0 ||
	    (rc = plat_run(&o, ELF_RUN_TIMEOUT_MS, &code, NULL)) < 0)
		return rc;
	if (code != 0)
		return err_set(LL_EIO, "%s %s exited with %d.", ctx->cc, flag, code);
	if ((rc = family_read_file(path, 4096, &text, &len)) < 0)
		return rc;
	text[strcspn(text, "\r\n")] = '\0';
	snprintf(ctx->cc_version, sizeof(ctx->cc_version), "%s", text);
	free(text);
	return 0;
}

/* The compiler first, then every source. */
static int elf_generate_stage(struct family_run *run, void *state)
{
	struct elf_context *ctx = state;
	int rc;

	if ((rc = family_context_folders(&ctx->base)) < 0)
		return rc;
	/* A shared build's files: no compiler on this machine. */
	if (run->task->build)
		return family_ship_fetch(&ctx->base, &elf_names, ctx->variants, ctx->variant_count,
					 sizeof(*ctx->variants));
	if ((rc = find_compiler(ctx)) < 0)
		return rc;
	return elf_generate(ctx);
}

/* Every object, and the trace program when a variant is trace-ordered. */
static int elf_build_stage(struct family_run *run, void *state)
{
	if (run->task->build)
		return 0;
	return elf_build_objects(state);
}

/* The startup trace and what trace order needs after it (phase "trace"),
 * when a variant asks for it; then every variant linked. */
static int elf_transform_stage(struct family_run *run, void *state)
{
	struct elf_context *ctx = state;
	int rc;

	if (run->task->build)
		return family_progress(run->task, "transform", 100);
	if (ctx->base.need_trace) {
		if ((rc = elf_build_trace_run(ctx)) < 0)
			return rc;
		if (ctx->toolchain->order_file)
			rc = elf_build_order_files(ctx);
		else if ((rc = elf_generate_order(ctx)) == 0)
			rc = elf_build_order_objects(ctx);
		if (rc < 0 || (rc = family_phase_done(run, "trace")) < 0)
			return rc;
	}
	return elf_build_link(ctx);
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
