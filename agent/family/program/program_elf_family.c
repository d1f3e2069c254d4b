/*
 * program_elf_family.c - the `program` family's entry for ELF programs
 * (program_elf.h): claims the program jobs whose program is ELF, reads
 * the job, runs its stages and describes the result in the program
 * family's shape, with each variant's knobs {bind_now, pagein} and what
 * it changes and cannot show; a job of several builds ("program.builds")
 * runs each variant once per build, and its result names every build's
 * files and digests ("program.builds").
 */
#ifdef __linux__

#include "program_elf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/json.h"

/* What each preset changes, and what it cannot show (docs/program-elf.md). */
static const struct {
	const char *name, *changes, *cannot_show;
} variant_texts[] = {
	{"as-built", "nothing: the program started as it is, bound lazily where its files ask for it",
	 "what a relink would change (function order, -z now, RELR, -Bsymbolic)"},
	{"bind-now", "LD_BIND_NOW=1: the loader resolves every PLT relocation before main, as -z now would",
	 "-z now in the files themselves (which also moves the GOT under RELRO); lookups a program pays "
	 "later through dlopen() stay later"},
	{"pagein",
	 "every file of the program read once, start to end, by the launcher before the program starts "
	 "(the office suite's pagein); the reads are part of the timed start",
	 "reordering (the study's other half needs a relink); files the program opens that its manifest "
	 "does not list (system libraries) are not read first; warm, it costs only reads from memory"},
};

static bool program_elf_claims(const cJSON *job)
{
	return job_spec_program_is_elf(cJSON_GetObjectItemCaseSensitive(job, "program"));
}

/* An ELF variant's knobs (program_read_variants()). */
static int read_knobs(const cJSON *item, struct program_variant *base)
{
	struct program_elf_variant *var = (struct program_elf_variant *)base; /* its first member */
	int rc;

	if ((rc = json_get_bool(item, "bind_now", true, false, &var->bind_now)) < 0 ||
	    (rc = json_get_bool(item, "pagein", true, false, &var->pagein)) < 0)
		return rc;
	return 0;
}

static int read_variants(struct program_elf_context *ctx, const cJSON *job)
{
	void *variants = NULL;
	int rc = program_read_variants(&ctx->base, job, sizeof(*ctx->variants), read_knobs, &variants,
				       &ctx->variant_count);

	ctx->variants = variants;
	return rc;
}

static void program_elf_release(void *state)
{
	struct program_elf_context *ctx = state;

	if (!ctx)
		return;
	for (size_t v = 0; ctx->variants && v < ctx->variant_count; v++) {
		cJSON_Delete(ctx->variants[v].base.notes);
		cJSON_Delete(ctx->variants[v].base.verify);
		cJSON_Delete(ctx->variants[v].base.files);
		cJSON_Delete(ctx->variants[v].faults);
	}
	for (size_t i = 0; i < ctx->timed_count; i++)
		program_elf_start_release(&ctx->timed[i]);
	free(ctx->variants);
	free(ctx->elf_all);
	free(ctx->base.all_files);
	free(ctx->base.args);
	cJSON_Delete(ctx->base.floor_files);
	free(ctx);
}

static int program_elf_validate(const struct family_run *run, void **ret_state)
{
	struct program_elf_context *ctx = calloc(1, sizeof(*ctx));
	const char *until, *drop = getenv(PROGRAM_ELF_TEST_DROP_BIND_NOW);
	int rc;

	if (!ctx)
		return LL_ENOMEM;
	ctx->base.task = run->task;
	snprintf(ctx->base.work, sizeof(ctx->base.work), "%s", run->work);
	ctx->drop_bind_now = drop && strcmp(drop, "1") == 0;
	if ((rc = program_read_section(&ctx->base, run->job)) < 0 ||
	    (rc = json_get_string(cJSON_GetObjectItemCaseSensitive(run->job, "program"), "until", 16, false,
				  "exit", &until)) < 0 ||
	    (rc = read_variants(ctx, run->job)) < 0) {
		program_elf_release(ctx);
		return rc;
	}
	ctx->idle = strcmp(until, "idle") == 0;
	*ret_state = ctx;
	return 0;
}

static int program_elf_generate(struct family_run *run, void *state)
{
	struct program_elf_context *ctx = state;
	int rc = program_fetch(&ctx->base);

	return rc < 0 ? rc : program_elf_read_files(ctx);
}

static int program_elf_build(struct family_run *run, void *state)
{
	return program_elf_tools(state);
}

static int program_elf_transform(struct family_run *run, void *state)
{
	return program_elf_folders(state);
}

static int program_elf_verify_stage(struct family_run *run, void *state)
{
	return program_elf_verify(state);
}

static int program_elf_timing_stage(struct family_run *run, void *state, struct family_timing *ret)
{
	return program_elf_timing(state, ret);
}

/* VAR's knobs and its texts into O. */
static int variant_head(const struct program_elf_variant *var, cJSON *o)
{
	cJSON *k = cJSON_AddObjectToObject(o, "knobs");

	if (!k || !cJSON_AddBoolToObject(k, "bind_now", var->bind_now) ||
	    !cJSON_AddBoolToObject(k, "pagein", var->pagein))
		return LL_ENOMEM;
	for (size_t i = 0; i < sizeof(variant_texts) / sizeof(variant_texts[0]); i++)
		if (strcmp(variant_texts[i].name, var->base.preset) == 0 &&
		    (!cJSON_AddStringToObject(o, "changes", variant_texts[i].changes) ||
		     !cJSON_AddStringToObject(o, "cannot_show", variant_texts[i].cannot_show)))
			return LL_ENOMEM;
	return 0;
}

/* Build B's manifest files and their digests as [{"path", "sha256"}]
 * into O's "files", and what libelf read of them as its "elf". */
static int build_files(struct program_elf_context *ctx, size_t b, cJSON *o)
{
	const struct program_build *build = &ctx->base.builds[b];
	cJSON *files = cJSON_AddArrayToObject(o, "files"), *elf;

	if (!files)
		return LL_ENOMEM;
	for (size_t i = 0; i < build->file_count; i++) {
		char sha[80];
		cJSON *f = json_array_add_object(files);
		snprintf(sha, sizeof(sha), "sha256:%s", build->files[i].sha256);
		if (!f || !cJSON_AddStringToObject(f, "path", build->files[i].path) ||
		    !cJSON_AddStringToObject(f, "sha256", sha))
			return LL_ENOMEM;
	}
	program_elf_use_build(ctx, b);
	elf = program_elf_files_json(ctx);
	program_elf_use_build(ctx, 0);
	if (!elf || !cJSON_AddItemToObject(o, "elf", elf)) {
		cJSON_Delete(elf);
		return LL_ENOMEM;
	}
	return 0;
}

/* A job of several builds: "builds": [{"label", "exe", "file_count",
 * "files": [{"path", "sha256"}], "elf": [...]}], the compare's changed
 * files (report_ab.c) named from the same manifests. */
static int builds_section(struct program_elf_context *ctx, cJSON *p)
{
	cJSON *list = cJSON_AddArrayToObject(p, "builds");

	for (size_t b = 0; list && b < ctx->base.build_count; b++) {
		const struct program_build *build = &ctx->base.builds[b];
		cJSON *o = json_array_add_object(list);
		if (!o || !cJSON_AddStringToObject(o, "label", build->label) ||
		    !cJSON_AddStringToObject(o, "exe", build->files[build->exe].path) ||
		    !cJSON_AddNumberToObject(o, "file_count", (double)build->file_count) ||
		    build_files(ctx, b, o) < 0)
			return LL_ENOMEM;
	}
	return list ? 0 : LL_ENOMEM;
}

static int program_section(struct program_elf_context *ctx, cJSON *r)
{
	cJSON *p, *cache, *files;

	program_elf_use_build(ctx, 0); /* "exe" and "elf": the (base) build's */
	p = cJSON_AddObjectToObject(r, "program");
	files = program_elf_files_json(ctx);

	if (!p || !files || !cJSON_AddItemToObject(p, "elf", files)) {
		cJSON_Delete(files);
		return LL_ENOMEM;
	}
	if (!cJSON_AddStringToObject(p, "exe", ctx->base.files[ctx->base.exe].path) ||
	    !cJSON_AddStringToObject(p, "format", "elf") ||
	    !cJSON_AddStringToObject(p, "until", ctx->idle ? "idle" : "exit") ||
	    (ctx->idle && !cJSON_AddNumberToObject(p, "idle_ms", PROGRAM_ELF_IDLE_MS)) ||
	    !cJSON_AddNumberToObject(p, "file_count", (double)ctx->base.all_file_count) ||
	    !(cache = cJSON_AddObjectToObject(p, "blob_cache")) ||
	    !cJSON_AddNumberToObject(cache, "cached", (double)ctx->base.blobs_cached) ||
	    !cJSON_AddNumberToObject(cache, "fetched", (double)ctx->base.blobs_fetched) ||
	    !cJSON_AddNumberToObject(cache, "bytes_fetched", (double)ctx->base.bytes_fetched))
		return LL_ENOMEM;
	if (ctx->base.build_count > 1 && builds_section(ctx, p) < 0)
		return LL_ENOMEM;
	if (ctx->drop_bind_now && !cJSON_AddStringToObject(p, "test_note",
							   PROGRAM_ELF_TEST_DROP_BIND_NOW
							   "=1 in the agent's environment: bind-now ran "
							   "without LD_BIND_NOW (a test of verification)."))
		return LL_ENOMEM;
	return 0;
}

static int program_elf_describe(struct family_run *run, void *state, const struct family_measured *measured,
				cJSON *r)
{
	struct program_elf_context *ctx = state;
	cJSON *variants = cJSON_AddArrayToObject(r, "variants"), *floor;

	if (!variants)
		return LL_ENOMEM;
	for (size_t v = 0; v < ctx->variant_count; v++) {
		struct program_elf_variant *var = &ctx->variants[v];
		cJSON *o = json_array_add_object(variants);
		if (!o || !cJSON_AddStringToObject(o, "name", var->base.name) || variant_head(var, o) < 0 ||
		    !cJSON_AddBoolToObject(o, "valid", var->base.valid) ||
		    (!var->base.valid &&
		     !cJSON_AddStringToObject(o, "invalid_reason", var->base.invalid_reason)))
			return LL_ENOMEM;
		if (ctx->base.build_count > 1 &&
		    (!cJSON_AddStringToObject(o, "build", ctx->base.builds[var->base.build].label) ||
		     !cJSON_AddStringToObject(o, "preset", var->base.preset)))
			return LL_ENOMEM;
		if (json_move_to_object(o, "notes", &var->base.notes) < 0 ||
		    json_move_to_object(o, "verify", &var->base.verify) < 0 ||
		    json_move_to_object(o, "files", &var->base.files) < 0)
			return LL_ENOMEM;
		if (var->faults &&
		    !cJSON_AddItemToObject(o, "major_faults", cJSON_Duplicate(var->faults, true)))
			return LL_ENOMEM;
		if (var->base.valid && (family_add_measured(o, "warm", measured->warm, var->base.name) < 0 ||
					family_add_measured(o, "cold", measured->cold, var->base.name) < 0 ||
					program_elf_faults_merge(ctx, var, o) < 0))
			return LL_ENOMEM;
	}
	if (!(floor = cJSON_AddObjectToObject(r, "floor")) ||
	    !cJSON_AddStringToObject(floor, "name", "elf_empty") ||
	    json_move_to_object(floor, "files", &ctx->base.floor_files) < 0 ||
	    family_add_measured(floor, "warm", measured->warm, PROGRAM_FLOOR_NAME) < 0 ||
	    family_add_measured(floor, "cold", measured->cold, PROGRAM_FLOOR_NAME) < 0 ||
	    family_add_measurement(r, measured) < 0 || program_section(ctx, r) < 0 ||
	    program_helpers_json(&ctx->base, "the loader probe (LD_AUDIT), the launcher and the floor",
				 "shipped inside the agent, built with it by its own compiler", r) < 0 ||
	    !cJSON_AddStringToObject(r, "runner", "native"))
		return LL_ENOMEM;
	return 0;
}

const struct family program_elf_family = {
	.name = "program",
	.claims = program_elf_claims,
	.validate = program_elf_validate,
	.generate = program_elf_generate,
	.build = program_elf_build,
	.transform = program_elf_transform,
	.verify = program_elf_verify_stage,
	.timing = program_elf_timing_stage,
	.describe = program_elf_describe,
	.release = program_elf_release,
};

#endif /* __linux__ */
