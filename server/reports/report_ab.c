/*
 * report_ab.c - an A/B program job's builds against its base build, paired
 * by pass (report_ab(), report.h).
 *
 * A job of several builds ("program": {"builds": [...]}, job_spec.h) runs
 * every variant once per build in one task; its result names them
 * "LABEL:PRESET" with "build" and "preset". The agent's warm timer runs
 * every program once per pass, in a fresh shuffle, into slot k of its
 * samples: build B's sample k and the base's sample k were taken moments
 * apart on one machine. So the figure is r_k = B_k / base_k, its median
 * the effect, and a percentile bootstrap over passes its 95 % interval
 * (stats_bootstrap_ci() on the r_k: pass k moves as a whole); the sign
 * test of the r_k against 1 is its p-value. Each side's floor ratio paired
 * by pass (report_paired.c) is given beside it; and the files each build
 * changed against the base (ab_files()). PE and ELF programs alike:
 * docs/program-family.md, "Two builds in one job", docs/program-elf.md.
 */
#include "report.h"
#include "report_compare_counters.h"
#include "report_int.h"
#include "report_judge_rules.h"
#include "report_paired.h"

#include "loadlab/array.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AB_RESAMPLES 2000

/* Two-sided sign test: P(|K - N/2| >= |K_OBS - N/2|) for K ~ Bin(N, 1/2). */
static double sign_test_p(size_t above, size_t n)
{
	double lo = (double)(above < n - above ? above : n - above), p = 0;

	if (n == 0)
		return 1;
	for (size_t k = 0; k <= (size_t)lo; k++)
		p += exp(lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) -
			 (double)n * log(2.0));
	p *= 2;
	return p > 1 ? 1 : p;
}

struct ab_side {
	double *x; /* warm samples as measured */
	size_t n;
};

static void side_release(struct ab_side *s)
{
	free(s->x);
	s->x = NULL;
	s->n = 0;
}

/* VARIANT's figure per run in measured order: its warm samples (COUNTER
 * < 0) or its run counter COUNTER per run (report_counter_series(), one
 * value per sample); LL_ENOTFOUND without, *RET_WHY (may be NULL: no
 * run counters at all) when the counter was not counted. */
static int side_of(const cJSON *variant, int counter, struct ab_side *ret, const char **ret_why)
{
	const cJSON *warm = get(variant, "warm");
	double *x = NULL;
	size_t n = 0;

	*ret_why = NULL;
	if (!variant || cJSON_IsFalse(get(variant, "valid")) ||
	    report_samples_of(get(warm, "samples_us"), &x, &n) < 0)
		return LL_ENOTFOUND;
	if (counter >= 0) {
		double *c = NULL;
		int rc = report_counter_series(warm, (enum report_counter)counter, n, &c, ret_why);
		free(x);
		x = c;
		if (rc < 0) {
			*ret_why = *ret_why ? *ret_why
					    : "its result has no run counters (an agent before issue 40)";
			return LL_EUNSUPPORTED;
		}
	}
	ret->x = x;
	ret->n = n;
	return 0;
}

static void not_comparable(cJSON *row, const char *reason)
{
	cJSON_AddStringToObject(row, "status", "not_comparable");
	cJSON_AddBoolToObject(row, "regression", false);
	cJSON_AddStringToObject(row, "reason", reason);
}

/* The floor ratios of both sides, paired by pass (report_paired.c). */
static void add_floor_ratio(cJSON *row, const struct ab_side *base, const struct ab_side *cand,
			    const struct ab_side *floor, uint64_t seed)
{
	struct report_compare_variant bv = {.n = (uint32_t)base->n}, cv = {.n = (uint32_t)cand->n},
				      fv = {.n = (uint32_t)floor->n};
	struct report_paired_side bs = {&bv, &fv, base->x, floor->x}, cs = {&cv, &fv, cand->x, floor->x};
	double mb, mc, lo, hi;
	cJSON *o;

	if (!floor->n || report_paired_floor_ratio(&bs, &cs, false, seed, &mb, &mc, &lo, &hi) < 0) {
		err_clear();
		return;
	}
	if ((o = cJSON_AddObjectToObject(row, "floor_ratio"))) {
		cJSON_AddNumberToObject(o, "base", mb);
		cJSON_AddNumberToObject(o, "candidate", mc);
		cJSON_AddNumberToObject(o, "ratio", mc / mb);
		cJSON_AddNumberToObject(o, "ci_low", lo);
		cJSON_AddNumberToObject(o, "ci_high", hi);
	}
}

struct ab_counts {
	int rows, slower, faster, unchanged, not_comparable, regressions, underpowered;
};

/* What every row of a comparison shares: the figure judged (COUNTER < 0:
 * the warm time; else the run counter report_counter_of(METRIC)), the
 * threshold, and the tallies. */
struct ab_judging {
	int counter;
	double max_regression;
	struct ab_counts counts;
};

/* A row that has no verdict: REASON ("not counted: ..." for a figure a
 * side did not count). */
static void row_not_comparable(cJSON *row, struct ab_counts *counts, const char *reason)
{
	not_comparable(row, reason);
	counts->not_comparable++;
}

/* "detectable_pct" from the row's interval LOW .. HIGH under the
 * per-sample rule that judged it (report_judge_detectable_pct()), and
 * "underpowered" with "detectable_note" when that is above the
 * threshold and the row is not SIGNIFICANT, as two jobs' compare says it
 * (report_judge.c). */
static void add_detectable(cJSON *row, double low, double high, bool significant, struct ab_judging *j)
{
	double detectable = report_judge_detectable_pct(low, high, true);
	char note[96];

	if (!isfinite(detectable))
		return;
	cJSON_AddNumberToObject(row, "detectable_pct", round(detectable * 100) / 100);
	if (significant || !(detectable > j->max_regression))
		return;
	snprintf(note, sizeof(note), "this row could only see changes above %.1f %%", detectable);
	cJSON_AddBoolToObject(row, "underpowered", true);
	cJSON_AddStringToObject(row, "detectable_note", note);
	j->counts.underpowered++;
}

/* One row: BUILD's PRESET against the base's, in the cell KEY, on the
 * figure J judges. */
static int ab_row(const cJSON *variants, const struct ab_side *floor, const char *base_label,
		  const char *label, const char *preset, const char *key, struct ab_judging *j, cJSON *rows)
{
	char base_name[JOB_SPEC_MAX_NAME * 2], cand_name[JOB_SPEC_MAX_NAME * 2], why[600];
	struct ab_side b = {0}, c = {0};
	struct ab_counts *counts = &j->counts;
	cJSON *row = json_array_add_object(rows);
	double *r = NULL, ratio, lo, hi, mb, mc, p;
	const char *base_why = NULL, *cand_why = NULL;
	size_t above = 0, ties = 0;
	int rc = 0, brc, crc;

	if (!row)
		return LL_ENOMEM;
	snprintf(base_name, sizeof(base_name), "%s:%s", base_label, preset);
	snprintf(cand_name, sizeof(cand_name), "%s:%s", label, preset);
	cJSON_AddStringToObject(row, "variant", preset);
	cJSON_AddStringToObject(row, "cell", key);
	cJSON_AddStringToObject(row, "base", base_label);
	cJSON_AddStringToObject(row, "build", label);
	counts->rows++;
	brc = side_of(report_find_variant(variants, base_name), j->counter, &b, &base_why);
	crc = side_of(report_find_variant(variants, cand_name), j->counter, &c, &cand_why);
	if (brc == LL_ENOTFOUND || crc == LL_ENOTFOUND) {
		row_not_comparable(row, counts, "A build of this variant is invalid or has no warm samples.");
		goto out;
	}
	if (brc < 0 || crc < 0) {
		snprintf(why, sizeof(why), "not counted: %s (%s, build %s)", brc < 0 ? base_why : cand_why,
			 report_counter_name((enum report_counter)j->counter), brc < 0 ? base_label : label);
		row_not_comparable(row, counts, why);
		goto out;
	}
	struct stats_sample sc = {c.x, c.n, NULL, 0}, sb = {b.x, b.n, NULL, 0};
	if (!(r = malloc(c.n * sizeof(*r)))) {
		rc = LL_ENOMEM;
		goto out;
	}
	uint64_t seed = stats_seed_of(key) ^ stats_seed_of(cand_name) ^ stats_seed_of("ab");
	/* report_bootstrap_ci(): stats_bootstrap_ci()'s draws and interval
	 * bit for bit, without copying and selecting in every resample
	 * (profiled: that was 89 % of a compare of 20,000 passes). */
	if (c.n < 5 || stats_paired_ratios(&sc, &sb, r) < 0 || stats_median(r, c.n, &ratio) < 0 ||
	    report_bootstrap_ci(r, c.n, STATS_MEDIAN, 0.95, AB_RESAMPLES, seed, false, &lo, &hi) < 0 ||
	    stats_median(b.x, b.n, &mb) < 0 || stats_median(c.x, c.n, &mc) < 0) {
		err_clear();
		row_not_comparable(row, counts,
				   j->counter < 0 ? "The two builds' samples cannot be paired by pass (their "
						    "counts differ, fewer than 5, or a sample is 0)."
						  : "The two builds' counts cannot be paired by pass (their "
						    "numbers differ, fewer than 5, or a count is 0).");
		goto out;
	}
	for (size_t k = 0; k < c.n; k++) {
		above += r[k] > 1;
		ties += r[k] == 1;
	}
	p = sign_test_p(above, c.n - ties);
	double change = (ratio - 1) * 100;
	bool significant = report_judge_per_sample(p, lo, hi, change); /* the one judge's rule */
	bool regression = significant && change > 0 && change > j->max_regression;
	const char *status = !significant ? "no_significant_change" : change > 0 ? "slower" : "faster";
	cJSON_AddNumberToObject(row, "pairs", (double)c.n);
	if (j->counter < 0) {
		cJSON_AddNumberToObject(row, "base_median_us", mb);
		cJSON_AddNumberToObject(row, "candidate_median_us", mc);
	} else {
		cJSON_AddStringToObject(row, "unit", report_counter_name((enum report_counter)j->counter));
		cJSON_AddNumberToObject(row, "base_median", mb);
		cJSON_AddNumberToObject(row, "candidate_median", mc);
	}
	cJSON_AddNumberToObject(row, "ratio", ratio);
	cJSON_AddNumberToObject(row, "ci_low", lo);
	cJSON_AddNumberToObject(row, "ci_high", hi);
	cJSON_AddNumberToObject(row, "change_pct", change);
	cJSON_AddNumberToObject(row, "passes_slower", (double)above);
	cJSON_AddNumberToObject(row, "p_value", p);
	cJSON_AddStringToObject(row, "status", status);
	cJSON_AddBoolToObject(row, "regression", regression);
	add_detectable(row, lo, hi, significant, j);
	add_floor_ratio(row, &b, &c, floor, seed);
	counts->slower += strcmp(status, "slower") == 0;
	counts->faster += strcmp(status, "faster") == 0;
	counts->unchanged += !significant;
	counts->regressions += regression;
out:
	free(r);
	side_release(&b);
	side_release(&c);
	return rc;
}

struct ab_walk {
	const cJSON *program, *variants; /* the job's normalized program section and variants */
	struct ab_judging judging;
	cJSON *rows;
	/* the job's tasks with a result, in task order (ab_collect()) */
	struct ab_task {
		char key[512]; /* the cell's key */
		long long result_id;
	} * tasks;
	size_t task_count, task_room;
};

/* The walk of the job's tasks keeps each one's cell and result id only:
 * the store's reader is held during the walk, and /healthz and every
 * other reader wait for it, so the results are read and compared after
 * it (ab_task()), one at a time. */
static int ab_collect(void *context, const struct store_report_row *row)
{
	struct ab_walk *w = context;
	struct ab_task *tasks;
	cJSON *cell = NULL;

	if (!row->result_id)
		return 0; /* a cell without a result yet: no rows */
	if (!(tasks = array_grow(w->tasks, w->task_count, &w->task_room, sizeof(*tasks), 16)))
		return LL_ENOMEM;
	w->tasks = tasks;
	json_parse_object(row->cell, strlen(row->cell), 0, &cell);
	report_cell_key(cell, tasks[w->task_count].key, sizeof(tasks[w->task_count].key));
	cJSON_Delete(cell);
	err_clear();
	tasks[w->task_count++].result_id = row->result_id;
	return 0;
}

/* The rows of one task's result (T): each build after the first against
 * the first, preset by preset. */
static int ab_task(struct store *store, struct ab_walk *w, const struct ab_task *t)
{
	cJSON *result = NULL;
	struct ab_side floor = {0};
	const char *base_label, *label, *why;
	const cJSON *preset;
	char *body = NULL;
	int rc = 0;

	if (store_result_get(store, t->result_id, &body) < 0 ||
	    json_parse_object(body, strlen(body), REPORT_MAX_BODY_DEPTH, &result) < 0) {
		free(body);
		err_clear();
		return 0; /* gone meanwhile (retention), or unreadable: no rows */
	}
	free(body);
	side_of(get(result, "floor"), w->judging.counter, &floor, &why); /* none: no floor ratio */
	err_clear();
	job_spec_program_build(w->program, 0, &base_label);
	for (int b = 1; rc == 0 && job_spec_program_build(w->program, b, &label); b++)
		cJSON_ArrayForEach(preset, w->variants) {
			const char *name = cJSON_GetStringValue(get(preset, "name"));
			if (name && (rc = ab_row(get(result, "variants"), &floor, base_label, label, name,
						 t->key, &w->judging, w->rows)) < 0)
				break;
		}
	side_release(&floor);
	cJSON_Delete(result);
	return rc;
}

/* "files": per build after the first, {"build", "base", "same_files",
 * "added", "removed", "changed", "unchanged"}: the files that differ from
 * the base build's, by path and digest (report_program_files_diff(), the
 * two jobs' comparison's own), from the job's manifests: the digests the
 * agent fetched and checked every file by. PE and ELF builds alike. */
static int ab_files(const cJSON *program, cJSON *out)
{
	cJSON *list = cJSON_AddArrayToObject(out, "files");
	const char *base_label = NULL, *label;
	const cJSON *base = job_spec_program_build(program, 0, &base_label), *build;
	int rc;

	if (!list)
		return LL_ENOMEM;
	for (int b = 1; (build = job_spec_program_build(program, b, &label)); b++) {
		cJSON *o = json_array_add_object(list);
		bool same = false;
		if (!o || !cJSON_AddStringToObject(o, "build", label ? label : "") ||
		    !cJSON_AddStringToObject(o, "base", base_label ? base_label : ""))
			return LL_ENOMEM;
		if ((rc = report_program_files_diff(get(base, "files"), get(build, "files"), o, &same)) < 0)
			return rc;
		if (!cJSON_AddBoolToObject(o, "same_files", same))
			return LL_ENOMEM;
	}
	return 0;
}

int report_ab(struct store *store, long long job_id, double max_regression_pct, cJSON **ret)
{
	return report_ab_metric(store, job_id, max_regression_pct, REPORT_METRIC_AUTO, false, ret);
}

int report_ab_metric(struct store *store, long long job_id, double max_regression_pct,
		     enum report_metric metric, bool require_power, cJSON **ret)
{
	struct ab_walk w = {
		.judging = {.counter = report_counter_of(metric), .max_regression = max_regression_pct}};
	struct ab_counts *n = &w.judging.counts;
	cJSON *job = NULL, *out = NULL, *labels, *counts, *power;
	const char *label;
	int rc;

	if (metric != REPORT_METRIC_AUTO && w.judging.counter < 0)
		return err_set(LL_EINVAL, "%s", REPORT_AB_METRICS_WORDS);
	if ((rc = store_job_get(store, job_id, &job)) < 0)
		return rc;
	w.program = get(get(job, "spec"), "program");
	w.variants = get(get(job, "spec"), "variants");
	if (!get(w.program, "builds")) {
		rc = err_set(LL_EINVAL,
			     "Job %lld is not an A/B job: its program names one build, not "
			     "'program.builds'.",
			     job_id);
		goto out;
	}
	if (!(out = cJSON_CreateObject()) || !cJSON_AddNumberToObject(out, "job", (double)job_id) ||
	    !(labels = cJSON_AddArrayToObject(out, "builds"))) {
		rc = LL_ENOMEM;
		goto out;
	}
	for (int b = 0; job_spec_program_build(w.program, b, &label); b++)
		cJSON_AddItemToArray(labels, cJSON_CreateString(label));
	if ((rc = ab_files(w.program, out)) < 0)
		goto out;
	job_spec_program_build(w.program, 0, &label);
	cJSON_AddStringToObject(out, "base", label);
	cJSON_AddStringToObject(out, "state", cJSON_GetStringValue(get(job, "state")));
	cJSON_AddNumberToObject(out, "max_regression_pct", max_regression_pct);
	cJSON_AddStringToObject(out, "metric",
				metric == REPORT_METRIC_AUTO ? "paired-ratio" : report_metric_name(metric));
	if (!(w.rows = cJSON_CreateArray())) {
		rc = LL_ENOMEM;
		goto out;
	}
	if ((rc = store_job_report_rows(store, job_id, false, REPORT_SUMMARY_VERSION, ab_collect, &w)) < 0)
		goto out;
	for (size_t i = 0; i < w.task_count; i++)
		if ((rc = ab_task(store, &w, &w.tasks[i])) < 0)
			goto out;
	cJSON_AddStringToObject(out, "verdict",
				n->regressions                         ? "regression"
				: require_power && n->underpowered > 0 ? "underpowered"
				: n->rows > n->not_comparable          ? "ok"
								       : "not_comparable");
	if ((counts = cJSON_AddObjectToObject(out, "counts"))) {
		cJSON_AddNumberToObject(counts, "rows", n->rows);
		cJSON_AddNumberToObject(counts, "regressions", n->regressions);
		cJSON_AddNumberToObject(counts, "slower", n->slower);
		cJSON_AddNumberToObject(counts, "faster", n->faster);
		cJSON_AddNumberToObject(counts, "no_significant_change", n->unchanged);
		cJSON_AddNumberToObject(counts, "not_comparable", n->not_comparable);
		cJSON_AddNumberToObject(counts, "underpowered", n->underpowered);
	}
	if ((power = cJSON_AddObjectToObject(out, "power"))) {
		cJSON_AddBoolToObject(power, "required", require_power);
		cJSON_AddNumberToObject(power, "underpowered_rows", n->underpowered);
	}
	cJSON_AddItemToObject(out, "rows", w.rows);
	w.rows = NULL;
	*ret = out;
	out = NULL;
out:
	free(w.tasks);
	cJSON_Delete(w.rows);
	cJSON_Delete(out);
	cJSON_Delete(job);
	return rc;
}
