/*
 * program_family.c - the `program` family behind family.h: reads the
 * job's program section and variants, runs its stages (program_fetch.c,
 * program_transform.c, program_verify.c) under the runner
 * (runner/runner.h), gives the driver what to time (program_measure.c)
 * and describes the result in the pe family's shape.
 */
#include "program_family.h"
#include "program_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"

/* One build's files and exe from SECTION (job_spec_program_build()) into
 * B, its files at FILES (room for the section's count). */
static int read_build(const cJSON *section, struct program_file *files, struct program_build *b)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(section, "files"), *item;
	const char *exe;
	size_t i = 0;
	int rc;

	if ((rc = json_get_string(section, "exe", JOB_SPEC_MAX_PROGRAM_PATH, true, NULL, &exe)) < 0)
		return rc;
	b->files = files;
	b->file_count = (size_t)cJSON_GetArraySize(list);
	b->exe = b->file_count;
	cJSON_ArrayForEach(item, list) {
		struct program_file *f = &files[i];
		/* The job was normalized on this side too; checked again here
		 * because these paths become files below the work folder. */
		if (!item->string || (rc = job_spec_program_path_check(item->string, NULL)) < 0)
			return item->string ? rc : err_set(LL_EINVAL, "A program file has no path.");
		if (!cJSON_IsString(item) || !job_spec_blob_ref_valid(item->valuestring, f->sha256))
			return err_set(LL_EINVAL, "The program file %s names no sha256 blob.", item->string);
		memcpy(f->path, item->string, strlen(item->string) + 1);
		if (strcmp(f->path, exe) == 0)
			b->exe = i;
		i++;
	}
	if (b->exe == b->file_count)
		return err_set(LL_EINVAL, "The program's exe %s is not one of its files.", exe);
	return 0;
}

/* The program section (files and exe, or builds; args, until, timeout_s)
 * of JOB. */
int program_read_section(struct program_context *ctx, const cJSON *job)
{
	const cJSON *program = cJSON_GetObjectItemCaseSensitive(job, "program");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(program, "args"), *item, *section;
	const char *until, *label;
	size_t n = 0, total = 0;
	int rc;

	if ((rc = json_get_string(program, "until", 16, false, "exit", &until)) < 0 ||
	    (rc = json_get_int(program, "timeout_s", 1, JOB_SPEC_MAX_PROGRAM_TIMEOUT, false, 60,
			       &ctx->timeout_s)) < 0)
		return rc;
	ctx->input_idle = strcmp(until, "input-idle") == 0;
	for (; (section = job_spec_program_build(program, (int)n, NULL)); n++) {
		const cJSON *files = cJSON_GetObjectItemCaseSensitive(section, "files");
		if (n == JOB_SPEC_MAX_PROGRAM_BUILDS)
			return err_set(LL_EINVAL, "The program has more than %d builds.",
				       JOB_SPEC_MAX_PROGRAM_BUILDS);
		if (!cJSON_IsObject(files) || cJSON_GetArraySize(files) < 1 ||
		    cJSON_GetArraySize(files) > JOB_SPEC_MAX_PROGRAM_FILES)
			return err_set(LL_EINVAL, "The program's files are missing or too many.");
		total += (size_t)cJSON_GetArraySize(files);
	}
	if (n == 0)
		return err_set(LL_EINVAL, "The job has no program section.");
	if (!(ctx->all_files = calloc(total, sizeof(*ctx->all_files))))
		return LL_ENOMEM;
	ctx->all_file_count = total;
	ctx->build_count = n;
	total = 0;
	for (size_t b = 0; b < n; b++) {
		section = job_spec_program_build(program, (int)b, &label);
		snprintf(ctx->builds[b].label, sizeof(ctx->builds[b].label), "%s", label ? label : "");
		if ((rc = read_build(section, ctx->all_files + total, &ctx->builds[b])) < 0)
			return rc;
		total += ctx->builds[b].file_count;
	}
	program_use_build(ctx, 0);
	ctx->arg_count = (size_t)cJSON_GetArraySize(args);
	if (ctx->arg_count > JOB_SPEC_MAX_PROGRAM_ARGS)
		return err_set(LL_EINVAL, "The program has too many arguments.");
	if (!(ctx->args = calloc(ctx->arg_count + 1, sizeof(*ctx->args))))
		return LL_ENOMEM;
	size_t i = 0;
	cJSON_ArrayForEach(item, args) {
		if (!cJSON_IsString(item))
			return err_set(LL_EINVAL, "The program's arguments must be strings.");
		ctx->args[i++] = item->valuestring;
	}
	return 0;
}

/* A PE variant's knobs (program_read_variants()). */
static int read_knobs(const cJSON *item, struct program_variant *var)
{
	const char *bases, *aslr;
	int rc;

	if ((rc = json_get_string(item, "bases", 15, true, NULL, &bases)) < 0 ||
	    (rc = json_get_bool(item, "bind", true, false, &var->bind)) < 0 ||
	    (rc = json_get_string(item, "aslr", 15, true, NULL, &aslr)) < 0)
		return rc;
	var->unique_bases = strcmp(bases, "unique") == 0;
	var->aslr_off = strcmp(aslr, "off") == 0;
	return 0;
}

static int read_variants(struct program_context *ctx, const cJSON *job)
{
	void *variants = NULL;
	int rc = program_read_variants(ctx, job, sizeof(*ctx->variants), read_knobs, &variants,
				       &ctx->variant_count);

	ctx->variants = variants;
	return rc;
}

static int knobs_json(const struct program_variant *var, cJSON *o)
{
	cJSON *k = cJSON_AddObjectToObject(o, "knobs");

	if (!k || !cJSON_AddStringToObject(k, "bases", var->unique_bases ? "unique" : "as-built") ||
	    !cJSON_AddBoolToObject(k, "bind", var->bind) ||
	    !cJSON_AddStringToObject(k, "aslr", var->aslr_off ? "off" : "as-built"))
		return LL_ENOMEM;
	return 0;
}

/* An A/B job's builds as "builds": [{"label", "exe", "file_count"}]. */
static int builds_json(const struct program_context *ctx, cJSON *p)
{
	cJSON *list = cJSON_AddArrayToObject(p, "builds");

	for (size_t b = 0; list && b < ctx->build_count; b++) {
		const struct program_build *build = &ctx->builds[b];
		cJSON *o = json_array_add_object(list);
		if (!o || !cJSON_AddStringToObject(o, "label", build->label) ||
		    !cJSON_AddStringToObject(o, "exe", build->files[build->exe].path) ||
		    !cJSON_AddNumberToObject(o, "file_count", (double)build->file_count))
			return LL_ENOMEM;
	}
	return list ? 0 : LL_ENOMEM;
}

static int program_json(const struct program_context *ctx, cJSON *r)
{
	cJSON *p = cJSON_AddObjectToObject(r, "program"), *cache;

	const struct program_build *base = &ctx->builds[0];

	if (!p || !cJSON_AddStringToObject(p, "exe", base->files[base->exe].path) ||
	    !cJSON_AddStringToObject(p, "until", ctx->input_idle ? "input-idle" : "exit") ||
	    !cJSON_AddNumberToObject(p, "file_count", (double)ctx->all_file_count) ||
	    !(cache = cJSON_AddObjectToObject(p, "blob_cache")) ||
	    !cJSON_AddNumberToObject(cache, "cached", (double)ctx->blobs_cached) ||
	    !cJSON_AddNumberToObject(cache, "fetched", (double)ctx->blobs_fetched) ||
	    !cJSON_AddNumberToObject(cache, "bytes_fetched", (double)ctx->bytes_fetched))
		return LL_ENOMEM;
	if (ctx->build_count > 1 && builds_json(ctx, p) < 0)
		return LL_ENOMEM;
	if (ctx->dll_overrides) {
		cJSON *copy = cJSON_Duplicate(ctx->dll_overrides, true);
		if (!copy || !cJSON_AddItemToObject(p, "dll_overrides", copy)) {
			cJSON_Delete(copy);
			return LL_ENOMEM;
		}
	}
	/* docs/program-family.md, "What Wine cannot show". */
	if (ctx->input_idle && ctx->runner.wine &&
	    !cJSON_AddStringToObject(p, "until_note",
				     "Under Wine, input-idle is Wine's WaitForInputIdle on the null display "
				     "driver: comparable only between runs on one runner, and a program that "
				     "exits before it is idle fails the run with its own exit code."))
		return LL_ENOMEM;
	return 0;
}

/* The variants, the floor, the measurement and the runner of RESULT
 * (schemas/result.json), as the pe family gives them, "program": what was
 * run and what the blob cache did, and "helpers" (program_helpers_json()). */
static int program_describe(struct family_run *run, void *state, const struct family_measured *measured,
			    cJSON *r)
{
	struct program_context *ctx = state;
	cJSON *variants, *floor;

	if (!(variants = cJSON_AddArrayToObject(r, "variants")))
		return LL_ENOMEM;
	for (size_t v = 0; v < ctx->variant_count; v++) {
		struct program_variant *var = &ctx->variants[v];
		cJSON *o = json_array_add_object(variants);
		if (!o || !cJSON_AddStringToObject(o, "name", var->name) || knobs_json(var, o) < 0 ||
		    !cJSON_AddBoolToObject(o, "valid", var->valid))
			return LL_ENOMEM;
		if (!var->valid && !cJSON_AddStringToObject(o, "invalid_reason", var->invalid_reason))
			return LL_ENOMEM;
		if (ctx->build_count > 1 &&
		    (!cJSON_AddStringToObject(o, "build", ctx->builds[var->build].label) ||
		     !cJSON_AddStringToObject(o, "preset", var->preset)))
			return LL_ENOMEM;
		if (json_move_to_object(o, "notes", &var->notes) < 0 ||
		    json_move_to_object(o, "transform", &var->transform) < 0 ||
		    json_move_to_object(o, "verify", &var->verify) < 0 ||
		    json_move_to_object(o, "files", &var->files) < 0 ||
		    json_move_to_object(o, "loader", &var->loader) < 0)
			return LL_ENOMEM;
		if (var->valid && (family_add_measured(o, "warm", measured->warm, var->name) < 0 ||
				   family_add_measured(o, "cold", measured->cold, var->name) < 0))
			return LL_ENOMEM;
	}
	if (!(floor = cJSON_AddObjectToObject(r, "floor")) ||
	    !cJSON_AddStringToObject(floor, "name", "empty.exe") ||
	    json_move_to_object(floor, "files", &ctx->floor_files) < 0)
		return LL_ENOMEM;
	if (family_add_measured(floor, "warm", measured->warm, PROGRAM_FLOOR_NAME) < 0 ||
	    family_add_measured(floor, "cold", measured->cold, PROGRAM_FLOOR_NAME) < 0 ||
	    family_add_measurement(r, measured) < 0 || program_json(ctx, r) < 0)
		return LL_ENOMEM;
	if (program_helpers_json(ctx, "the debug probe, the input-idle launcher and the floor",
				 "shipped inside the agent, built with it by mingw-w64", r) < 0 ||
	    !cJSON_AddStringToObject(r, "runner", ctx->runner.wine ? "wine" : "native"))
		return LL_ENOMEM;
	return 0;
}

static void program_release(void *state)
{
	struct program_context *ctx = state;

	if (!ctx)
		return;
	for (size_t v = 0; ctx->variants && v < ctx->variant_count; v++) {
		cJSON_Delete(ctx->variants[v].notes);
		cJSON_Delete(ctx->variants[v].transform);
		cJSON_Delete(ctx->variants[v].verify);
		cJSON_Delete(ctx->variants[v].loader);
		cJSON_Delete(ctx->variants[v].files);
	}
	free(ctx->variants);
	free(ctx->all_files);
	free(ctx->args);
	cJSON_Delete(ctx->floor_files);
	cJSON_Delete(ctx->dll_overrides);
	for (size_t i = 0; i < ctx->measured_count; i++) {
		family_strings_free(ctx->measured[i].strings);
		family_strings_free(ctx->measured[i].files);
		free(ctx->measured[i].argv);
	}
	if (ctx->runner_started)
		runner_stop(&ctx->runner);
	free(ctx);
}

static int program_validate(const struct family_run *run, void **ret_state)
{
	struct program_context *ctx = calloc(1, sizeof(*ctx));
	int rc;

	if (!ctx)
		return LL_ENOMEM;
	ctx->task = run->task;
	snprintf(ctx->work, sizeof(ctx->work), "%s", run->work);
	if ((rc = program_read_section(ctx, run->job)) < 0 || (rc = read_variants(ctx, run->job)) < 0) {
		program_release(ctx);
		return rc;
	}
	*ret_state = ctx;
	return 0;
}

static int program_generate_stage(struct family_run *run, void *state)
{
	int rc = program_fetch(state);

	return rc < 0 ? rc : program_check_exe(state);
}

/* The helper programs, written out (no toolchain). */
static int program_build_stage(struct family_run *run, void *state)
{
	return program_build_tools(state);
}

/* Wine's loader told to prefer the program's DLLs to its builtins of the
 * same names (program_dll_overrides()), for every program the runner
 * starts: the probe, the warm and the cold runs. */
static int dll_overrides_apply(struct program_context *ctx)
{
	/* RUNNER_MAX_DLL_OVERRIDES bounds the whole variable: the key, the
	 * runner's own overrides and their ';' come off the program's share. */
	static const size_t taken =
		sizeof("WINEDLLOVERRIDES=") - 1 + sizeof(RUNNER_BASE_DLL_OVERRIDES ";") - 1;
	char entries[RUNNER_MAX_DLL_OVERRIDES];
	const char *value = NULL, *registry = NULL;
	int rc;

	if (!ctx->runner.wine)
		return 0;
	if ((rc = program_dll_overrides(ctx->all_files, ctx->all_file_count, sizeof(entries) - taken, entries,
					&ctx->dll_overrides)) < 0 ||
	    (rc = runner_dll_overrides_set(&ctx->runner, entries, &value)) < 0)
		return rc;
	/* A registry that refuses is noted, not fatal: verification finds
	 * any builtin loaded instead. */
	if (!value && (rc = runner_dll_registry_set(&ctx->runner, entries, &registry)) < 0 &&
	    (rc == LL_ENOMEM ||
	     !cJSON_AddStringToObject(ctx->dll_overrides, "registry_error", err_message(rc))))
		return LL_ENOMEM;
	if (!cJSON_AddBoolToObject(ctx->dll_overrides, "applied", value != NULL || registry != NULL) ||
	    !cJSON_AddNumberToObject(ctx->dll_overrides, "limit", RUNNER_MAX_DLL_OVERRIDES - 1))
		return LL_ENOMEM;
	if (value && !cJSON_AddStringToObject(ctx->dll_overrides, "variable", value))
		return LL_ENOMEM;
	/* A Windows agent under Wine: the prefix's registry instead. */
	if (registry && (!cJSON_AddStringToObject(ctx->dll_overrides, "registry", registry) ||
			 !cJSON_AddStringToObject(ctx->dll_overrides, "registry_value", "native,builtin")))
		return LL_ENOMEM;
	/* runner_dll_overrides_set(): Wine resets the variable in every
	 * process a Windows program starts. */
	if (!value && !registry &&
	    !cJSON_AddStringToObject(ctx->dll_overrides, "note",
				     "A Windows agent under Wine cannot give its programs "
				     "WINEDLLOVERRIDES: start the agent with it set (NAME=n,b for "
				     "the program's DLLs) or set the prefix's DllOverrides key; "
				     "verification finds any builtin loaded instead."))
		return LL_ENOMEM;
	log_event(LOG_INFO, "program_dll_overrides", "value",
		  value      ? value
		  : registry ? "(HKCU\\Software\\Wine\\DllOverrides)"
			     : "(not applied)",
		  NULL);
	return 0;
}

/* The runner (phase "runner_start") with the program's DLL overrides,
 * then the variants' folders. */
static int program_transform_stage(struct family_run *run, void *state)
{
	struct program_context *ctx = state;
	int rc;

	if ((rc = runner_start(&ctx->runner, ctx->work, ctx->input_idle)) < 0)
		return rc;
	ctx->runner_started = true;
	if ((rc = dll_overrides_apply(ctx)) < 0)
		return rc;
	if ((rc = family_phase_done(run, "runner_start")) < 0)
		return rc;
	return program_transform(ctx);
}

static int program_verify_stage(struct family_run *run, void *state)
{
	return program_verify(state);
}

static int program_timing_stage(struct family_run *run, void *state, struct family_timing *ret)
{
	return program_timing(state, ret);
}

const struct family program_family = {
	.name = "program",
	.validate = program_validate,
	.generate = program_generate_stage,
	.build = program_build_stage,
	.transform = program_transform_stage,
	.verify = program_verify_stage,
	.timing = program_timing_stage,
	.describe = program_describe,
	.release = program_release,
};
