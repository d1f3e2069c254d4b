/* Reports and comparisons: see report.h. Rendering is in report_format.c. */
#include "report.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_MAX_BODY_DEPTH 64

/* ------------------------------------------------------------- helpers */

/* The samples of ARRAY (numbers >= 0) into a new array; LL_EINVAL when
 * ARRAY is not a non-empty list of finite non-negative numbers. */
static int samples_of(const cJSON *array, double **ret, size_t *ret_n)
{
	const cJSON *item;
	size_t n = 0, count = cJSON_IsArray(array) ? (size_t)cJSON_GetArraySize(array) : 0;
	double *x;

	if (count == 0 || count > STATS_MAX_SAMPLES)
		return LL_EINVAL;
	x = malloc(count * sizeof(*x));
	if (!x)
		return LL_ENOMEM;
	cJSON_ArrayForEach(item, array) {
		if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || item->valuedouble < 0) {
			free(x);
			return LL_EINVAL;
		}
		x[n++] = item->valuedouble;
	}
	*ret = x;
	*ret_n = n;
	return 0;
}

static const cJSON *get(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static double number(const cJSON *obj, const char *key, double fallback)
{
	const cJSON *item = get(obj, key);
	return cJSON_IsNumber(item) ? item->valuedouble : fallback;
}

static const char *string(const cJSON *obj, const char *key)
{
	const cJSON *item = get(obj, key);
	return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* Rounds for output: figures in microseconds to 0.1, percents to 0.01. */
static double round_to(double v, double step)
{
	return round(v / step) * step;
}

static uint64_t seed_of(const char *text)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *text; text++)
		h = (h ^ (unsigned char)*text) * 1099511628211ULL;
	return h;
}

/* Decides significance of candidate Y against baseline X (see report.h);
 * fills change_pct, min_change_pct, p_value, ratio CI and significant. */
static int compare_samples(const double *x, size_t nx, const double *y, size_t ny, int resamples,
			   uint64_t seed, cJSON *out, double *ret_change, bool *ret_significant)
{
	struct stats_summary sx, sy;
	double u, p, lo, hi, change;
	bool significant;
	int rc;

	if ((rc = stats_summarize(x, nx, &sx)) < 0 || (rc = stats_summarize(y, ny, &sy)) < 0 ||
	    (rc = stats_mann_whitney(y, ny, x, nx, &u, &p)) < 0)
		return rc;
	if (sx.median <= 0 || sx.min <= 0)
		return err_set(LL_EINVAL, "The baseline's times are zero.");
	if ((rc = stats_bootstrap_ratio_ci(x, nx, y, ny, STATS_MEDIAN, 0.95, resamples, seed, &lo, &hi)) < 0)
		return rc;
	change = (sy.median / sx.median - 1) * 100;
	significant = p < REPORT_ALPHA && (lo > 1 || hi < 1) && fabs(change) >= REPORT_MIN_EFFECT_PCT;
	cJSON_AddNumberToObject(out, "change_pct", round_to(change, 0.01));
	cJSON_AddNumberToObject(out, "min_change_pct", round_to((sy.min / sx.min - 1) * 100, 0.01));
	cJSON_AddNumberToObject(out, "ratio", round_to(sy.median / sx.median, 0.0001));
	cJSON_AddNumberToObject(out, "ratio_ci_low", round_to(lo, 0.0001));
	cJSON_AddNumberToObject(out, "ratio_ci_high", round_to(hi, 0.0001));
	cJSON_AddNumberToObject(out, "p_value", p);
	cJSON_AddBoolToObject(out, "significant", significant);
	*ret_change = change;
	*ret_significant = significant;
	return 0;
}

/* ------------------------------------------------------ result summary */

static cJSON *summarize_warm(const double *x, size_t n, const char *name)
{
	struct stats_summary s;
	double lo, hi;
	bool *flags = malloc(n * sizeof(*flags));
	size_t outliers = 0;
	cJSON *w;

	if (!flags || stats_summarize(x, n, &s) < 0 ||
	    stats_bootstrap_ci(x, n, STATS_MEDIAN, 0.95, REPORT_RESAMPLES, seed_of(name), &lo, &hi) < 0 ||
	    stats_outliers(x, n, 3.5, flags, &outliers) < 0) {
		free(flags);
		return NULL;
	}
	free(flags);
	w = cJSON_CreateObject();
	cJSON_AddNumberToObject(w, "n", (double)n);
	cJSON_AddNumberToObject(w, "min_us", round_to(s.min, 0.1));
	cJSON_AddNumberToObject(w, "median_us", round_to(s.median, 0.1));
	cJSON_AddNumberToObject(w, "ci_low_us", round_to(lo, 0.1));
	cJSON_AddNumberToObject(w, "ci_high_us", round_to(hi, 0.1));
	cJSON_AddNumberToObject(w, "mad_us", round_to(s.mad, 0.1));
	cJSON_AddNumberToObject(w, "p90_us", round_to(s.p90, 0.1));
	cJSON_AddNumberToObject(w, "mean_us", round_to(s.mean, 0.1));
	cJSON_AddNumberToObject(w, "outliers", (double)outliers);
	return w;
}

static double mean_of(const cJSON *array, bool *ret_present)
{
	double *x = NULL, sum = 0;
	size_t n = 0;

	*ret_present = false;
	if (samples_of(array, &x, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	free(x);
	*ret_present = true;
	return sum / (double)n;
}

static cJSON *summarize_cold(const cJSON *cold)
{
	struct stats_summary s;
	double *x = NULL, v;
	size_t n = 0;
	bool present;
	cJSON *c;
	static const char *const means[][2] = {
		{"page_faults", "page_faults_mean"}, {"hard_faults", "hard_faults_mean"},
		{"soft_faults", "soft_faults_mean"}, {"read_bytes", "read_bytes_mean"},
		{"read_ops", "read_ops_mean"},
	};

	if (samples_of(get(cold, "samples_us"), &x, &n) < 0)
		return NULL;
	stats_summarize(x, n, &s);
	free(x);
	c = cJSON_CreateObject();
	cJSON_AddNumberToObject(c, "n", (double)n);
	cJSON_AddNumberToObject(c, "mean_us", round_to(s.mean, 0.1));
	cJSON_AddNumberToObject(c, "stddev_us", round_to(s.stddev, 0.1));
	cJSON_AddNumberToObject(c, "median_us", round_to(s.median, 0.1));
	for (size_t i = 0; i < sizeof(means) / sizeof(means[0]); i++) {
		v = mean_of(get(cold, means[i][0]), &present);
		if (present)
			cJSON_AddNumberToObject(c, means[i][1], round_to(v, 0.1));
	}
	/* Never pretend: a run whose cache eviction failed is not cold. */
	cJSON_AddBoolToObject(c, "cold", !cJSON_IsFalse(get(cold, "cold")));
	cJSON_AddStringToObject(c, "method", string(cold, "method") ? string(cold, "method") : "unknown");
	if (cJSON_IsArray(get(cold, "modules")))
		cJSON_AddItemToObject(c, "modules", cJSON_Duplicate(get(cold, "modules"), true));
	return c;
}

static const cJSON *find_variant(const cJSON *variants, const char *name)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, variants)
		if (string(v, "name") && strcmp(string(v, "name"), name) == 0)
			return v;
	return NULL;
}

static void add_cold_vs(cJSON *mine, const cJSON *base)
{
	static const char *const keys[][2] = {
		{"mean_us", "time_pct"}, {"page_faults_mean", "page_faults_pct"},
		{"read_bytes_mean", "read_bytes_pct"},
	};
	cJSON *vs = cJSON_AddObjectToObject(mine, "vs_baseline");

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		double b = number(base, keys[i][0], -1), m = number(mine, keys[i][0], -1);
		if (b > 0 && m >= 0)
			cJSON_AddNumberToObject(vs, keys[i][1], round_to(m / b * 100, 0.01));
	}
}

int report_summarize_result(const char *body, cJSON **ret_summary)
{
	const cJSON *variants, *v, *base_warm = NULL, *base_cold = NULL;
	cJSON *root = NULL, *out, *by_name;
	const char *warm_base_name = NULL;
	int rc = json_parse_object(body, strlen(body), REPORT_MAX_BODY_DEPTH, &root);

	if (rc < 0)
		return rc;
	variants = get(root, "variants");
	out = cJSON_CreateObject();
	cJSON_AddNumberToObject(out, "v", REPORT_SUMMARY_VERSION);
	cJSON_AddItemToObject(out, "facts", cJSON_IsObject(get(root, "facts"))
						    ? cJSON_Duplicate(get(root, "facts"), true)
						    : cJSON_CreateObject());
	by_name = cJSON_AddObjectToObject(out, "variants");

	cJSON_ArrayForEach(v, variants) {
		const char *name = string(v, "name");
		double *x = NULL;
		size_t n = 0;
		cJSON *s, *w, *c;
		if (!name || get(by_name, name))
			continue;
		s = cJSON_AddObjectToObject(by_name, name);
		if (cJSON_IsFalse(get(v, "valid"))) {
			cJSON_AddBoolToObject(s, "valid", false);
			cJSON_AddStringToObject(s, "reason", string(v, "invalid_reason")
								     ? string(v, "invalid_reason")
								     : "verification failed");
			continue;
		}
		cJSON_AddBoolToObject(s, "valid", true);
		if (samples_of(get(get(v, "warm"), "samples_us"), &x, &n) == 0) {
			if ((w = summarize_warm(x, n, name)))
				cJSON_AddItemToObject(s, "warm", w);
			free(x);
		}
		if ((c = summarize_cold(get(v, "cold"))))
			cJSON_AddItemToObject(s, "cold", c);
	}

	/* Baselines: the column's `default` for warm times, the office
	 * study's `rebase` for cold starts (else the first variant that has
	 * the figures). */
	if (get(get(by_name, "default"), "warm"))
		warm_base_name = "default";
	cJSON_ArrayForEach(v, by_name) {
		if (!warm_base_name && get(v, "warm"))
			warm_base_name = v->string;
		if (!base_cold && get(v, "cold"))
			base_cold = get(v, "cold");
	}
	if (get(get(by_name, "rebase"), "cold"))
		base_cold = get(get(by_name, "rebase"), "cold");
	cJSON_AddItemToObject(out, "warm_baseline", warm_base_name ? cJSON_CreateString(warm_base_name)
								   : cJSON_CreateNull());
	cJSON_AddItemToObject(out, "cold_baseline",
			      base_cold ? cJSON_CreateString(get(by_name, "rebase") &&
								     get(get(by_name, "rebase"), "cold")
							     ? "rebase"
							     : "first")
					: cJSON_CreateNull());
	if (warm_base_name) {
		const cJSON *bv = find_variant(variants, warm_base_name);
		double *bx = NULL;
		size_t bn = 0;
		base_warm = bv;
		if (samples_of(get(get(bv, "warm"), "samples_us"), &bx, &bn) == 0) {
			cJSON_ArrayForEach(v, variants) {
				const char *name = string(v, "name");
				cJSON *s = name ? cJSON_GetObjectItemCaseSensitive(by_name, name) : NULL;
				double *x = NULL, change;
				size_t n = 0;
				bool significant;
				if (!s || !get(s, "warm") || v == base_warm || get(s, "vs_baseline") ||
				    samples_of(get(get(v, "warm"), "samples_us"), &x, &n) < 0)
					continue;
				cJSON *vs = cJSON_AddObjectToObject(s, "vs_baseline");
				if (compare_samples(bx, bn, x, n, REPORT_RESAMPLES, seed_of(name), vs, &change,
						    &significant) < 0)
					cJSON_DeleteItemFromObjectCaseSensitive(s, "vs_baseline");
				free(x);
			}
			free(bx);
		}
	}
	if (base_cold) {
		cJSON_ArrayForEach(v, by_name)
			if (get(v, "cold"))
				add_cold_vs(cJSON_GetObjectItemCaseSensitive(v, "cold"), base_cold);
	}
	if (cJSON_IsArray(get(root, "churn")))
		cJSON_AddItemToObject(out, "churn", cJSON_Duplicate(get(root, "churn"), true));
	cJSON_Delete(root);
	*ret_summary = out;
	return 0;
}

/* ------------------------------------------------------------ job report */

/* "os=win10 disk=ssd" in the cell's key order; "any" for an empty cell. */
static void cell_key(const cJSON *cell, char *out, size_t size)
{
	const cJSON *item;
	size_t len = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(item, cell) {
		int n = snprintf(out + len, size - len, "%s%s=%s", len ? " " : "", item->string,
				 cJSON_IsString(item) ? item->valuestring : "?");
		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
	}
	if (!out[0])
		snprintf(out, size, "any");
}

struct job_rows {
	struct store *store;
	cJSON *tasks; /* [{"key","cell","task_id","state","last_error","summary"}] */
	int computed;
};

static int collect_row(void *context, const struct store_report_row *row)
{
	struct job_rows *rows = context;
	cJSON *t = cJSON_CreateObject(), *cell = NULL, *summary = NULL;
	char key[512];

	json_parse_object(row->cell, strlen(row->cell), 0, &cell);
	cell_key(cell, key, sizeof(key));
	cJSON_AddStringToObject(t, "key", key);
	cJSON_AddItemToObject(t, "cell", cell ? cell : cJSON_CreateObject());
	cJSON_AddNumberToObject(t, "task_id", (double)row->task_id);
	cJSON_AddStringToObject(t, "state", row->state);
	if (row->last_error)
		cJSON_AddStringToObject(t, "last_error", row->last_error);
	if (row->result_id) {
		if (row->summary && row->summary_version == REPORT_SUMMARY_VERSION)
			json_parse_object(row->summary, strlen(row->summary), REPORT_MAX_BODY_DEPTH, &summary);
		if (!summary && row->body && report_summarize_result(row->body, &summary) == 0) {
			/* Cached after the walk: the store's reader is busy here. */
			cJSON_AddNumberToObject(t, "result_id", (double)row->result_id);
			cJSON_AddBoolToObject(t, "cache", true);
			rows->computed++;
		}
		if (!summary) {
			cJSON_AddStringToObject(t, "result_error", "The stored result could not be read.");
		}
	}
	if (summary)
		cJSON_AddItemToObject(t, "summary", summary);
	cJSON_AddItemToArray(rows->tasks, t);
	return 0;
}

/* Stores, in one transaction, the summaries collect_row() computed. */
static void cache_summaries(struct store *store, const cJSON *tasks, int count)
{
	long long *ids = calloc((size_t)count + 1, sizeof(*ids));
	char **texts = calloc((size_t)count + 1, sizeof(*texts));
	const cJSON *t;
	size_t n = 0;

	if (ids && texts) {
		cJSON_ArrayForEach(t, tasks) {
			if (!cJSON_IsTrue(get(t, "cache")) || n == (size_t)count)
				continue;
			if (!(texts[n] = cJSON_PrintUnformatted(get(t, "summary"))))
				break;
			ids[n++] = (long long)number(t, "result_id", 0);
		}
		store_summaries_put(store, n, ids, REPORT_SUMMARY_VERSION, (const char *const *)texts);
	}
	for (size_t i = 0; texts && i < n; i++)
		free(texts[i]);
	free(ids);
	free(texts);
}

/* The figures of one variant in one task, or why there are none. */
static cJSON *variant_cell(const cJSON *task, const char *variant, const char *table)
{
	const cJSON *summary = get(task, "summary"), *v = get(get(summary, "variants"), variant);
	const char *state = string(task, "state");
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "cell", string(task, "key"));
	if (strcmp(state, "done") != 0) {
		bool dead = strcmp(state, "dead") == 0;
		cJSON_AddStringToObject(c, "status", dead ? "failed" : strcmp(state, "cancelled") == 0 ? "cancelled" : "pending");
		cJSON_AddStringToObject(c, "reason", dead && string(task, "last_error") ? string(task, "last_error")
							: dead ? "the task failed" : state);
		return c;
	}
	if (!summary) {
		cJSON_AddStringToObject(c, "status", "missing");
		cJSON_AddStringToObject(c, "reason", string(task, "result_error") ? string(task, "result_error")
									    : "no result");
		return c;
	}
	if (!v) {
		cJSON_AddStringToObject(c, "status", "missing");
		cJSON_AddStringToObject(c, "reason", "the result has no such variant");
		return c;
	}
	if (cJSON_IsFalse(get(v, "valid"))) {
		cJSON_AddStringToObject(c, "status", "invalid");
		cJSON_AddStringToObject(c, "reason", string(v, "reason") ? string(v, "reason") : "verification failed");
		return c;
	}
	if (!get(v, table)) {
		cJSON_AddStringToObject(c, "status", "missing");
		cJSON_AddStringToObject(c, "reason", strcmp(table, "warm") == 0 ? "no warm samples" : "no cold samples");
		return c;
	}
	cJSON_AddStringToObject(c, "status", "ok");
	for (const cJSON *f = get(v, table)->child; f; f = f->next)
		if (strcmp(f->string, "vs_baseline") != 0 && strcmp(f->string, "modules") != 0)
			cJSON_AddItemToObject(c, f->string, cJSON_Duplicate(f, true));
	if (strcmp(table, "warm") == 0 && get(v, "vs_baseline"))
		for (const cJSON *f = get(v, "vs_baseline")->child; f; f = f->next)
			cJSON_AddItemToObject(c, f->string, cJSON_Duplicate(f, true));
	if (strcmp(table, "cold") == 0 && get(get(v, "cold"), "vs_baseline"))
		for (const cJSON *f = get(get(v, "cold"), "vs_baseline")->child; f; f = f->next)
			cJSON_AddItemToObject(c, f->string, cJSON_Duplicate(f, true));
	return c;
}

static bool table_present(const cJSON *tasks, const char *table)
{
	const cJSON *t, *v;

	cJSON_ArrayForEach(t, tasks)
		cJSON_ArrayForEach(v, get(get(t, "summary"), "variants"))
			if (get(v, table))
				return true;
	return false;
}

static cJSON *build_table(const cJSON *tasks, const cJSON *variant_names, const char *table,
			  const char *baseline)
{
	cJSON *out = cJSON_CreateObject(), *rows = cJSON_CreateArray();
	const cJSON *name, *t;

	cJSON_AddStringToObject(out, "baseline", baseline);
	cJSON_ArrayForEach(name, variant_names) {
		cJSON *row = cJSON_CreateObject(), *cells = cJSON_AddArrayToObject(row, "cells");
		cJSON_AddStringToObject(row, "variant", name->valuestring);
		cJSON_ArrayForEach(t, tasks)
			cJSON_AddItemToArray(cells, variant_cell(t, name->valuestring, table));
		cJSON_AddItemToArray(rows, row);
	}
	cJSON_AddItemToObject(out, "variants", rows);
	return out;
}

/* The column's kind of sentence, computed: per variant, where it was
 * significantly faster or slower than the baseline, and where not. */
static cJSON *findings(const cJSON *warm)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *row, *c;
	const char *baseline = string(warm, "baseline");

	cJSON_ArrayForEach(row, get(warm, "variants")) {
		struct buf text;
		int faster = 0, slower = 0, same = 0;
		if (strcmp(string(row, "variant"), baseline) == 0)
			continue;
		buf_init(&text, 8192);
		buf_printf(&text, "%s against %s:", string(row, "variant"), baseline);
		cJSON_ArrayForEach(c, get(row, "cells")) {
			if (!get(c, "change_pct"))
				continue;
			double change = number(c, "change_pct", 0);
			if (cJSON_IsTrue(get(c, "significant"))) {
				buf_printf(&text, "%s load time %s by %.1f %% on %s", faster + slower ? ";" : "",
					   change < 0 ? "improved" : "worsened", fabs(change), string(c, "cell"));
				change < 0 ? faster++ : slower++;
			} else {
				same++;
			}
		}
		if (same)
			buf_printf(&text, "%s no significant change in %d cell%s", faster + slower ? ";" : "", same,
				   same > 1 ? "s" : "");
		if (faster + slower + same == 0)
			buf_append_str(&text, " no comparable cells");
		buf_append_str(&text, ".");
		cJSON_AddItemToArray(out, cJSON_CreateString(buf_str(&text)));
		buf_release(&text);
	}
	return out;
}

static cJSON *churn_table(const cJSON *tasks)
{
	cJSON *rows = cJSON_CreateArray();
	const cJSON *t, *c;

	cJSON_ArrayForEach(t, tasks) {
		cJSON_ArrayForEach(c, get(get(t, "summary"), "churn")) {
			double processes = number(c, "processes", 0);
			cJSON *r = cJSON_CreateObject();
			cJSON_AddStringToObject(r, "cell", string(t, "key"));
			cJSON_AddStringToObject(r, "dll_set", string(c, "dll_set") ? string(c, "dll_set") : "?");
			cJSON_AddNumberToObject(r, "processes", processes);
			if (processes > 0) {
				cJSON_AddNumberToObject(r, "create_us_per_process",
							round_to(number(c, "create_us", 0) / processes, 0.1));
				cJSON_AddNumberToObject(r, "destroy_us_per_process",
							round_to(number(c, "destroy_us", 0) / processes, 0.1));
			}
			if (get(c, "blocked_total_ms")) {
				cJSON_AddNumberToObject(r, "blocked_total_ms", number(c, "blocked_total_ms", 0));
				cJSON_AddNumberToObject(r, "blocked_max_ms", number(c, "blocked_max_ms", 0));
			} else {
				cJSON_AddStringToObject(r, "blocked", "not measured on this platform");
			}
			cJSON_AddItemToArray(rows, r);
		}
	}
	return rows;
}

int report_job(struct store *store, long long job_id, bool modules, cJSON **ret_report)
{
	struct job_rows rows = {store, cJSON_CreateArray(), 0};
	cJSON *job = NULL, *out, *cells, *names, *significance, *info;
	const cJSON *spec, *v, *t;
	const char *cold_baseline = "rebase";
	int rc;

	if ((rc = store_job_get(store, job_id, &job)) < 0 ||
	    (rc = store_job_report_rows(store, job_id, false, collect_row, &rows)) < 0) {
		cJSON_Delete(job);
		cJSON_Delete(rows.tasks);
		return rc;
	}
	if (rows.computed)
		cache_summaries(store, rows.tasks, rows.computed);
	spec = get(job, "spec");
	out = cJSON_CreateObject();
	info = cJSON_AddObjectToObject(out, "job");
	cJSON_AddNumberToObject(info, "id", (double)job_id);
	cJSON_AddStringToObject(info, "name", string(job, "name"));
	cJSON_AddStringToObject(info, "family", string(job, "family"));
	cJSON_AddStringToObject(info, "state", string(job, "state"));
	cJSON_AddItemToObject(info, "generator", cJSON_Duplicate(get(spec, "generator"), true));

	cells = cJSON_AddArrayToObject(out, "cells");
	cJSON_ArrayForEach(t, rows.tasks) {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "key", string(t, "key"));
		cJSON_AddItemToObject(c, "cell", cJSON_Duplicate(get(t, "cell"), true));
		cJSON_AddNumberToObject(c, "task_id", number(t, "task_id", 0));
		cJSON_AddStringToObject(c, "state", string(t, "state"));
		if (get(t, "summary"))
			cJSON_AddItemToObject(c, "facts", cJSON_Duplicate(get(get(t, "summary"), "facts"), true));
		cJSON_AddItemToArray(cells, c);
	}
	names = cJSON_CreateArray();
	cJSON_ArrayForEach(v, get(spec, "variants"))
		cJSON_AddItemToArray(names, cJSON_CreateString(string(v, "name")));

	{
		const char *warm_base = "default";
		bool has_default = false;
		cJSON_ArrayForEach(v, names)
			has_default |= strcmp(v->valuestring, "default") == 0;
		if (!has_default && names->child)
			warm_base = names->child->valuestring;
		cJSON *warm = build_table(rows.tasks, names, "warm", warm_base);
		cJSON_AddItemToObject(out, "warm", warm);
		cJSON_AddItemToObject(out, "findings", findings(warm));
	}
	if (table_present(rows.tasks, "cold")) {
		bool has_rebase = false;
		cJSON_ArrayForEach(v, names)
			has_rebase |= strcmp(v->valuestring, "rebase") == 0;
		if (!has_rebase && names->child)
			cold_baseline = names->child->valuestring;
		cJSON *cold = build_table(rows.tasks, names, "cold", cold_baseline);
		if (modules) {
			cJSON *per_module = cJSON_AddArrayToObject(cold, "modules");
			cJSON_ArrayForEach(t, rows.tasks) {
				cJSON_ArrayForEach(v, get(get(t, "summary"), "variants")) {
					const cJSON *m;
					cJSON_ArrayForEach(m, get(get(v, "cold"), "modules")) {
						cJSON *r = cJSON_Duplicate(m, true);
						cJSON_AddStringToObject(r, "cell", string(t, "key"));
						cJSON_AddStringToObject(r, "variant", v->string);
						cJSON_AddItemToArray(per_module, r);
					}
				}
			}
		}
		cJSON_AddItemToObject(out, "cold", cold);
	} else {
		cJSON_AddNullToObject(out, "cold");
	}
	{
		cJSON *churn = churn_table(rows.tasks);
		if (cJSON_GetArraySize(churn)) {
			cJSON *c = cJSON_AddObjectToObject(out, "churn");
			cJSON_AddItemToObject(c, "rows", churn);
		} else {
			cJSON_Delete(churn);
			cJSON_AddNullToObject(out, "churn");
		}
	}
	significance = cJSON_AddObjectToObject(out, "significance");
	cJSON_AddStringToObject(significance, "test", "mann-whitney-u, two-sided");
	cJSON_AddNumberToObject(significance, "alpha", REPORT_ALPHA);
	cJSON_AddNumberToObject(significance, "min_effect_pct", REPORT_MIN_EFFECT_PCT);
	cJSON_AddStringToObject(significance, "ci", "bootstrap percentile, 95 %");
	cJSON_Delete(names);
	cJSON_Delete(job);
	cJSON_Delete(rows.tasks);
	*ret_report = out;
	return 0;
}

/* ------------------------------------------------------------- compare */

struct compare_side {
	cJSON *cells; /* {KEY: {"state","last_error","body": parsed result}} */
};

static int collect_side(void *context, const struct store_report_row *row)
{
	struct compare_side *side = context;
	cJSON *cell = NULL, *entry = cJSON_CreateObject(), *body = NULL;
	char key[512];

	json_parse_object(row->cell, strlen(row->cell), 0, &cell);
	cell_key(cell, key, sizeof(key));
	cJSON_Delete(cell);
	cJSON_AddStringToObject(entry, "state", row->state);
	if (row->last_error)
		cJSON_AddStringToObject(entry, "last_error", row->last_error);
	if (row->body && json_parse_object(row->body, strlen(row->body), REPORT_MAX_BODY_DEPTH, &body) == 0)
		cJSON_AddItemToObject(entry, "body", body);
	cJSON_DeleteItemFromObjectCaseSensitive(side->cells, key);
	cJSON_AddItemToObject(side->cells, key, entry);
	return 0;
}

/* Facts that must agree for two results to be compared. */
static const char *const compared_facts[] = {"os", "os_version", "arch", "cpu_model", "disk", "fs",
					     "runner", NULL};

static bool facts_differ(const cJSON *a, const cJSON *b, char *reason, size_t size)
{
	for (int i = 0; compared_facts[i]; i++) {
		const cJSON *x = get(a, compared_facts[i]), *y = get(b, compared_facts[i]);
		char *tx, *ty;
		bool differ;
		if (!x && !y)
			continue;
		tx = x ? cJSON_PrintUnformatted(x) : strdup("none");
		ty = y ? cJSON_PrintUnformatted(y) : strdup("none");
		differ = !tx || !ty || strcmp(tx, ty) != 0;
		if (differ)
			snprintf(reason, size, "the agents' facts differ: %s %s vs %s", compared_facts[i],
				 tx ? tx : "?", ty ? ty : "?");
		free(tx);
		free(ty);
		if (differ)
			return true;
	}
	return false;
}

static cJSON *not_comparable(cJSON *row, const char *reason)
{
	cJSON_AddStringToObject(row, "status", "not_comparable");
	cJSON_AddStringToObject(row, "reason", reason);
	cJSON_AddBoolToObject(row, "regression", false);
	return row;
}

static cJSON *compare_row(const char *variant, const char *key, const cJSON *base_entry,
			  const cJSON *cand_entry, const char *global_reason, double max_regression)
{
	cJSON *row = cJSON_CreateObject();
	const cJSON *bb = get(base_entry, "body"), *cb = get(cand_entry, "body");
	const cJSON *bv = find_variant(get(bb, "variants"), variant);
	const cJSON *cv = find_variant(get(cb, "variants"), variant);
	double *x = NULL, *y = NULL, change = 0, lo, hi;
	size_t nx = 0, ny = 0;
	bool significant = false;
	char reason[300];

	cJSON_AddStringToObject(row, "variant", variant);
	cJSON_AddStringToObject(row, "cell", key);
	if (global_reason)
		return not_comparable(row, global_reason);
	if (!cand_entry)
		return not_comparable(row, "the candidate has no task in this cell");
	if (!bb || !cb)
		return not_comparable(row, !bb ? "the baseline has no result in this cell"
					       : "the candidate has no result in this cell");
	if (facts_differ(get(bb, "facts"), get(cb, "facts"), reason, sizeof(reason)))
		return not_comparable(row, reason);
	if (!bv || !cv)
		return not_comparable(row, !bv ? "the baseline did not run this variant"
					       : "the candidate did not run this variant");
	if (cJSON_IsFalse(get(bv, "valid")) || cJSON_IsFalse(get(cv, "valid")))
		return not_comparable(row, cJSON_IsFalse(get(bv, "valid")) ? "the baseline's variant is invalid"
									     : "the candidate's variant is invalid");
	if (samples_of(get(get(bv, "warm"), "samples_us"), &x, &nx) < 0 ||
	    samples_of(get(get(cv, "warm"), "samples_us"), &y, &ny) < 0) {
		free(x);
		return not_comparable(row, "warm samples are missing");
	}
	{
		struct stats_summary sx, sy;
		stats_summarize(x, nx, &sx);
		stats_summarize(y, ny, &sy);
		cJSON_AddNumberToObject(row, "baseline_median_us", round_to(sx.median, 0.1));
		cJSON_AddNumberToObject(row, "candidate_median_us", round_to(sy.median, 0.1));
		cJSON_AddNumberToObject(row, "baseline_min_us", round_to(sx.min, 0.1));
		cJSON_AddNumberToObject(row, "candidate_min_us", round_to(sy.min, 0.1));
	}
	if (compare_samples(x, nx, y, ny, REPORT_COMPARE_RESAMPLES, seed_of(key) ^ seed_of(variant), row,
			    &change, &significant) < 0) {
		free(x);
		free(y);
		return not_comparable(row, "the baseline's times are zero");
	}
	if (stats_bootstrap_ratio_ci(x, nx, y, ny, STATS_MIN, 0.95, REPORT_COMPARE_RESAMPLES,
				     seed_of(variant), &lo, &hi) == 0) {
		cJSON_AddNumberToObject(row, "min_ratio_ci_low", round_to(lo, 0.0001));
		cJSON_AddNumberToObject(row, "min_ratio_ci_high", round_to(hi, 0.0001));
	}
	free(x);
	free(y);
	cJSON_AddStringToObject(row, "status", !significant ? "no_significant_change"
					       : change > 0 ? "slower" : "faster");
	cJSON_AddBoolToObject(row, "regression", significant && change > 0 && change > max_regression);
	return row;
}

int report_compare(struct store *store, long long baseline_id, long long candidate_id,
		   double max_regression, cJSON **ret_comparison)
{
	struct compare_side base = {cJSON_CreateObject()}, cand = {cJSON_CreateObject()};
	cJSON *base_job = NULL, *cand_job = NULL, *out = NULL, *rows, *counts;
	const cJSON *v, *cell;
	const char *global_reason = NULL;
	int rc, regressions = 0, comparable = 0;

	if ((rc = store_job_get(store, baseline_id, &base_job)) < 0 ||
	    (rc = store_job_get(store, candidate_id, &cand_job)) < 0 ||
	    (rc = store_job_report_rows(store, baseline_id, true, collect_side, &base)) < 0 ||
	    (rc = store_job_report_rows(store, candidate_id, true, collect_side, &cand)) < 0)
		goto done;
	if (!cJSON_Compare(get(get(base_job, "spec"), "generator"), get(get(cand_job, "spec"), "generator"), true))
		global_reason = "the jobs' generator parameters differ";
	else if (strcmp(string(base_job, "family"), string(cand_job, "family")) != 0)
		global_reason = "the jobs study different families";

	out = cJSON_CreateObject();
	for (int side = 0; side < 2; side++) {
		const cJSON *job = side ? cand_job : base_job;
		cJSON *j = cJSON_AddObjectToObject(out, side ? "candidate" : "baseline");
		cJSON_AddNumberToObject(j, "id", number(job, "id", 0));
		cJSON_AddStringToObject(j, "name", string(job, "name"));
		cJSON_AddStringToObject(j, "state", string(job, "state"));
	}
	cJSON_AddNumberToObject(out, "max_regression_pct", max_regression);
	rows = cJSON_CreateArray();
	cJSON_ArrayForEach(v, get(get(base_job, "spec"), "variants")) {
		cJSON_ArrayForEach(cell, base.cells) {
			cJSON *row = compare_row(string(v, "name"), cell->string, cell, get(cand.cells, cell->string),
						 global_reason, max_regression);
			regressions += cJSON_IsTrue(get(row, "regression"));
			comparable += strcmp(string(row, "status"), "not_comparable") != 0;
			cJSON_AddItemToArray(rows, row);
		}
	}
	cJSON_AddStringToObject(out, "verdict", regressions ? "regression" : comparable ? "ok" : "not_comparable");
	counts = cJSON_AddObjectToObject(out, "counts");
	{
		static const char *const statuses[] = {"faster", "slower", "no_significant_change", "not_comparable"};
		for (size_t i = 0; i < 4; i++) {
			int n = 0;
			cJSON_ArrayForEach(cell, rows)
				n += strcmp(string(cell, "status"), statuses[i]) == 0;
			cJSON_AddNumberToObject(counts, statuses[i], n);
		}
		cJSON_AddNumberToObject(counts, "regressions", regressions);
	}
	cJSON_AddItemToObject(out, "rows", rows);
	{
		cJSON *significance = cJSON_AddObjectToObject(out, "significance");
		cJSON_AddStringToObject(significance, "test", "mann-whitney-u, two-sided");
		cJSON_AddNumberToObject(significance, "alpha", REPORT_ALPHA);
		cJSON_AddNumberToObject(significance, "min_effect_pct", REPORT_MIN_EFFECT_PCT);
		cJSON_AddStringToObject(significance, "ci", "bootstrap percentile of the ratio of medians, 95 %");
	}
	*ret_comparison = out;
	out = NULL;
done:
	cJSON_Delete(out);
	cJSON_Delete(base_job);
	cJSON_Delete(cand_job);
	cJSON_Delete(base.cells);
	cJSON_Delete(cand.cells);
	return rc;
}
