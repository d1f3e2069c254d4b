/*
 * report_judge_rules.h - the one judge's two rules (report_judge.h,
 * docs/statistics.md "Significance"): below the judge and the between-job
 * term, which both apply them, and called alone by the callers that hold
 * only an interval (the report's star in summary.c, A/B rows in
 * report_ab.c).
 */
#ifndef LOADLAB_SERVER_REPORT_JUDGE_RULES_H
#define LOADLAB_SERVER_REPORT_JUDGE_RULES_H

#include <stdbool.h>

/* The per-sample rule (a median without rounds, the report's star): the
 * Mann-Whitney P below REPORT_ALPHA, the ratio's interval LOW .. HIGH
 * excluding 1, and CHANGE_PCT at least REPORT_MIN_EFFECT_PCT. */
bool report_judge_per_sample(double p, double low, double high, double change_pct);

/* The interval's rule (rounds, and the metrics without a rank test): all
 * of LOW .. HIGH beyond the least effect, CHANGE_PCT at least it. */
bool report_judge_interval(double low, double high, double change_pct);

#endif
