/*
 * report_compare_counters.h - compare on the run counters (issue 40): the
 * figures `--metric cpu|faults|instructions` judges, and each row's counts
 * beside its times. Only the report's files include it.
 *
 * The agent records beside every timed run's time its counters
 * (warm.run_counters, docs/rest-bodies.md "Run counters": one value per
 * run in samples_us' order, and "not_counted" {name: why}). A counter
 * figure per run:
 *   cpu           cpu_user_us + cpu_system_us (µs);
 *   faults        minor_faults + major_faults, or page_faults where the
 *                 OS does not split them (Windows);
 *   instructions  instructions (user mode, where a PMU exists).
 * A figure a run did not count has no series: its reason is kept
 * ("instructions: no PMU ..."), never a zero.
 *
 * Judged like time (docs/statistics.md, "Counters"): per pass over the
 * floor's same counter when both sides pair (report_paired.h, the
 * figure "x floor"), else the ratio of the sides' medians of the
 * counter; by rounds, then passes, when both sides have
 * REPORT_MIN_ROUNDS; the interval alone decides (report_judge_interval());
 * the between-job term from the same figure of earlier jobs
 * (report_between.c).
 */
#ifndef LOADLAB_SERVER_REPORT_COMPARE_COUNTERS_H
#define LOADLAB_SERVER_REPORT_COMPARE_COUNTERS_H

#include "report_int.h"
#include "report_judge.h"
#include "report_row.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The counter of METRIC (REPORT_METRIC_CPU .. _INSTRUCTIONS), or -1. */
int report_counter_of(enum report_metric metric);

/* The name of COUNTER as rows and "counters" say it: "cpu_us", "faults",
 * "instructions". */
const char *report_counter_name(enum report_counter counter);

/* The figure COUNTER per run of a result's WARM (a variant's or the
 * floor's "warm") with N samples: into a new array *RET of N values, 0;
 * else LL_ENOTFOUND and *RET_WHY (borrowed from WARM, or static): the
 * agent's reason ("instructions: no PMU"), or the result's counters do
 * not have one value per run, or it has no "run_counters" (*RET_WHY NULL
 * then: an agent before issue 40). Outputs untouched on failure but the
 * reason. */
int report_counter_series(const cJSON *warm, enum report_counter counter, size_t n, double **ret,
			  const char **ret_why);

/* The figure of COUNTER for a row whose sides' variants are BV and CV,
 * over their floors BF and CF (no values: none), ROUNDS as the row's, the
 * bootstraps seeded by SEED: the judge's figure into *RET (its unit
 * "x_floor" when paired, else the counter's), the row's
 * "<name>_paired", "<name>_ratio", "<name>_ratio_ci_low", "_high" and
 * "<name>_change_pct" into ROW. When a side did not count it, RET->rc is
 * LL_ENOTFOUND and RET->reason "not counted: WHY (baseline)" in WHY
 * (SIZE bytes); LL_EINVAL when no interval could be drawn. X_ROOM and
 * Y_ROOM: buffers reused (freed by the caller). */
void report_counter_figure(enum report_counter counter, const struct report_compare_variant *bv,
			   const struct report_compare_variant *cv, const struct report_compare_variant *bf,
			   const struct report_compare_variant *cf, bool rounds, uint64_t seed,
			   struct report_row *row, struct report_judge_figure *ret, char *why, size_t size);

/* Adds to ROW "counters": {"cpu_us"|"faults"|"instructions": {"baseline",
 * "candidate" (the medians per run), "delta", "change_pct"} or
 * {"not_counted": why}} when a side of BV, CV has run counters; nothing
 * otherwise (results from before issue 40 compare as they did). */
void report_counter_context(const struct report_compare_variant *bv, const struct report_compare_variant *cv,
			    struct report_row *row);

#endif
