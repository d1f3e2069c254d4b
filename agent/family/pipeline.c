/*
 * pipeline.c - pipeline_run() for family "pe": generate, build, transform,
 * verify, then the load timer (pe_measure.c: warm and cold runs of every
 * valid variant and the empty program) and the result.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "pe/pe_family.h"

int pe_path(char *out, const char *a, const char *b)
{
	int n = snprintf(out, PLAT_MAX_PATH + 1, "%s/%s", a, b);
	if (n < 0 || n > (int)PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "Path %s/%s is too long.", a, b);
	return 0;
}

int pe_progress(const struct pe_context *ctx, const char *phase, int percent)
{
	const struct pipeline_task *t = ctx->task;
	if (t->progress && t->progress(t->progress_context, phase, percent))
		return err_set(LL_ESTATE, "The task was cancelled during %s.", phase);
	return 0;
}

int pe_read_file(const char *path, size_t limit, char **ret_text, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;

	if (!f)
		return err_set(LL_EIO, "Cannot open %s: %s.", path, strerror(errno));
	for (;;) {
		if (len + 4097 > cap) {
			size_t next = cap ? cap * 2 : 65536;
			char *grown;
			if (cap > limit + 4097) {
				rc = err_set(LL_ETOOBIG, "%s is larger than %zu bytes.", path, limit);
				goto out;
			}
			grown = realloc(text, next);
			if (!grown) {
				rc = LL_ENOMEM;
				goto out;
			}
			text = grown;
			cap = next;
		}
		size_t n = fread(text + len, 1, cap - len - 1, f);
		len += n;
		if (len > limit) {
			rc = err_set(LL_ETOOBIG, "%s is larger than %zu bytes.", path, limit);
			goto out;
		}
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		rc = err_set(LL_EIO, "Cannot read %s.", path);
		goto out;
	}
	if (!text && !(text = malloc(1))) {
		rc = LL_ENOMEM;
		goto out;
	}
	text[len] = '\0';
	*ret_text = text;
	*ret_len = len;
	text = NULL;
out:
	free(text);
	fclose(f);
	return rc;
}

int pe_write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return err_set(LL_EIO, "Cannot create %s: %s.", path, strerror(errno));
	size_t n = fwrite(text, 1, len, f);
	if (fclose(f) != 0 || n != len)
		return err_set(LL_EIO, "Cannot write %s.", path);
	return 0;
}

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
	int rc = pe_path(set->dir, ctx->work, sub);
	if (rc < 0)
		return rc;
	var->link_set = ctx->set_count++;
	return 0;
}

static int read_job(struct pe_context *ctx, const cJSON *job)
{
	const cJSON *gen, *variants, *warm, *item;
	const char *family, *main_mode;
	long long value;
	int rc;

	if ((rc = json_get_string(job, "family", 16, true, NULL, &family)) < 0)
		return rc;
	if (strcmp(family, "pe") != 0)
		return err_set(LL_EUNSUPPORTED, "This agent runs family 'pe' only, not '%s'.", family);
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
	warm = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(job, "measure"), "warm");
	ctx->warm_runs = 0;
	if (warm) {
		if ((rc = json_get_int(warm, "runs", 1, JOB_SPEC_MAX_WARM_RUNS, false, 30, &value)) < 0)
			return rc;
		ctx->warm_runs = (int)value;
		if ((rc = json_get_int(warm, "warmup", 0, JOB_SPEC_MAX_WARMUP, false, 3, &value)) < 0)
			return rc;
		ctx->warmup = (int)value;
	}
	ctx->cold_runs = 0;
	item = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(job, "measure"), "cold");
	if (item) {
		if ((rc = json_get_int(item, "runs", 1, JOB_SPEC_MAX_COLD_RUNS, false, 10, &value)) < 0)
			return rc;
		ctx->cold_runs = (int)value;
	}
	ctx->churn_processes = 0;
	item = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(job, "measure"), "churn");
	if (item) {
		if ((rc = json_get_int(item, "processes", 1, JOB_SPEC_MAX_CHURN_PROCESSES, false, 1000, &value)) < 0)
			return rc;
		ctx->churn_processes = (int)value;
		ctx->churn_sets = cJSON_GetObjectItemCaseSensitive(item, "dll_sets");
	}
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

/* Adds to O, as KEY, the figures MEASURED (a measure_warm() or
 * measure_cold() result, may be NULL) holds for program NAME, with the
 * runs and warm-ups asked for: {"runs", "samples_us", "summary", ...}. */
static int add_measured(cJSON *o, const char *key, const cJSON *measured, const char *name)
{
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(measured, "method");
	const cJSON *program = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(measured, "programs"), name);
	cJSON *copy;

	if (!program)
		return 0;
	copy = cJSON_Duplicate(program, true);
	if (!copy || !cJSON_AddItemToObject(o, key, copy)) {
		cJSON_Delete(copy);
		return LL_ENOMEM;
	}
	if (!cJSON_GetObjectItemCaseSensitive(copy, "runs"))
		cJSON_AddItemToObject(copy, "runs", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(method, "runs"), true));
	if (strcmp(key, "warm") == 0 && !cJSON_GetObjectItemCaseSensitive(copy, "warmup"))
		cJSON_AddItemToObject(copy, "warmup", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(method, "warmup"), true));
	/* The column's figure and the median, at hand beside the samples. */
	for (const char *const *k = (const char *const[]){"min_us", "median_us", NULL}; *k; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(copy, "summary"), *k);
		if (v && !cJSON_GetObjectItemCaseSensitive(copy, *k))
			cJSON_AddItemToObject(copy, *k, cJSON_Duplicate(v, true));
	}
	return 0;
}

static int result_json(struct pe_context *ctx, cJSON *phases, cJSON **ret)
{
	cJSON *r = cJSON_CreateObject(), *variants, *t, *item, *m;
	int rc = LL_ENOMEM;

	if (!r)
		return LL_ENOMEM;
	item = ctx->task->facts ? cJSON_Duplicate(ctx->task->facts, true) : cJSON_CreateObject();
	if (!item || !cJSON_AddItemToObject(r, "facts", item))
		goto fail_item;
	item = ctx->task->cell ? cJSON_Duplicate(ctx->task->cell, true) : cJSON_CreateObject();
	if (!item || !cJSON_AddItemToObject(r, "cell", item))
		goto fail_item;
	if (!cJSON_AddStringToObject(r, "family", "pe") || !(variants = cJSON_AddArrayToObject(r, "variants")))
		goto out;
	for (size_t v = 0; v < ctx->variant_count; v++) {
		struct pe_variant *var = &ctx->variants[v];
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(variants, o)) {
			cJSON_Delete(o);
			goto out;
		}
		if (!cJSON_AddStringToObject(o, "name", var->name) || knobs_json(var, o) < 0 ||
		    !cJSON_AddBoolToObject(o, "valid", var->valid))
			goto out;
		if (!var->valid && !cJSON_AddStringToObject(o, "invalid_reason", var->invalid_reason))
			goto out;
		/* On success the result owns them; on failure they stay in VAR. */
		if (var->verify) {
			if (!cJSON_AddItemToObject(o, "verify", var->verify))
				goto out;
			var->verify = NULL;
		}
		if (var->files) {
			if (!cJSON_AddItemToObject(o, "files", var->files))
				goto out;
			var->files = NULL;
		}
		if (var->valid && (add_measured(o, "warm", ctx->warm, var->name) < 0 ||
				   add_measured(o, "cold", ctx->cold, var->name) < 0))
			goto out;
	}
	cJSON *floor = cJSON_AddObjectToObject(r, "floor");
	if (!floor || !cJSON_AddStringToObject(floor, "name", "empty.exe"))
		goto out;
	if (ctx->floor_files) {
		cJSON_AddItemToObject(floor, "files", ctx->floor_files);
		ctx->floor_files = NULL;
	}
	if (add_measured(floor, "warm", ctx->warm, PE_FLOOR_NAME) < 0 ||
	    add_measured(floor, "cold", ctx->cold, PE_FLOOR_NAME) < 0 || !(m = cJSON_AddObjectToObject(r, "measurement")))
		goto out;
	if (ctx->warm && (!(item = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ctx->warm, "method"), true)) ||
			  !cJSON_AddItemToObject(m, "warm", item) ||
			  !(item = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ctx->warm, "order"), true)) ||
			  !cJSON_AddItemToObject(m, "warm_order", item) ||
			  !(item = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ctx->warm, "reruns"), true)) ||
			  !cJSON_AddItemToObject(m, "warm_reruns", item)))
		goto out;
	if (ctx->cold && (!(item = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ctx->cold, "method"), true)) ||
			  !cJSON_AddItemToObject(m, "cold", item)))
		goto out;
	if (!(t = cJSON_AddObjectToObject(r, "toolchain")) || !cJSON_AddStringToObject(t, "kind", "mingw-w64") ||
	    !cJSON_AddStringToObject(t, "target", ctx->toolchain.target) ||
	    !cJSON_AddStringToObject(t, "compiler", ctx->toolchain.gcc) ||
	    !cJSON_AddStringToObject(r, "runner", ctx->runner.wine ? "wine" : "native"))
		goto out;
	if (ctx->churn) {
		cJSON_AddItemToObject(r, "churn", ctx->churn);
		ctx->churn = NULL;
	}
	cJSON_AddItemToObject(r, "phases_ms", phases);
	*ret = r;
	return 0;
fail_item:
	cJSON_Delete(item);
out:
	cJSON_Delete(r);
	cJSON_Delete(phases);
	return rc;
}

static void context_release(struct pe_context *ctx)
{
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
	cJSON_Delete(ctx->warm);
	cJSON_Delete(ctx->cold);
	cJSON_Delete(ctx->churn);
	pe_runner_stop(&ctx->runner);
}

/* Records PHASE's duration since *START and restarts the clock. */
static int phase_done(cJSON *phases, const char *phase, long long *start)
{
	long long now = clock_monotonic_us();
	if (!cJSON_AddNumberToObject(phases, phase, (double)((now - *start) / 1000)))
		return LL_ENOMEM;
	*start = now;
	return 0;
}

/* The seed of the timer's shuffles and bootstrap: the same job and cell
 * give the same order, so a rerun is comparable. */
static uint64_t seed_of(const struct pipeline_task *task)
{
	char *text = cJSON_PrintUnformatted(task->cell);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(task->job, "id");
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	h = (h ^ (uint64_t)(cJSON_IsNumber(id) ? id->valuedouble : 0)) * 1099511628211ULL;
	for (const char *p = text ? text : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	free(text);
	return h;
}

int pipeline_run(const struct pipeline_task *task, cJSON **ret_result)
{
	struct pe_context ctx;
	cJSON *normalized = NULL, *phases = NULL;
	char empty_dir[PLAT_MAX_PATH + 1];
	long long start = clock_monotonic_us();
	int rc;

	memset(&ctx, 0, sizeof(ctx));
	ctx.task = task;
	/* The work folder first: read_job() places the link sets in it. */
	if (!task->work_dir || !task->work_dir[0] || strlen(task->work_dir) > PLAT_MAX_PATH - 200) {
		rc = err_set(LL_EINVAL, "The work folder's path is empty or too long.");
		goto out;
	}
	snprintf(ctx.work, sizeof(ctx.work), "%s", task->work_dir);
	/* The job's bounds again, on this side of the wire. */
	if ((rc = job_spec_normalize(task->job, &normalized)) < 0 || (rc = read_job(&ctx, normalized)) < 0)
		goto out;
	if ((rc = pe_path(ctx.src, ctx.work, "src")) < 0 || (rc = pe_path(ctx.obj, ctx.work, "obj")) < 0 ||
	    (rc = plat_mkdirs(ctx.src)) < 0 || (rc = plat_mkdirs(ctx.obj)) < 0)
		goto out;
	ctx.seed = seed_of(task);
	phases = cJSON_CreateObject();
	if (!phases) {
		rc = LL_ENOMEM;
		goto out;
	}
	if ((rc = pe_toolchain_find(ctx.work, &ctx.toolchain)) < 0)
		goto out;
	if ((rc = pe_progress(&ctx, "generate", 0)) < 0 || (rc = pe_generate(&ctx)) < 0 ||
	    (rc = phase_done(phases, "generate", &start)) < 0)
		goto out;
	if ((rc = pe_progress(&ctx, "build", 0)) < 0 || (rc = pe_build(&ctx, false, ctx.need_trace)) < 0)
		goto out;
	if ((rc = phase_done(phases, "build", &start)) < 0 || (rc = pe_runner_start(&ctx.runner, ctx.work)) < 0 ||
	    (rc = phase_done(phases, "runner_start", &start)) < 0)
		goto out;
	if (ctx.need_trace) {
		if ((rc = pe_build_trace_run(&ctx)) < 0 || (rc = pe_generate_order(&ctx)) < 0 ||
		    (rc = pe_build(&ctx, true, false)) < 0 || (rc = phase_done(phases, "trace", &start)) < 0)
			goto out;
	}
	if ((rc = pe_transform(&ctx)) < 0 || (rc = phase_done(phases, "transform", &start)) < 0)
		goto out;
	if ((rc = pe_verify(&ctx)) < 0 || (rc = phase_done(phases, "verify", &start)) < 0)
		goto out;
	if ((rc = pe_path(empty_dir, ctx.work, "empty")) < 0 ||
	    (rc = pe_files_json(&ctx, empty_dir, true, &ctx.floor_files)) < 0)
		goto out;
	if ((ctx.warm_runs > 0 || ctx.cold_runs > 0) &&
	    ((rc = pe_measure(&ctx)) < 0 || (rc = phase_done(phases, "measure", &start)) < 0))
		goto out;
	if (ctx.churn_processes > 0 &&
	    ((rc = pe_churn(&ctx)) < 0 || (rc = phase_done(phases, "churn", &start)) < 0))
		goto out;
	if ((rc = pe_progress(&ctx, "report", 100)) < 0)
		goto out;
	rc = result_json(&ctx, phases, ret_result);
	phases = NULL;
out:
	if (rc < 0)
		log_event(LOG_WARN, "pipeline_failed", "message", err_message(rc), NULL);
	cJSON_Delete(phases);
	cJSON_Delete(normalized);
	context_release(&ctx);
	return rc;
}
