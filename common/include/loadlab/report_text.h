/*
 * report_text.h - what the daemon's Markdown reports (server/report_format.c)
 * and the CLI's tables (cli/report_table.c) write alike from a report's
 * cells (schemas/report.schema.json).
 */
#ifndef LOADLAB_REPORT_TEXT_H
#define LOADLAB_REPORT_TEXT_H

#include "loadlab/buf.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

/*
 * The unit rule of every output (the CLI's tables, the daemon's Markdown,
 * the dashboard's web/units.js; docs/cli.md "Units"): a duration is shown
 * in milliseconds from 10 ms up, else in microseconds. A table is shown in
 * one unit, the one its largest duration calls for, so that its figures
 * read against each other at a glance; a sentence's figures each in its
 * own. The report names each table's unit ("unit": "us" or "ms").
 */
struct report_text_unit {
	double per;       /* microseconds per unit: 1 or 1000 */
	int digits;       /* after the point: 1 (µs) or 2 (ms) */
	const char *name; /* "ms", or the MICRO asked for */
};

/* The unit of a table whose largest duration is LARGEST_US microseconds;
 * MICRO names the microsecond ("µs" or "us", what the output can show). */
struct report_text_unit report_text_unit_of(double largest_us, const char *micro);

/* The unit a report's table names ("ms"; anything else: microseconds). */
struct report_text_unit report_text_unit_named(const char *unit, const char *micro);

/* Appends US in UNIT without the unit's name: "812.4", "18.34". */
void report_text_figure(struct buf *out, double us, struct report_text_unit unit);

/* Appends a duration of US microseconds in its own unit with the unit's
 * name: "18.34 ms", "812.4 " followed by MICRO. A buffer past its limit
 * keeps what fitted. */
void report_text_duration(struct buf *out, double us, const char *micro);

/* For a cell whose "status" is not the string "ok": appends "STATUS: REASON"
 * and returns true. A status that is missing or not a string is written as
 * NO_STATUS, such a reason as ""; the reason goes through ESCAPE(OUT, reason)
 * when ESCAPE is not NULL (Markdown cells), else as it is. False, nothing
 * written, for a cell that was measured. */
bool report_text_failed_cell(struct buf *out, const cJSON *cell, const char *no_status,
			     void (*escape)(struct buf *out, const char *text));

/* The row fields a comparison (schemas/compare.json) shows for a metric:
 * the two sides' figures, the ratio (NULL: 1 + change / 100), its
 * interval and the change; the sides' figures are durations in
 * microseconds unless DURATION is false (floor-ratio's multiples). */
struct report_text_metric {
	const char *metric, *title, *base, *cand, *ratio, *low, *high, *change;
	bool duration;
};

/* The fields of METRIC ("median", "min", "over-floor", "floor-ratio"), or
 * NULL for another. */
const struct report_text_metric *report_text_metric(const char *metric);

/* The metric ROW (a comparison's row) was judged by: its "metric" when the
 * comparison's METRIC is "auto", else METRIC's; the median's when unknown. */
const struct report_text_metric *report_text_row_metric(const cJSON *row, const char *metric);

/* The unit of COMPARISON's table: by the largest of the sides' durations
 * its rows show (report_text_row_metric()). */
struct report_text_unit report_text_compare_unit(const cJSON *comparison, const char *micro);

/* Appends ROW's side figure KEY as the comparison's table shows it: a
 * duration in UNIT with its name, or a multiple ("1.234 ×") when M is not
 * a duration; "?" when ROW has no such number. */
void report_text_side(struct buf *out, const cJSON *row, const struct report_text_metric *m, const char *key,
		      struct report_text_unit unit, const char *times);

/* A row's status in the words a person reads: "faster", "slower", "no
 * significant change", "not comparable" (another status as it is). */
const char *report_text_status_words(const char *status);

/* What judged a comparison's row (issue 39): the metric, each side's
 * figure of it, their ratio, its interval as the verdict used it (ACROSS:
 * within and between jobs), the change in %, and p where a test decided
 * beside the interval (HAS_P; else the interval alone decides): the row's
 * "judged", or for rows without it (a server before issue 39) the
 * fields of the metric that judged it (report_text_row_metric()). */
struct report_text_judged {
	const struct report_text_metric *metric;
	double base, cand, ratio, low, high, change, p;
	bool has_p, across;
	const char *unit; /* "judged"'s ("us", "x_floor", a count's name), or NULL */
};
void report_text_judged_of(const cJSON *row, const char *metric, struct report_text_judged *ret);

/* Appends J's baseline (or CANDIDATE's) figure: a duration in UNIT with
 * its name, a multiple of the side's floor ("2.000 × floor"), or a count
 * with its unit ("10,250 faults"); "?". */
void report_text_judged_side(struct buf *out, const struct report_text_judged *j, bool candidate,
			     struct report_text_unit unit, const char *times);

/* Appends J's p ("0.012", "1.5e-09"), or NONE when the interval alone
 * decided. */
void report_text_judged_p(struct buf *out, const struct report_text_judged *j, const char *none);

/* Appends ROW's raw medians as context, "1000.3 -> 1120.2 us" in UNIT
 * (ARROW between them); nothing when ROW has none. */
void report_text_medians(struct buf *out, const cJSON *row, struct report_text_unit unit, const char *arrow);

/* The comparison's "intervals" said in one line, then a blank line:
 * whether the intervals hold what varies between jobs, or one job's
 * rounds only. Nothing when INTERVALS is NULL. */
void report_text_intervals(struct buf *out, const cJSON *intervals);

/* Whether CELL (a table's cell or a churn row) carries "notes": what its
 * runner cannot show (report.h). */
bool report_text_has_notes(const cJSON *cell);

/* Appends one line per distinct note of TABLE (a report's warm or cold
 * table, or its churn object): PREFIX, the variants (the churn's cells)
 * that carry it joined by ", ", ": ", the note, "\n"; text through ESCAPE
 * when not NULL. Nothing for a table without notes. */
void report_text_notes(struct buf *out, const cJSON *table, const char *prefix,
		       void (*escape)(struct buf *out, const char *text));

/* A shared build said in lines (docs/builds.md), each PREFIX, its text
 * (through ESCAPE when not NULL) and "\n": first per build task the report's
 * CELLS name ("build_task", "builder", "toolchain"; NULL: none) "built once
 * by build task N on BUILDER (TOOLCHAIN) for CELL, CELL" (" on BUILDER"
 * only when a cell names it), then per row of SHIPPED (a report's
 * or a comparison side's "shipped") "VARIANT: identical files in N cells"
 * ("in 1 cell")
 * or what differs: "VARIANT: written on each machine (bind): FILE, ...;
 * differing between cells: FILE, ...". Nothing when SHIPPED is no array. */
void report_text_shipped(struct buf *out, const cJSON *shipped, const cJSON *cells, const char *prefix,
			 void (*escape)(struct buf *out, const char *text));

/* Compare's run counters and power (issue 40): */

/* Appends V as a whole number with thousands separators ("1,900"), signed
 * when SIGN ("+1,900"). */
void report_text_count(struct buf *out, double v, bool sign);

/* Appends ROW's counts beside its times (its "counters": each counted
 * figure's median difference, "+17.8 µs CPU (+2.2 %), +1,900 faults
 * (+3.1 %)"; MICRO names the microsecond); nothing when it has none. */
void report_text_counts(struct buf *out, const cJSON *row, const char *micro);

/* Appends what ROW could have seen: its "detectable_note" ("this row could
 * only see changes above 4.2 %") when it has one, else its detectable
 * change ("1.8 %"); nothing when it has neither. */
void report_text_detectable(struct buf *out, const cJSON *row);

/* Appends one line when rows of COMPARISON could not see its
 * max_regression_pct ("power"'s "underpowered_rows"): how many, and
 * whether power was required (the gate then fails); nothing otherwise. */
void report_text_power(struct buf *out, const cJSON *comparison);

#endif
