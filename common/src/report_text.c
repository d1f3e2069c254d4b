#include "loadlab/report_text.h"

#include "loadlab/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct report_text_unit report_text_unit_of(double largest_us, const char *micro)
{
	if (largest_us >= 10000)
		return (struct report_text_unit){1000, 2, "ms"};
	return (struct report_text_unit){1, 1, micro};
}

struct report_text_unit report_text_unit_named(const char *unit, const char *micro)
{
	return report_text_unit_of(unit && strcmp(unit, "ms") == 0 ? 10000 : 0, micro);
}

void report_text_figure(struct buf *out, double us, struct report_text_unit unit)
{
	buf_printf(out, "%.*f", unit.digits, us / unit.per);
}

void report_text_duration(struct buf *out, double us, const char *micro)
{
	struct report_text_unit unit = report_text_unit_of(us, micro);

	report_text_figure(out, us, unit);
	buf_printf(out, " %s", unit.name);
}

bool report_text_failed_cell(struct buf *out, const cJSON *cell, const char *no_status,
			     void (*escape)(struct buf *out, const char *text))
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(cell, "status");
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(cell, "reason");
	const char *reason_text = cJSON_IsString(reason) ? reason->valuestring : "";

	if (cJSON_IsString(status) && strcmp(status->valuestring, "ok") == 0)
		return false;
	buf_printf(out, "%s: ", cJSON_IsString(status) ? status->valuestring : no_status);
	if (escape)
		escape(out, reason_text);
	else
		buf_append_str(out, reason_text);
	return true;
}

static const struct report_text_metric metrics[] = {
	{"median", "median", "baseline_median_us", "candidate_median_us", "ratio", "ratio_ci_low",
	 "ratio_ci_high", "change_pct", true},
	{"min", "fastest run", "baseline_min_us", "candidate_min_us", NULL, "min_ratio_ci_low",
	 "min_ratio_ci_high", "min_change_pct", true},
	{"over-floor", "median over floor", "baseline_over_floor_us", "candidate_over_floor_us",
	 "over_floor_ratio", "over_floor_ratio_ci_low", "over_floor_ratio_ci_high", "over_floor_change_pct",
	 true},
	{"floor-ratio", "median / floor", "baseline_floor_ratio", "candidate_floor_ratio", "floor_ratio",
	 "floor_ratio_ci_low", "floor_ratio_ci_high", "floor_ratio_change_pct", false},
	/* the run counters (issue 40): their sides' figures are in "judged" */
	{"cpu", "CPU time (user + system) per run", "baseline_cpu", "candidate_cpu", "cpu_ratio",
	 "cpu_ratio_ci_low", "cpu_ratio_ci_high", "cpu_change_pct", false},
	{"faults", "page faults per run", "baseline_faults", "candidate_faults", "faults_ratio",
	 "faults_ratio_ci_low", "faults_ratio_ci_high", "faults_change_pct", false},
	{"instructions", "instructions per run", "baseline_instructions", "candidate_instructions",
	 "instructions_ratio", "instructions_ratio_ci_low", "instructions_ratio_ci_high",
	 "instructions_change_pct", false},
};

const struct report_text_metric *report_text_metric(const char *metric)
{
	for (size_t i = 0; metric && i < sizeof(metrics) / sizeof(metrics[0]); i++)
		if (strcmp(metric, metrics[i].metric) == 0)
			return &metrics[i];
	return NULL;
}

const struct report_text_metric *report_text_row_metric(const cJSON *row, const char *metric)
{
	const struct report_text_metric *m = report_text_metric(metric);

	if (metric && strcmp(metric, "auto") == 0)
		m = report_text_metric(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "metric")));
	return m ? m : metrics;
}

struct report_text_unit report_text_compare_unit(const cJSON *comparison, const char *micro)
{
	const cJSON *metric = cJSON_GetObjectItemCaseSensitive(comparison, "metric"), *row;
	double largest = 0;

	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(comparison, "rows")) {
		const struct report_text_metric *m =
			report_text_row_metric(row, cJSON_GetStringValue(metric));
		const char *keys[] = {m->base, m->cand, "baseline_median_us", "candidate_median_us"};
		for (int i = m->duration ? 0 : 2; i < 4; i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, keys[i]);
			if (cJSON_IsNumber(v) && v->valuedouble > largest)
				largest = v->valuedouble;
		}
	}
	return report_text_unit_of(largest, micro);
}

const char *report_text_status_words(const char *status)
{
	static const char *const words[][2] = {{"faster", "faster"},
					       {"slower", "slower"},
					       {"no_significant_change", "no significant change"},
					       {"not_comparable", "not comparable"}};

	for (size_t i = 0; status && i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(status, words[i][0]) == 0)
			return words[i][1];
	return status ? status : "?";
}

static double row_number(const cJSON *obj, const char *key, double otherwise)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNumber(v) ? v->valuedouble : otherwise;
}

void report_text_judged_of(const cJSON *row, const char *metric, struct report_text_judged *ret)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(row, "judged");
	const struct report_text_metric *m = report_text_row_metric(row, metric);
	const cJSON *scope = cJSON_GetObjectItemCaseSensitive(row, "interval_scope");

	if (cJSON_IsObject(j)) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "p_value");
		const struct report_text_metric *jm = report_text_metric(
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "metric")));
		*ret = (struct report_text_judged){
			.metric = jm ? jm : m,
			.base = row_number(j, "baseline", NAN),
			.cand = row_number(j, "candidate", NAN),
			.ratio = row_number(j, "ratio", NAN),
			.low = row_number(j, "ci_low", NAN),
			.high = row_number(j, "ci_high", NAN),
			.change = row_number(j, "change_pct", NAN),
			.p = cJSON_IsNumber(p) ? p->valuedouble : NAN,
			.has_p = cJSON_IsNumber(p),
			.unit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "unit"))};
		scope = cJSON_GetObjectItemCaseSensitive(j, "scope");
	} else { /* a server before issue 39: the metric's own fields */
		double change = row_number(row, m->change, NAN);
		*ret = (struct report_text_judged){
			.metric = m,
			.base = row_number(row, m->base, NAN),
			.cand = row_number(row, m->cand, NAN),
			.ratio = m->ratio ? row_number(row, m->ratio, NAN) : change / 100 + 1,
			.low = row_number(row, "interval_low", row_number(row, m->low, NAN)),
			.high = row_number(row, "interval_high", row_number(row, m->high, NAN)),
			.change = change,
			.p = row_number(row, "p_value", NAN),
			.has_p = strcmp(m->metric, "median") == 0 &&
				 !cJSON_GetObjectItemCaseSensitive(row, "unit") &&
				 cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(row, "p_value"))};
	}
	ret->across = cJSON_IsString(scope) && strcmp(scope->valuestring, "within-and-between-jobs") == 0;
}

void report_text_judged_side(struct buf *out, const struct report_text_judged *j, bool candidate,
			     struct report_text_unit unit, const char *times)
{
	double v = candidate ? j->cand : j->base;

	if (!isfinite(v)) {
		buf_append_str(out, "?");
	} else if (j->unit ? strcmp(j->unit, "us") == 0 : j->metric->duration) {
		report_text_figure(out, v, unit);
		buf_printf(out, " %s", unit.name);
	} else if (!j->unit || strcmp(j->unit, "x_floor") == 0) {
		buf_printf(out, "%.3f %s floor", v, times);
	} else { /* a count: "10,250 faults" */
		report_text_count(out, v, false);
		buf_printf(out, " %s", j->unit);
	}
}

void report_text_judged_p(struct buf *out, const struct report_text_judged *j, const char *none)
{
	if (j->has_p && isfinite(j->p))
		buf_printf(out, j->p < 0.001 ? "%.1e" : "%.3f", j->p);
	else
		buf_append_str(out, none);
}

void report_text_medians(struct buf *out, const cJSON *row, struct report_text_unit unit, const char *arrow)
{
	double b = row_number(row, "baseline_median_us", NAN),
	       c = row_number(row, "candidate_median_us", NAN);

	if (!isfinite(b) || !isfinite(c))
		return;
	report_text_figure(out, b, unit);
	buf_printf(out, " %s ", arrow);
	report_text_figure(out, c, unit);
	buf_printf(out, " %s", unit.name);
}

void report_text_side(struct buf *out, const cJSON *row, const struct report_text_metric *m, const char *key,
		      struct report_text_unit unit, const char *times)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);

	if (!cJSON_IsNumber(v)) {
		buf_append_str(out, "?");
	} else if (m->duration) {
		report_text_figure(out, v->valuedouble, unit);
		buf_printf(out, " %s", unit.name);
	} else {
		buf_printf(out, "%.3f %s", v->valuedouble, times);
	}
}

void report_text_intervals(struct buf *out, const cJSON *intervals)
{
	const char *scope = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(intervals, "scope"));
	double rows = cJSON_GetNumberValue(
		cJSON_GetObjectItemCaseSensitive(intervals, "rows_within_and_between_jobs"));
	double history = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(intervals, "history_jobs"));

	if (!intervals)
		return;
	rows = rows >= 0 ? rows : 0; /* NAN when absent */
	history = history >= 0 ? history : 0;
	if (scope && strcmp(scope, "within-job") == 0)
		buf_append_str(
			out, "Intervals are within-job only: no cell had 3 or more earlier jobs of the same "
			     "spec or series to tell what varies between jobs.\n\n");
	else
		buf_printf(out,
			   "Intervals hold what varies between jobs in %d row%s (\"across jobs\", from %d "
			   "earlier job%s of the same spec or series)%s.\n\n",
			   (int)rows, (int)rows == 1 ? "" : "s", (int)history, history == 1 ? "" : "s",
			   scope && strcmp(scope, "mixed") == 0 ? "; the others are within-job only" : "");
}

bool report_text_has_notes(const cJSON *cell)
{
	return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cell, "notes")) > 0;
}

/* Adds NAME to the names of NOTE in BY_NOTE ({note: [name, ...]}, in the
 * order first seen), once. */
static void note_name(cJSON *by_note, const char *note, const char *name)
{
	cJSON *names = cJSON_GetObjectItemCaseSensitive(by_note, note);

	if (!names)
		names = cJSON_AddArrayToObject(by_note, note);
	if (json_array_has_string(names, name))
		return;
	cJSON_AddItemToArray(names, cJSON_CreateString(name));
}

static void append_text(struct buf *out, const char *text, void (*escape)(struct buf *out, const char *text))
{
	if (escape)
		escape(out, text);
	else
		buf_append_str(out, text);
}

void report_text_notes(struct buf *out, const cJSON *table, const char *prefix,
		       void (*escape)(struct buf *out, const char *text))
{
	const cJSON *variants = cJSON_GetObjectItemCaseSensitive(table, "variants"), *row, *cell, *note;
	const cJSON *rows = variants ? variants : cJSON_GetObjectItemCaseSensitive(table, "rows");
	cJSON *by_note = cJSON_CreateObject(), *n;

	cJSON_ArrayForEach(row, rows) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, variants ? "variant" : "cell");
		const cJSON *cells = variants ? cJSON_GetObjectItemCaseSensitive(row, "cells") : NULL;
		for (cell = cells ? cells->child : row; cell; cell = cells ? cell->next : NULL)
			cJSON_ArrayForEach(note, cJSON_GetObjectItemCaseSensitive(cell, "notes"))
				if (cJSON_IsString(note) && cJSON_IsString(name))
					note_name(by_note, note->valuestring, name->valuestring);
	}
	cJSON_ArrayForEach(n, by_note) {
		const cJSON *name;
		buf_append_str(out, prefix);
		cJSON_ArrayForEach(name, n) {
			append_text(out, name->valuestring, escape);
			buf_append_str(out, name->next ? ", " : ": ");
		}
		append_text(out, n->string, escape);
		buf_append_str(out, "\n");
	}
	cJSON_Delete(by_note);
}

/* ", "-joined strings of LIST. */
static void append_list(struct buf *out, const cJSON *list, void (*escape)(struct buf *out, const char *text))
{
	const cJSON *item;

	cJSON_ArrayForEach(item, list) {
		append_text(out, cJSON_IsString(item) ? item->valuestring : "?", escape);
		if (item->next)
			buf_append_str(out, ", ");
	}
}

/* The toolchain T ("toolchain" of a result) in words: its version line,
 * else its compiler. */
static const char *toolchain_words(const cJSON *t)
{
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(t, "version");
	const cJSON *compiler = cJSON_GetObjectItemCaseSensitive(t, "compiler");

	if (cJSON_IsString(version) && version->valuestring[0])
		return version->valuestring;
	return cJSON_IsString(compiler) ? compiler->valuestring : "toolchain unknown";
}

/* The line of build task TASK_ID: its builder, its toolchain and the cells
 * of CELLS it served. */
static void build_line(struct buf *out, const cJSON *cells, double task_id, const char *prefix,
		       void (*escape)(struct buf *out, const char *text))
{
	const cJSON *c, *toolchain = NULL, *builder = NULL;
	bool first = true;

	cJSON_ArrayForEach(c, cells)
		if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(c, "build_task")) &&
		    cJSON_GetObjectItemCaseSensitive(c, "build_task")->valuedouble == task_id && !toolchain) {
			toolchain = cJSON_GetObjectItemCaseSensitive(c, "toolchain");
			builder = cJSON_GetObjectItemCaseSensitive(c, "builder");
		}
	buf_printf(out, "%sbuilt once by build task %.0f", prefix, task_id);
	if (cJSON_IsString(builder)) {
		buf_append_str(out, " on ");
		append_text(out, builder->valuestring, escape);
	}
	buf_append_str(out, " (");
	append_text(out, toolchain_words(toolchain), escape);
	buf_append_str(out, ") for ");
	cJSON_ArrayForEach(c, cells) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "build_task");
		const cJSON *key = cJSON_GetObjectItemCaseSensitive(c, "key");
		if (!cJSON_IsNumber(id) || id->valuedouble != task_id)
			continue;
		buf_append_str(out, first ? "" : ", ");
		append_text(out, cJSON_IsString(key) && key->valuestring[0] ? key->valuestring : "the cell",
			    escape);
		first = false;
	}
	buf_append_str(out, "\n");
}

void report_text_shipped(struct buf *out, const cJSON *shipped, const cJSON *cells, const char *prefix,
			 void (*escape)(struct buf *out, const char *text))
{
	const cJSON *c, *d, *row;

	if (!cJSON_IsArray(shipped))
		return;
	cJSON_ArrayForEach(c, cells) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "build_task");
		bool seen = false;
		if (!cJSON_IsNumber(id))
			continue;
		for (d = cells->child; d != c && !seen; d = d->next)
			seen = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(d, "build_task")) &&
			       cJSON_GetObjectItemCaseSensitive(d, "build_task")->valuedouble ==
				       id->valuedouble;
		if (!seen)
			build_line(out, cells, id->valuedouble, prefix, escape);
	}
	cJSON_ArrayForEach(row, shipped) {
		const cJSON *variant = cJSON_GetObjectItemCaseSensitive(row, "variant");
		const cJSON *local = cJSON_GetObjectItemCaseSensitive(row, "local_files");
		const cJSON *differ = cJSON_GetObjectItemCaseSensitive(row, "differing_files");
		const cJSON *count = cJSON_GetObjectItemCaseSensitive(row, "cells");
		buf_append_str(out, prefix);
		append_text(out, cJSON_IsString(variant) ? variant->valuestring : "?", escape);
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(row, "identical"))) {
			double n = cJSON_IsNumber(count) ? count->valuedouble : 0;
			buf_printf(out, ": identical files in %.0f cell%s\n", n, n == 1 ? "" : "s");
			continue;
		}
		if (cJSON_GetArraySize(local)) {
			buf_append_str(out, ": written on each machine (bind): ");
			append_list(out, local, escape);
		}
		buf_append_str(out, cJSON_GetArraySize(local) ? "; differing between cells: "
							      : ": differing between cells: ");
		if (cJSON_GetArraySize(differ))
			append_list(out, differ, escape);
		else
			buf_append_str(out, "none");
		buf_append_str(out, "\n");
	}
}

void report_text_count(struct buf *out, double v, bool sign)
{
	char digits[64];
	int len, lead;

	if (!isfinite(v) || fabs(v) >= 1e18) {
		buf_printf(out, sign ? "%+g" : "%g", v);
		return;
	}
	len = snprintf(digits, sizeof(digits), "%.0f", fabs(v));
	if (sign || v <= -0.5)
		buf_append_str(out, v <= -0.5 ? "-" : "+");
	lead = len % 3 ? len % 3 : 3;
	buf_append(out, digits, (size_t)lead);
	for (int k = lead; k < len; k += 3) {
		buf_append_str(out, ",");
		buf_append(out, digits + k, 3);
	}
}

void report_text_counts(struct buf *out, const cJSON *row, const char *micro)
{
	static const char *const names[] = {"cpu_us", "faults", "instructions"};
	const cJSON *counters = cJSON_GetObjectItemCaseSensitive(row, "counters");
	bool first = true;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(counters, names[i]);
		double delta = row_number(c, "delta", NAN), pct = row_number(c, "change_pct", NAN);
		if (!isfinite(delta))
			continue;
		buf_append_str(out, first ? "" : ", ");
		first = false;
		if (i == 0)
			buf_printf(out, "%+.1f %s CPU", delta, micro);
		else {
			report_text_count(out, delta, true);
			buf_printf(out, " %s", names[i]);
		}
		if (isfinite(pct))
			buf_printf(out, " (%+.1f %%)", pct);
	}
}

void report_text_detectable(struct buf *out, const cJSON *row)
{
	const cJSON *note = cJSON_GetObjectItemCaseSensitive(row, "detectable_note");
	double pct = row_number(row, "detectable_pct", NAN);

	if (cJSON_IsString(note))
		buf_append_str(out, note->valuestring);
	else if (isfinite(pct))
		buf_printf(out, "%.1f %%", pct);
}

void report_text_power(struct buf *out, const cJSON *comparison)
{
	const cJSON *power = cJSON_GetObjectItemCaseSensitive(comparison, "power");
	double rows = row_number(power, "underpowered_rows", 0);

	if (!(rows > 0))
		return;
	buf_printf(out, "%.0f %s could not see a change of %.1f %% (see DETECTABLE)%s\n", rows,
		   rows == 1 ? "row" : "rows", row_number(comparison, "max_regression_pct", 0),
		   cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(power, "required"))
			   ? ": power is required, so the gate fails."
			   : "; --require-power would fail the gate.");
}
