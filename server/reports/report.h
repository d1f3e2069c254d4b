/*
 * report.h - the studies' tables from stored results, and the comparison
 * of two jobs for CI.
 *
 * Every figure is computed from the raw samples a result carries
 * (docs/rest-bodies.md, "Results, as reports read them"). What one result
 * says on its own — per variant: the summary of its warm samples with a
 * bootstrap CI of the median, the change against the baseline variant of
 * the same task with its Mann-Whitney p-value, cold-start and churn figures
 * — is its summary, computed once and cached in the store; a job's report
 * then reads summaries only.
 *
 * Files (the folder's map; report_int.h is what they share):
 *   summary.c           one result's summary (report_summarize_*());
 *                       summary.h: compare's data of a result, made apart
 *   summary_cache.c     the summary cache's one writer (summary.h)
 *   summarizer.c        summaries and compare data in the background
 *                       (summarizer.h)
 *   report_result.c     the readers of a stored result: its samples, its
 *                       variants, its cell's key (below summary.c,
 *                       report_job.c, report_compare_data.c)
 *   report_stats.c      the sorted sample and the bootstraps, bit for bit
 *                       stats.h's; report_draws.c (report_draws.h) their
 *                       draws and the tables of draws kept
 *   report_job.c        a job's report (report_job())
 *   report_churn.c      its process-churn table against none, findings
 *   report_loader_work.c its loader-work table beside the times, rows
 *                       whose counts contradict their transform flagged
 *                       (report_loader_work.h)
 *   report_annotate.c   its tables' units and what the runner cannot
 *                       show (notes beside the figures)
 *   report_compare.c    two jobs compared: entry points, the rows on
 *                       threads, the comparison written
 *   report_compare_row.c one row: can the sides compare, each metric's
 *                       figures, the verdict (report_compare_row.h)
 *   report_sides.c      each job's tasks and their compare data
 *                       (report_sides.h)
 *   report_compare_data.c what compare needs of one result, cached
 *   report_judge.c      the one judge: every verdict (report_judge.h);
 *                       its rules in report_judge_rules.c
 *   report_between.c    what varies between jobs; the metric a row is
 *                       judged by (report_between.h)
 *   report_paired.c     the floor ratio paired by pass (report_paired.h)
 *   report_compare_counters.c compare on the run counters (cpu, faults,
 *                       instructions) and each row's counts beside its
 *                       times (report_compare_counters.h)
 *   report_compare_program.c two program jobs' files and settings
 *   report_ab.c         an A/B program job's builds against its base
 *   report_cache.c      reports computed on workers, once per job state
 *                       (report_cache.h)
 *   report_series.c     a series' history (report_series())
 *   report_format.c     Markdown and CSV, and a row written as JSON text
 *                       (report_row.h)
 *   calibration.c       an agent's calibration from its result
 *                       (calibration.h)
 *
 * A difference is called significant when the Mann-Whitney p < 0.05, the
 * bootstrap 95 % CI of the ratio of medians excludes 1, and the change is
 * at least 1 %: smaller effects are below what these machines can repeat.
 * Compare treats rounds, when both sides have REPORT_MIN_ROUNDS, as the
 * unit that varies between runs, and can judge the minimum or the median
 * over the empty program's floor instead (docs/statistics.md).
 */
#ifndef LOADLAB_SERVER_REPORT_H
#define LOADLAB_SERVER_REPORT_H

#include "store/store.h"

#include "loadlab/buf.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

/* 2: compare's data cached beside the summary (issue 16); 3: rounds and
 * the floor in compare's data, cold statistics and noise (issue 12); 4:
 * the over-floor interval's ranks in compare's data (issue 16); 5: each warm
 * cell's floor median and x_floor; 6: each warm cell's detectable_pct
 * against the baseline, and the run counters in compare's data (issue 40);
 * 7: each variant's loader work and knobs (report_loader_work.h). */
#define REPORT_SUMMARY_VERSION 7
#define REPORT_ALPHA 0.05
#define REPORT_MIN_EFFECT_PCT 1.0
#define REPORT_MIN_EFFECT (REPORT_MIN_EFFECT_PCT / 100) /* the same, as a ratio's distance from 1 */
#define REPORT_RESAMPLES 500
#define REPORT_COMPARE_RESAMPLES 200
/* Rounds each side needs for compare to resample rounds (docs/statistics.md). */
#define REPORT_MIN_ROUNDS 3

/* The summary of one result body (see above); the caller deletes it.
 * BODY is a stored result's text: it passed json_parse_object() when it
 * was posted and is only parsed here (LL_EFORMAT: not a JSON object). */
int report_summarize_result(const char *body, cJSON **ret_summary);

/* The same, and for a result of a task in the cell KEY (the row's key,
 * "os=win10 disk=ssd") what compare needs of it, cached beside the
 * summary (report_compare_data.c): a new buffer *RET_COMPARE of
 * *RET_COMPARE_LEN bytes, NULL when it could not be made (compare then
 * reads the result). KEY NULL: no compare data. */
int report_summarize_keyed(const char *body, const char *key, cJSON **ret_summary, void **ret_compare,
			   size_t *ret_compare_len);

/* report_summarize_keyed() for the task's CELL (JSON object text). */
int report_summarize_cell(const char *body, const char *cell, cJSON **ret_summary, void **ret_compare,
			  size_t *ret_compare_len);

/* The report of JOB_ID: {"job", "cells", "warm", "findings", "cold",
 * "churn", "significance"}; with MODULES the cold table carries per-module
 * rows. Summaries missing from the cache are computed and stored. */
int report_job(struct store *store, long long job_id, bool modules, cJSON **ret_report);

/* The figure a comparison's verdict and exit code use. */
enum report_metric {
	REPORT_METRIC_MEDIAN,      /* the median (default) */
	REPORT_METRIC_MIN,         /* the fastest run */
	REPORT_METRIC_OVER_FLOOR,  /* the median less the empty program's median */
	REPORT_METRIC_FLOOR_RATIO, /* the median over the empty program's median */
	/* the run counters beside the times (issue 40, the result's
	 * warm.run_counters; report_compare_counters.h): per run */
	REPORT_METRIC_CPU,          /* user + system CPU µs */
	REPORT_METRIC_FAULTS,       /* minor + major page faults */
	REPORT_METRIC_INSTRUCTIONS, /* user-mode instructions (a PMU) */
	/* compare's default: per row, floor-ratio when both sides have a
	 * floor (every result the agent writes), else (or when its interval
	 * cannot be drawn) the median; each row names the one it was judged by */
	REPORT_METRIC_AUTO,
};

/* The metric every verdict uses unless its caller names another (the one
 * judge, report_judge.h): compare's default, the series' alerts and their
 * confirmation, the CI gate. A change of default is made here. */
#define REPORT_JUDGE_DEFAULT_METRIC REPORT_METRIC_AUTO

/* "median", "min", "over-floor", "floor-ratio", "cpu", "faults",
 * "instructions" or "auto" into *RET; LL_EINVAL for any other
 * (report_between.c). */
int report_metric_parse(const char *text, enum report_metric *ret);
const char *report_metric_name(enum report_metric metric);

/* Pairs the variants and cells of two jobs: {"baseline", "candidate",
 * "max_regression_pct", "metric", "verdict", "counts", "intervals",
 * "power", "rows"}; each comparable row says the least change it could
 * have seen ("detectable_pct", report_judge.h) and, when that is above
 * MAX_REGRESSION_PCT, that it could not see it ("underpowered"); with
 * REQUIRE_POWER such a row fails the gate: the verdict is then
 * "underpowered" when no row is a regression ("power":
 * {"level", "power", "required", "underpowered_rows"});
 * the rows' status and regression, and so the verdict, judge METRIC, on
 * intervals that include what varies between jobs where earlier jobs of the
 * same cell tell it (report_between.h; each row's "interval_scope"), unless
 * not ACROSS_JOBS (?intervals=within-job): then every row's interval is
 * within-job, as before issue 23. */
int report_compare_metric(struct store *store, long long baseline_id, long long candidate_id,
			  double max_regression_pct, enum report_metric metric, bool across_jobs,
			  bool require_power, cJSON **ret_comparison);

/* report_compare_metric()'s comparison as JSON appended to OUT: the text
 * cJSON_PrintUnformatted() prints of it, byte for byte, its rows written
 * as text without building them as cJSON objects (GET /api/v1/compare).
 * As report_compare_metric(), and OUT's errors (LL_ETOOBIG past its
 * limit, LL_ENOMEM; OUT then holds part of the text). */
int report_compare_json(struct store *store, long long baseline_id, long long candidate_id,
			double max_regression_pct, enum report_metric metric, bool across_jobs,
			bool require_power, struct buf *out);

/* "os=win10 disk=ssd" in the cell's key order; "any" for an empty cell
 * (report_result.c): how reports and series name a cell. */
void report_cell_key(const cJSON *cell, char *out, size_t size);

/* The builds of the A/B program job JOB_ID ("program": {"builds"}) each
 * against its first build, per variant and cell, paired by pass
 * (report_ab.c): {"job", "builds", "base", "state", "max_regression_pct",
 * "metric": "paired-ratio", "verdict": "ok"|"regression"|"not_comparable",
 * "counts", "rows"}, a row {"variant", "cell", "base", "build", "pairs",
 * "base_median_us", "candidate_median_us", "ratio" (median of the per-pass
 * ratios), "ci_low", "ci_high", "change_pct", "passes_slower", "p_value"
 * (sign test), "status", "regression", "floor_ratio"} or, when it cannot
 * be judged, {"status": "not_comparable", "reason"}. A row is a regression
 * when it is significant (p < REPORT_ALPHA, its interval excludes 1, the
 * change at least REPORT_MIN_EFFECT) and slower by more than
 * MAX_REGRESSION_PCT. LL_EINVAL for a job of one build, LL_ENOTFOUND. */
int report_ab(struct store *store, long long job_id, double max_regression_pct, cJSON **ret);

/* report_ab() judging METRIC: REPORT_METRIC_AUTO, the warm times as
 * above ("metric": "paired-ratio"), or REPORT_METRIC_CPU, _FAULTS,
 * _INSTRUCTIONS: that run counter per run (report_compare_counters.h:
 * warm.run_counters, one value per sample) paired by pass the same way,
 * "metric" its name, each judged row {"unit", "base_median",
 * "candidate_median"} instead of the µs medians, and a row whose build did
 * not count it {"status": "not_comparable", "reason": "not counted: WHY
 * (COUNTER, build LABEL)"}. The time metrics of two jobs' compare (median,
 * min, over-floor, floor-ratio) do not apply to pairs by pass: LL_EINVAL
 * with REPORT_AB_METRICS_WORDS. Every judged row has "detectable_pct"
 * (report_judge_detectable_pct() of its interval, the per-sample rule)
 * and, when that is above MAX_REGRESSION_PCT, "underpowered": true and
 * "detectable_note"; with REQUIRE_POWER the verdict is then
 * "underpowered" when no row is a regression ("power": {"required",
 * "underpowered_rows"}; "counts"."underpowered"). */
int report_ab_metric(struct store *store, long long job_id, double max_regression_pct,
		     enum report_metric metric, bool require_power, cJSON **ret);
#define REPORT_AB_METRICS_WORDS                                                                         \
	"An A/B job (job=ID) is judged on its builds' runs paired by pass: metric auto (the warm "      \
	"times' per-pass ratio), cpu, faults or instructions; median, min, over-floor and floor-ratio " \
	"compare two jobs only."

/* report_compare_metric() of REPORT_JUDGE_DEFAULT_METRIC, across jobs:
 * the series' early alerts (fewer than REPORT_CHANGE_POINTS_MIN_HISTORY
 * points) and change points' confirmation (report_change_alert.c). */
int report_compare(struct store *store, long long baseline_id, long long candidate_id,
		   double max_regression_pct, cJSON **ret_comparison);

/* The history of series NAME (report_series.c): {"series","metric",
 * "threshold_pct","webhook_url","jobs","traces","alerts"}, one trace per
 * variant x cell, one point per job in submission order {"job_id",
 * "revision","created_at","value_us","median_us","ci_low_us","ci_high_us",
 * "min_us","n","facts_digest"} and "floor_median_us" (the empty program's
 * median in the same run) where the result timed it; value_us is the
 * median or, for METRIC "min", the floor; facts_digest is
 * report_machine_digest() of the result's facts (report_machine.h).
 * VARIANT and CELL (a cell key, "os=xp") filter when not NULL; jobs
 * created before SINCE_MS are left out. LL_ENOTFOUND for a series without
 * jobs or settings. */
int report_series(struct store *store, const char *name, const char *variant, const char *cell,
		  const char *metric, long long since_ms, cJSON **ret_series);

#define REPORT_CHANGE_POINTS_MAX_HISTORY 500

/* report_series(); with MACHINE, each point also carries "machine", the
 * facts report_machine_facts() keeps, and only the newest
 * REPORT_CHANGE_POINTS_MAX_HISTORY jobs are read (the traces, not the
 * "jobs" list, are cut). */
int report_series_history(struct store *store, const char *name, const char *variant, const char *cell,
			  const char *metric, long long since_ms, bool machine, cJSON **ret_series);

/* Change points (report_change_points.c, docs/series.md "Change
 * points"): computed on request over each trace's newest
 * REPORT_CHANGE_POINTS_MAX_HISTORY points with change_points.h's
 * defaults. */

/* Series NAME's change points, {"series","threshold_pct","parameters",
 * "change_points","machine_changes"} (schemas/series_change_points.json);
 * VARIANT and CELL filter when not NULL. LL_ENOTFOUND as report_series(). */
int report_change_points(struct store *store, const char *name, const char *variant, const char *cell,
			 cJSON **ret_change_points);

/* The change points of one trace of report_series_history() (with
 * MACHINE) over its points up to job UNTIL_JOB_ID (0: all): a new array
 * of change points as report_change_points() gives them, with the
 * trace's machine changes appended to MACHINE_CHANGES when not NULL; in
 * *RET_POINTS the count of points it looked at. NULL out of memory. */
cJSON *report_trace_change_points(const cJSON *trace, long long until_job_id, double threshold_pct,
				  cJSON *machine_changes, int *ret_points);

/* The regression alert of the series check of job JOB_ID of SERIES
 * (report_change_alert.c): from the change points confirmed by JOB_ID
 * (docs/series.md, "Alerts from change points"). *RET_ALERT: the alert
 * body for store_series_check_record() (with "job_id" and "baseline_id"
 * of the change), or NULL when none opens; *RET_SHORT: true when no
 * trace of the job has REPORT_CHANGE_POINTS_MIN_HISTORY points, so the
 * caller checks the job against the one before instead. */
#define REPORT_CHANGE_POINTS_MIN_HISTORY 10
int report_change_point_alert(struct store *store, const char *series, long long job_id, double threshold_pct,
			      cJSON **ret_alert, bool *ret_short);

/* An alert's row (schemas/alert.json) from compare's ROW: its variant and
 * cell, the metric that judged it, the judged change, ratio and interval
 * ("ratio_ci_low", "ratio_ci_high": the interval the verdict used, across
 * jobs where it was), p where a test decided, "interval_scope", the raw
 * medians as context and compare's "judged"; a new object. The scheduler's
 * early alerts and change points' alerts both write rows with it. */
cJSON *report_alert_row(const cJSON *row);

/* cJSON_PrintUnformatted(ITEM)'s text (not its siblings'): json_print();
 * NULL when out of memory. */
char *report_print_json(cJSON *item);

/* Appends cJSON_PrintUnformatted(ITEM)'s text (ITEM and its children, not
 * its siblings) to OUT: json_append() (OUT's errors; LL_EINVAL for an item
 * cJSON could not print). */
int report_json_append(const cJSON *item, struct buf *out);

/* Renders a report or a comparison as "md" (Markdown) or "csv". */
int report_render(const cJSON *report, const char *format, struct buf *out);
int report_render_compare(const cJSON *comparison, const char *format, struct buf *out);

#endif
