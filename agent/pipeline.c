/*
 * pipeline.c - pipeline_run() for family "pe": generate, build, transform,
 * verify, then the warm timer (until the measurement work lands: fastest
 * of N after warm-ups, variants and the empty program interleaved in
 * round-robin, raw samples kept).
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
#include "pe_pipeline.h"

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

/* Round-robin over the valid variants and the floor (index count):
 * warmup rounds first, unrecorded; then warm_runs recorded rounds. */
static int time_warm(struct pe_context *ctx, cJSON *order_out)
{
	size_t count = ctx->variant_count, rounds = (size_t)(ctx->warmup + ctx->warm_runs);
	char empty_dir[PLAT_MAX_PATH + 1], empty_exe[PLAT_MAX_PATH + 1];
	int rc;

	if ((rc = pe_path(empty_dir, ctx->work, "empty")) < 0 || (rc = pe_path(empty_exe, empty_dir, "empty.exe")) < 0)
		return rc;
	for (size_t v = 0; v < count; v++)
		if (ctx->variants[v].valid &&
		    !(ctx->variants[v].samples = calloc((size_t)ctx->warm_runs, sizeof(long long))))
			return LL_ENOMEM;
	if (!(ctx->floor_samples = calloc((size_t)ctx->warm_runs, sizeof(long long))))
		return LL_ENOMEM;
	for (size_t r = 0; r < rounds; r++) {
		if ((rc = pe_progress(ctx, "warm", (int)(100 * r / rounds))) < 0)
			return rc;
		/* Rotate the starting point each round so no variant always
		 * follows the same one. */
		for (size_t k = 0; k <= count; k++) {
			size_t v = (k + r) % (count + 1);
			char exe[PLAT_MAX_PATH + 1];
			const char *dir = v == count ? empty_dir : ctx->variants[v].dir;
			long long us = 0;
			int code = 0;

			if (v < count && !ctx->variants[v].valid)
				continue;
			if (v < count && (rc = pe_path(exe, dir, "main.exe")) < 0)
				return rc;
			if ((rc = pe_runner_run(&ctx->runner, v == count ? empty_exe : exe, NULL, dir, NULL,
						&code, &us)) < 0)
				return rc;
			if (code != 0)
				return err_set(LL_EIO, "%s exited with %d while timed.",
					       v == count ? "empty.exe" : ctx->variants[v].name, code);
			if (r < (size_t)ctx->warmup)
				continue;
			if (r == (size_t)ctx->warmup) {
				cJSON *s = cJSON_CreateString(v == count ? "(floor)" : ctx->variants[v].name);
				if (!s || !cJSON_AddItemToArray(order_out, s))
					return cJSON_Delete(s), LL_ENOMEM;
			}
			if (v == count)
				ctx->floor_samples[ctx->floor_sample_count++] = us;
			else
				ctx->variants[v].samples[ctx->variants[v].sample_count++] = us;
		}
	}
	return pe_progress(ctx, "warm", 100);
}

static int compare_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

static int warm_json(const long long *samples, size_t n, int warmup, cJSON **ret)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	long long *sorted = NULL;
	int rc = LL_ENOMEM;

	if (!o || !(arr = cJSON_AddArrayToObject(o, "samples_us")))
		goto out;
	for (size_t i = 0; i < n; i++) {
		cJSON *s = cJSON_CreateNumber((double)samples[i]);
		if (!s || !cJSON_AddItemToArray(arr, s)) {
			cJSON_Delete(s);
			goto out;
		}
	}
	if (!cJSON_AddNumberToObject(o, "runs", (double)n) || !cJSON_AddNumberToObject(o, "warmup", warmup))
		goto out;
	if (n > 0) {
		if (!(sorted = malloc(n * sizeof(*sorted))))
			goto out;
		memcpy(sorted, samples, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), compare_ll);
		double median = n % 2 ? (double)sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
		if (!cJSON_AddNumberToObject(o, "min_us", (double)sorted[0]) ||
		    !cJSON_AddNumberToObject(o, "median_us", median) ||
		    !cJSON_AddNumberToObject(o, "max_us", (double)sorted[n - 1]))
			goto out;
	}
	*ret = o;
	o = NULL;
	rc = 0;
out:
	free(sorted);
	cJSON_Delete(o);
	return rc;
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

static int result_json(struct pe_context *ctx, cJSON *phases, cJSON *order, cJSON **ret)
{
	cJSON *r = cJSON_CreateObject(), *variants, *t, *item;
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
		if (var->valid && var->samples) {
			cJSON *w;
			if ((rc = warm_json(var->samples, var->sample_count, ctx->warmup, &w)) < 0)
				goto out;
			cJSON_AddItemToObject(o, "warm", w);
			rc = LL_ENOMEM;
		}
	}
	cJSON *floor = cJSON_AddObjectToObject(r, "floor");
	if (!floor || !cJSON_AddStringToObject(floor, "name", "empty.exe"))
		goto out;
	if (ctx->floor_files) {
		cJSON_AddItemToObject(floor, "files", ctx->floor_files);
		ctx->floor_files = NULL;
	}
	if (ctx->floor_samples) {
		cJSON *w;
		if ((rc = warm_json(ctx->floor_samples, ctx->floor_sample_count, ctx->warmup, &w)) < 0)
			goto out;
		cJSON_AddItemToObject(floor, "warm", w);
		rc = LL_ENOMEM;
	}
	if (!(t = cJSON_AddObjectToObject(r, "toolchain")) || !cJSON_AddStringToObject(t, "kind", "mingw-w64") ||
	    !cJSON_AddStringToObject(t, "compiler", ctx->toolchain.gcc) ||
	    !cJSON_AddStringToObject(r, "runner", ctx->runner.wine ? "wine" : "native") ||
	    !cJSON_AddStringToObject(r, "priority", plat_raise_priority()))
		goto out;
	cJSON_AddItemToObject(r, "phases_ms", phases);
	cJSON_AddItemToObject(r, "warm_order", order);
	*ret = r;
	return 0;
fail_item:
	cJSON_Delete(item);
out:
	cJSON_Delete(r);
	cJSON_Delete(phases);
	cJSON_Delete(order);
	return rc;
}

static void context_release(struct pe_context *ctx)
{
	for (size_t v = 0; ctx->variants && v < ctx->variant_count; v++) {
		cJSON_Delete(ctx->variants[v].verify);
		cJSON_Delete(ctx->variants[v].files);
		free(ctx->variants[v].samples);
	}
	free(ctx->variants);
	for (int i = 0; ctx->trace && i < ctx->dlls; i++)
		free(ctx->trace[i]);
	free(ctx->trace);
	free(ctx->trace_count);
	cJSON_Delete(ctx->floor_files);
	free(ctx->floor_samples);
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

int pipeline_run(const struct pipeline_task *task, cJSON **ret_result)
{
	struct pe_context ctx;
	cJSON *normalized = NULL, *phases = NULL, *order = NULL;
	char empty_dir[PLAT_MAX_PATH + 1];
	long long start = clock_monotonic_us();
	int rc;

	memset(&ctx, 0, sizeof(ctx));
	ctx.task = task;
	/* The job's bounds again, on this side of the wire. */
	if ((rc = job_spec_normalize(task->job, &normalized)) < 0 || (rc = read_job(&ctx, normalized)) < 0)
		goto out;
	if (strlen(task->work_dir) > PLAT_MAX_PATH - 200) {
		rc = err_set(LL_ETOOBIG, "The work folder's path is too long.");
		goto out;
	}
	snprintf(ctx.work, sizeof(ctx.work), "%s", task->work_dir);
	if ((rc = pe_path(ctx.src, ctx.work, "src")) < 0 || (rc = pe_path(ctx.obj, ctx.work, "obj")) < 0 ||
	    (rc = plat_mkdirs(ctx.src)) < 0 || (rc = plat_mkdirs(ctx.obj)) < 0)
		goto out;
	phases = cJSON_CreateObject();
	order = cJSON_CreateArray();
	if (!phases || !order) {
		rc = LL_ENOMEM;
		goto out;
	}
	if ((rc = pe_toolchain_find(&ctx.toolchain)) < 0)
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
	if (ctx.warm_runs > 0 && ((rc = time_warm(&ctx, order)) < 0 || (rc = phase_done(phases, "warm", &start)) < 0))
		goto out;
	if ((rc = pe_progress(&ctx, "report", 100)) < 0)
		goto out;
	rc = result_json(&ctx, phases, order, ret_result);
	phases = order = NULL;
out:
	if (rc < 0)
		log_event(LOG_WARN, "pipeline_failed", "message", err_message(rc), NULL);
	cJSON_Delete(phases);
	cJSON_Delete(order);
	cJSON_Delete(normalized);
	context_release(&ctx);
	return rc;
}
