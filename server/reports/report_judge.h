/*
 * report_judge.h - the one judge (issue 39, docs/statistics.md "The one
 * judge"): every verdict loadlab gives on a difference of load times comes
 * from here, said the same way everywhere.
 *
 * report_judge() takes one row's figures of each metric (the two samples'
 * medians, minimums, medians over the floor and floor ratios, paired by
 * pass where they pair, each with its within-job interval), the metric
 * asked for (REPORT_JUDGE_DEFAULT_METRIC unless a caller names one) and the
 * history that gives the between-job term (report_between.h), and returns
 * the verdict, the metric that judged it, the estimate (each side's figure
 * and their ratio), its interval, p (where a test decides beside the
 * interval) and the interval's scope. Its callers:
 *   - compare, two jobs and series (report_compare_row.c, each row);
 *   - the series' early alerts (fewer than REPORT_CHANGE_POINTS_MIN_HISTORY
 *     points): the scheduler's report_compare(), which is compare's;
 *   - change points' confirmation: a change point opens an alert only when
 *     the judge, on the jobs either side of it, says regression
 *     (report_change_alert.c); the detector itself reads the trace's
 *     figure (its "statistic"), the one thing it legitimately needs;
 *   - the CI gate: `loadlab compare`'s exit code is compare's verdict;
 *   - its rules (report_judge_rules.h), for the callers that hold only an interval (A/B in
 *     one job and so bisection's steps, report_ab.c; the report's star,
 *     summary.c).
 * A change of the default is made in one place: REPORT_JUDGE_DEFAULT_METRIC
 * (report.h, which the REST routes and the scheduler read).
 */
#ifndef LOADLAB_SERVER_REPORT_JUDGE_H
#define LOADLAB_SERVER_REPORT_JUDGE_H

#include "report.h"
#include "report_between.h"
#include "report_judge_rules.h"
#include "report_row.h"

#include <stdbool.h>

/* One metric's figures of a row, as the row's code measured them. */
struct report_judge_figure {
	int rc;             /* 0: measured; LL_ENOTFOUND: no floor on a side; else no figure */
	double base, cand;  /* each side's figure: µs, or × its floor for floor-ratio */
	double change;      /* cand / base - 1, in % */
	double low, high;   /* the ratio's within-job 95 % interval */
	double p;           /* per_sample: the Mann-Whitney test's p */
	bool per_sample;    /* the per-sample rule decides, else the interval's */
	bool significant;   /* as the row's code judged it within-job */
	const char *reason; /* rc < 0: why, when the row's code says (a counter not counted) */
	const char *unit;   /* NULL: the metric's own ("us"; "x_floor" for floor-ratio) */
};

/* A row to judge: FIGURE[m] for each metric m below REPORT_METRIC_AUTO
 * (the counters' only when asked for: report_compare_counters.h)
 * (rc < 0 for those not measured), the metric ASKED (AUTO: floor-ratio
 * where FLOORS and its figure could be drawn, else the median), MAX_REGRESSION_PCT, and the history BETWEEN
 * (NULL: none) with the row's VARIANT, cell KEY and the baseline's FACTS. */
struct report_judge_case {
	struct report_judge_figure figure[REPORT_METRIC_AUTO];
	enum report_metric asked;
	bool floors, base_floor; /* both sides have floor samples; the baseline has */
	double max_regression_pct;
	const struct report_between *between;
	const char *variant, *key;
	const struct report_compare_data *facts;
};

/* What the judge found. */
struct report_verdict {
	const char *status;        /* "faster", "slower", "no_significant_change" or "not_comparable" */
	const char *reason;        /* not_comparable's */
	enum report_metric metric; /* the metric that judged (never AUTO) */
	double base, cand, ratio, change_pct; /* the estimate */
	double low, high;                     /* its interval, as the verdict used it */
	double p;                             /* has_p: the test that decided beside the interval */
	bool has_p;
	bool across_jobs; /* the interval's scope: within and between jobs, else within-job */
	bool significant, regression;
	const char *unit;      /* the estimate's: "us", "x_floor", "faults", "instructions" */
	double detectable_pct; /* the least change the row could see (report_judge_detectable_pct()) */
	bool underpowered;     /* no change found, DETECTABLE_PCT above max_regression_pct */
};

/* Judges C into *V and writes to ROW the verdict's fields: "metric",
 * "interval_scope", "interval_low", "interval_high", "between_jobs" (when
 * history jobs had the row), "judged" ({"metric", "unit", "baseline",
 * "candidate", "ratio", "change_pct", "ci_low", "ci_high", "p_value" or
 * null, "scope"}: the figures of the metric that judged, the same numbers
 * the verdict used), "significant" when the verdict's differs, "status"
 * and "regression", then "detectable_pct" (the least change the row could
 * see, report_judge_detectable_pct() of the interval the verdict used)
 * and, when that is above the case's max_regression_pct and the row
 * found no significant change, "underpowered": true and "detectable_note" ("this row could only see changes above
 * 4.2 %"). A row that cannot be judged by the metric asked gets nothing:
 * V->status is "not_comparable" with V->reason, for the caller. */
void report_judge(const struct report_judge_case *c, struct report_row *row, struct report_verdict *v);

#endif
