/* One result's summary (report.h, report_summarize_result()) and the
 * statistics shared with comparisons: see report_int.h. */
#include "summary.h"
#include "report_loader_work.h"

#include "report_int.h"
#include "report_judge_rules.h"
#include "store/store.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* VS's "detectable_pct": the least change its star could see, from the
 * interval it shows (the per-sample rule; report_judge_detectable_pct()). */
static void add_detectable(cJSON *vs)
{
	double d = report_judge_detectable_pct(number(vs, "ratio_ci_low", NAN),
					       number(vs, "ratio_ci_high", NAN), true);

	if (isfinite(d))
		cJSON_AddNumberToObject(vs, "detectable_pct", round_to(d, 0.01));
}

void report_compare_figures(const struct stats_summary *sx, const struct stats_summary *sy, double p,
			    double lo, double hi, cJSON *out, double *ret_change, bool *ret_significant)
{
	double change = (sy->median / sx->median - 1) * 100;
	bool significant = report_judge_per_sample(p, lo, hi, change); /* the report's star */

	cJSON_AddNumberToObject(out, "change_pct", round_to(change, 0.01));
	cJSON_AddNumberToObject(out, "min_change_pct", round_to((sy->min / sx->min - 1) * 100, 0.01));
	cJSON_AddNumberToObject(out, "ratio", round_to(sy->median / sx->median, 0.0001));
	cJSON_AddNumberToObject(out, "ratio_ci_low", round_to(lo, 0.0001));
	cJSON_AddNumberToObject(out, "ratio_ci_high", round_to(hi, 0.0001));
	cJSON_AddNumberToObject(out, "p_value", p);
	cJSON_AddBoolToObject(out, "significant", significant);
	*ret_change = change;
	*ret_significant = significant;
}

int report_compare_samples(struct report_sample *x, const struct stats_summary *sx, struct report_sample *y,
			   const struct stats_summary *sy, int resamples, uint64_t seed, bool keep,
			   cJSON *out, double *ret_change, bool *ret_significant)
{
	double u, p, lo, hi;
	int rc;

	report_mann_whitney(y, x, &u, &p);
	if (sx->median <= 0 || sx->min <= 0)
		return err_set(LL_EINVAL, "The baseline's times are zero.");
	if ((rc = report_sample_bootstrap_ratio_ci(x, y, STATS_MEDIAN, 0.95, resamples, seed, keep, &lo,
						   &hi)) < 0)
		return rc;
	report_compare_figures(sx, sy, p, lo, hi, out, ret_change, ret_significant);
	return 0;
}

/* What the agent recorded of the machine's other work while the cell was
 * measured (warm.noise, docs/statistics.md): its figures, numbers only;
 * an array of per-run figures is summarized by its mean (and its largest
 * into max_other_cpu_pct when that is absent). NULL when there is none. */
static cJSON *noise_of(const cJSON *noise)
{
	static const char *const fields[] = {"other_cpu_pct", "max_other_cpu_pct", "disk_ios", "flagged",
					     "retaken"};
	cJSON *out = NULL;

	if (!cJSON_IsObject(noise))
		return NULL;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const cJSON *f = get(noise, fields[i]), *item;
		double v = 0, largest = 0;
		int n = 0;
		if (cJSON_IsNumber(f) && isfinite(f->valuedouble)) {
			v = f->valuedouble;
			n = 1;
		} else if (cJSON_IsArray(f)) {
			cJSON_ArrayForEach(item, f) {
				if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble))
					continue;
				largest = n == 0 || item->valuedouble > largest ? item->valuedouble : largest;
				v += item->valuedouble;
				n++;
			}
			if (n)
				v /= n;
			if (n && i == 0 && !cJSON_IsNumber(get(noise, "max_other_cpu_pct"))) {
				if (!out)
					out = cJSON_CreateObject();
				cJSON_AddNumberToObject(out, "max_other_cpu_pct", round_to(largest, 0.1));
			}
		}
		if (!n)
			continue;
		if (!out)
			out = cJSON_CreateObject();
		if (!get(out, fields[i]))
			cJSON_AddNumberToObject(out, fields[i], round_to(v, 0.1));
	}
	return out;
}

static cJSON *summarize_warm(struct report_sample *x, const char *name)
{
	struct stats_summary s;
	double lo, hi;
	size_t outliers;
	cJSON *w;

	report_sample_summary(x, &s);
	if (report_sample_bootstrap_ci(x, STATS_MEDIAN, 0.95, REPORT_RESAMPLES, stats_seed_of(name), true,
				       &lo, &hi) < 0)
		return NULL;
	outliers = report_sample_outliers(x, &s, 3.5);
	w = cJSON_CreateObject();
	cJSON_AddNumberToObject(w, "n", (double)x->n);
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

/* The per-run array KEY of the cold runs COLD, as a sample; false when
 * it has none. */
static bool cold_sample(const cJSON *cold, const char *key, struct report_sample *s, double **x)
{
	size_t n = 0;

	free(*x);
	*x = NULL;
	return report_samples_of(get(cold, key), x, &n) == 0 && report_sample_set(s, *x, n) == 0;
}

static double mean_of(const cJSON *array, bool *ret_present)
{
	double *x = NULL, sum = 0;
	size_t n = 0;

	*ret_present = false;
	if (report_samples_of(array, &x, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	free(x);
	*ret_present = true;
	return sum / (double)n;
}

static cJSON *summarize_cold(const cJSON *cold, const char *name, struct report_sample *sample)
{
	struct stats_summary s;
	double *x = NULL, v, lo, hi;
	size_t n = 0;
	bool present;
	cJSON *c;
	static const char *const means[][2] = {
		{"page_faults", "page_faults_mean"}, {"hard_faults", "hard_faults_mean"},
		{"soft_faults", "soft_faults_mean"}, {"read_bytes", "read_bytes_mean"},
		{"read_ops", "read_ops_mean"},
	};

	if (report_samples_of(get(cold, "samples_us"), &x, &n) < 0)
		return NULL;
	if (report_sample_set(sample, x, n) < 0) {
		free(x);
		return NULL;
	}
	report_sample_summary(sample, &s);
	c = cJSON_CreateObject();
	cJSON_AddNumberToObject(c, "n", (double)n);
	cJSON_AddNumberToObject(c, "mean_us", round_to(s.mean, 0.1));
	cJSON_AddNumberToObject(c, "stddev_us", round_to(s.stddev, 0.1));
	cJSON_AddNumberToObject(c, "median_us", round_to(s.median, 0.1));
	if (report_sample_bootstrap_ci(sample, STATS_MEDIAN, 0.95, REPORT_RESAMPLES,
				       stats_seed_of(name) ^ stats_seed_of("cold"), false, &lo, &hi) == 0) {
		cJSON_AddNumberToObject(c, "ci_low_us", round_to(lo, 0.1));
		cJSON_AddNumberToObject(c, "ci_high_us", round_to(hi, 0.1));
	}
	for (size_t i = 0; i < sizeof(means) / sizeof(means[0]); i++) {
		v = mean_of(get(cold, means[i][0]), &present);
		if (present)
			cJSON_AddNumberToObject(c, means[i][1], round_to(v, 0.1));
	}
	for (size_t i = 0; i < 2; i++) { /* page faults and bytes read */
		static const char *const medians[][2] = {{"page_faults", "page_faults_median"},
							 {"read_bytes", "read_bytes_median"}};
		if (cold_sample(cold, medians[i][0], sample, &x))
			cJSON_AddNumberToObject(
				c, medians[i][1],
				round_to(stats_quantile_sorted(sample->sorted, sample->n, 0.5), 0.1));
	}
	free(x);
	/* Never pretend: a run whose cache eviction failed is not cold. */
	cJSON_AddBoolToObject(c, "cold", !cJSON_IsFalse(get(cold, "cold")));
	cJSON_AddStringToObject(c, "method", string(cold, "method") ? string(cold, "method") : "unknown");
	if (cJSON_IsArray(get(cold, "modules")))
		cJSON_AddItemToObject(c, "modules", cJSON_Duplicate(get(cold, "modules"), true));
	return c;
}

static void add_cold_vs(cJSON *mine, const cJSON *base)
{
	static const char *const keys[][2] = {
		{"mean_us", "time_pct"},
		{"page_faults_mean", "page_faults_pct"},
		{"read_bytes_mean", "read_bytes_pct"},
	};
	cJSON *vs = cJSON_AddObjectToObject(mine, "vs_baseline");

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		double b = number(base, keys[i][0], -1), m = number(mine, keys[i][0], -1);
		if (b > 0 && m >= 0)
			cJSON_AddNumberToObject(vs, keys[i][1], round_to(m / b * 100, 0.01));
	}
}

/* The cold start of the variant NAME (cold runs MINE) against the
 * baseline's (BASE), added to VS: the time's median ratio with its
 * interval and significance as the warm table's (report_compare_samples()),
 * and per page faults and bytes read the median's change, its Mann-Whitney
 * p and its significance by the same rule. SX and SY are room. */
static void add_cold_significance(cJSON *vs, const cJSON *base, const cJSON *mine, const char *name,
				  struct report_sample *sx, struct report_sample *sy)
{
	static const char *const counts[] = {"page_faults", "read_bytes"};
	uint64_t seed = stats_seed_of(name) ^ stats_seed_of("cold");
	struct stats_summary a, b;
	double *x = NULL, *y = NULL, change, u, p, lo, hi;
	bool significant;

	if (cold_sample(base, "samples_us", sx, &x) && cold_sample(mine, "samples_us", sy, &y)) {
		report_sample_summary(sx, &a);
		report_sample_summary(sy, &b);
		report_compare_samples(sx, &a, sy, &b, REPORT_RESAMPLES, seed, false, vs, &change,
				       &significant);
	}
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		char key[64];
		if (!cold_sample(base, counts[i], sx, &x) || !cold_sample(mine, counts[i], sy, &y))
			continue;
		report_sample_summary(sx, &a);
		report_sample_summary(sy, &b);
		if (!(a.median > 0) ||
		    report_sample_bootstrap_ratio_ci(sx, sy, STATS_MEDIAN, 0.95, REPORT_RESAMPLES,
						     seed ^ stats_seed_of(counts[i]), false, &lo, &hi) < 0)
			continue;
		report_mann_whitney(sy, sx, &u, &p);
		change = (b.median / a.median - 1) * 100;
		snprintf(key, sizeof(key), "%s_change_pct", counts[i]);
		cJSON_AddNumberToObject(vs, key, round_to(change, 0.01));
		snprintf(key, sizeof(key), "%s_p_value", counts[i]);
		cJSON_AddNumberToObject(vs, key, p);
		snprintf(key, sizeof(key), "%s_significant", counts[i]);
		cJSON_AddBoolToObject(vs, key, report_judge_per_sample(p, lo, hi, change));
	}
	free(x);
	free(y);
}

/* The empty program timed in the same run (ROOT's floor.warm): each
 * warm variant's cell in BY_NAME gets "floor_median_us" and "x_floor",
 * its median over the floor's (DESIGN.md's "× an empty program"), so a
 * report shows what the loader adds beyond starting a process. SX is room
 * for the floor's samples. */
static void add_floor(const cJSON *root, cJSON *by_name, struct report_sample *sx)
{
	struct stats_summary floor;
	double *x = NULL;
	size_t n = 0;
	cJSON *v;

	if (report_samples_of(get(get(get(root, "floor"), "warm"), "samples_us"), &x, &n) < 0)
		return;
	if (report_sample_set(sx, x, n) == 0) {
		report_sample_summary(sx, &floor);
		cJSON_ArrayForEach(v, by_name) {
			cJSON *w = cJSON_GetObjectItemCaseSensitive(v, "warm");
			if (!w || floor.median <= 0)
				continue;
			cJSON_AddNumberToObject(w, "floor_median_us", round_to(floor.median, 0.1));
			cJSON_AddNumberToObject(w, "x_floor",
						round_to(number(w, "median_us", 0) / floor.median, 0.001));
		}
	}
	free(x);
}

/* The summary of the parsed result ROOT; SX and SY are room for samples. */
static cJSON *summarize_root(const cJSON *root, struct report_sample *sx_room, struct report_sample *sy_room)
{
	const cJSON *variants, *v, *base_warm = NULL, *base_cold = NULL;
	cJSON *out, *by_name;
	const char *warm_base_name = NULL, *cold_base_name = NULL;
	struct report_sample sx = *sx_room, sy = *sy_room;
	struct stats_summary summary_x, summary_y;
	bool program = cJSON_IsString(get(root, "family")) &&
		       strcmp(get(root, "family")->valuestring, "program") == 0;

	variants = get(root, "variants");
	out = cJSON_CreateObject();
	cJSON_AddNumberToObject(out, "v", REPORT_SUMMARY_VERSION);
	cJSON_AddItemToObject(out, "facts",
			      cJSON_IsObject(get(root, "facts")) ? cJSON_Duplicate(get(root, "facts"), true)
								 : cJSON_CreateObject());
	by_name = cJSON_AddObjectToObject(out, "variants");
	if (cJSON_IsObject(get(root, "build_task")))
		cJSON_AddNumberToObject(out, "build_task", number(get(root, "build_task"), "id", 0));
	if (cJSON_IsObject(get(root, "toolchain"))) /* the build's, for a shared build */
		cJSON_AddItemToObject(out, "toolchain", cJSON_Duplicate(get(root, "toolchain"), true));

	cJSON_ArrayForEach(v, variants) {
		const char *name = string(v, "name");
		double *x = NULL;
		size_t n = 0;
		cJSON *s, *w, *c;
		if (!name || get(by_name, name))
			continue;
		s = cJSON_AddObjectToObject(by_name, name);
		if (get(root, "build_task"))
			report_shipped_summary(v, s);
		/* An invalid variant's too: its counts may say why. */
		report_loader_work_summary(v, s);
		if (cJSON_IsFalse(get(v, "valid"))) {
			cJSON_AddBoolToObject(s, "valid", false);
			cJSON_AddStringToObject(s, "reason",
						string(v, "invalid_reason") ? string(v, "invalid_reason")
									    : "verification failed");
			continue;
		}
		cJSON_AddBoolToObject(s, "valid", true);
		if (report_samples_of(get(get(v, "warm"), "samples_us"), &x, &n) == 0) {
			if (report_sample_set(&sx, x, n) == 0 && (w = summarize_warm(&sx, name))) {
				cJSON *noise = noise_of(get(get(v, "warm"), "noise"));
				if (noise)
					cJSON_AddItemToObject(w, "noise", noise);
				cJSON_AddItemToObject(s, "warm", w);
			}
			free(x);
		}
		if ((c = summarize_cold(get(v, "cold"), name, &sx)))
			cJSON_AddItemToObject(s, "cold", c);
	}

	add_floor(root, by_name, &sx);

	/* Baselines: the column's `default` for warm times (else a
	 * program's `as-built`), the office study's `rebase` for cold starts
	 * (a program's `as-built`), else the first variant that has the
	 * figures; report_job.c's tables name the same. */
	if (get(get(by_name, "default"), "warm"))
		warm_base_name = "default";
	else if (get(get(by_name, "as-built"), "warm"))
		warm_base_name = "as-built";
	if (program && get(get(by_name, "as-built"), "cold"))
		cold_base_name = "as-built";
	else if (get(get(by_name, "rebase"), "cold"))
		cold_base_name = "rebase";
	cJSON_ArrayForEach(v, by_name) {
		if (!warm_base_name && get(v, "warm"))
			warm_base_name = v->string;
		if (!base_cold && get(v, "cold"))
			base_cold = get(v, "cold");
	}
	if (cold_base_name)
		base_cold = get(get(by_name, cold_base_name), "cold");
	cJSON_AddItemToObject(out, "warm_baseline",
			      warm_base_name ? cJSON_CreateString(warm_base_name) : cJSON_CreateNull());
	cJSON_AddItemToObject(out, "cold_baseline",
			      base_cold ? cJSON_CreateString(cold_base_name ? cold_base_name : "first")
					: cJSON_CreateNull());
	if (warm_base_name) {
		const cJSON *bv = report_find_variant(variants, warm_base_name);
		double *bx = NULL;
		size_t bn = 0;
		base_warm = bv;
		if (report_samples_of(get(get(bv, "warm"), "samples_us"), &bx, &bn) == 0 &&
		    report_sample_set(&sx, bx, bn) == 0) {
			report_sample_summary(&sx, &summary_x);
			cJSON_ArrayForEach(v, variants) {
				const char *name = string(v, "name");
				cJSON *s = name ? cJSON_GetObjectItemCaseSensitive(by_name, name) : NULL;
				double *x = NULL, change;
				size_t n = 0;
				bool significant;
				if (!s || !get(s, "warm") || v == base_warm || get(s, "vs_baseline") ||
				    report_samples_of(get(get(v, "warm"), "samples_us"), &x, &n) < 0)
					continue;
				if (report_sample_set(&sy, x, n) == 0) {
					cJSON *vs = cJSON_AddObjectToObject(s, "vs_baseline");
					report_sample_summary(&sy, &summary_y);
					if (report_compare_samples(&sx, &summary_x, &sy, &summary_y,
								   REPORT_RESAMPLES, stats_seed_of(name),
								   true, vs, &change, &significant) < 0)
						cJSON_DeleteItemFromObjectCaseSensitive(s, "vs_baseline");
					else /* what the star could have seen (issue 40, report_judge_rules.h) */
						add_detectable(vs);
				}
				free(x);
			}
		}
		free(bx);
	}
	if (base_cold) {
		const char *base_name = cold_base_name;
		cJSON_ArrayForEach(v, by_name)
			if (!base_name && get(v, "cold"))
				base_name = v->string;
		cJSON_ArrayForEach(v, by_name) {
			cJSON *cold = cJSON_GetObjectItemCaseSensitive(v, "cold");
			if (!cold)
				continue;
			add_cold_vs(cold, base_cold);
			if (strcmp(v->string, base_name) != 0)
				add_cold_significance(cJSON_GetObjectItemCaseSensitive(cold, "vs_baseline"),
						      get(report_find_variant(variants, base_name), "cold"),
						      get(report_find_variant(variants, v->string), "cold"),
						      v->string, &sx, &sy);
		}
	}
	if (cJSON_IsArray(get(root, "churn")))
		cJSON_AddItemToObject(out, "churn", cJSON_Duplicate(get(root, "churn"), true));
	*sx_room = sx;
	*sy_room = sy;
	return out;
}

/* The stored result text BODY parsed. It passed json_parse_object() when
 * it was posted (http.c: UTF-8, unique keys, nesting at most 32, stored as
 * sent), so it is only parsed here, not checked again (profiled: the
 * checks were a tenth of a summary's instructions); cJSON bounds its own
 * nesting. LL_EFORMAT when it is not one JSON object. */
static int parse_stored(const char *body, cJSON **ret_root)
{
	size_t len = strlen(body);
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, false);

	while (root && end && (size_t)(end - body) < len && strchr(" \t\r\n", *end))
		end++;
	if (!root || !cJSON_IsObject(root) || !end || (size_t)(end - body) != len) {
		cJSON_Delete(root);
		return err_set(LL_EFORMAT, "The stored result is not a JSON object.");
	}
	*ret_root = root;
	return 0;
}

int report_summarize_result(const char *body, cJSON **ret_summary)
{
	return report_summarize_keyed(body, NULL, ret_summary, NULL, NULL);
}

int report_summarize_keyed(const char *body, const char *key, cJSON **ret_summary, void **ret_compare,
			   size_t *ret_compare_len)
{
	struct report_sample sx = {0}, sy = {0};
	cJSON *root = NULL;
	int rc = parse_stored(body, &root);

	if (rc < 0)
		return rc;
	*ret_summary = summarize_root(root, &sx, &sy);
	if (key && report_compare_data(root, key, &sx, ret_compare, ret_compare_len) < 0)
		*ret_compare = NULL;
	cJSON_Delete(root);
	report_sample_release(&sx);
	report_sample_release(&sy);
	return 0;
}

/* The cell key (report_cell_key()) of the task's CELL (JSON object text)
 * into KEY. */
static void key_of_cell(const char *cell, char *key, size_t size)
{
	cJSON *parsed = NULL;

	json_parse_object(cell, strlen(cell), 0, &parsed);
	report_cell_key(parsed, key, size);
	cJSON_Delete(parsed);
}

int report_summarize_cell(const char *body, const char *cell, cJSON **ret_summary, void **ret_compare,
			  size_t *ret_compare_len)
{
	char key[512];

	key_of_cell(cell, key, sizeof(key));
	return report_summarize_keyed(body, key, ret_summary, ret_compare, ret_compare_len);
}

int report_compare_data_of(const char *body, const char *cell, void **ret_compare, size_t *ret_compare_len)
{
	struct report_sample s = {0};
	cJSON *root = NULL;
	char key[512];
	int rc = parse_stored(body, &root);

	if (rc < 0)
		return rc;
	key_of_cell(cell, key, sizeof(key));
	rc = report_compare_data(root, key, &s, ret_compare, ret_compare_len);
	cJSON_Delete(root);
	report_sample_release(&s);
	return rc;
}
