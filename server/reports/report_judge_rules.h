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

/* The minimum detectable change of a row, in %: the least true change
 * (a slowdown; a speed-up alike) that the rule would call with 80 %
 * power, from the interval the verdict used, LOW .. HIGH of the ratio
 * (95 %: its standard error on the log scale is SE = (ln HIGH - ln LOW)
 * / (2 z) with z = REPORT_Z95), by Bloom's minimum detectable effect
 * (docs/statistics.md, "What a row could have seen"): PER_SAMPLE (the
 * per-sample rule: the interval excludes 1 and the change is at least the
 * least effect) max(z SE, ln(1 + least effect)) + z_80 SE; the interval's
 * rule (all of it beyond the least effect) ln(1 + least effect) + z SE +
 * z_80 SE, returned as 100 (e^that - 1). NAN when LOW .. HIGH is not an
 * interval of positive ratios. */
double report_judge_detectable_pct(double low, double high, bool per_sample);

/* z of a two-sided 95 % interval, and of 80 % power (one-sided). */
#define REPORT_Z95 1.959963984540054
#define REPORT_Z_POWER80 0.8416212335729143

#endif
