/* Markdown and CSV forms of reports and comparisons (report.h). */
#include "report.h"
#include "report_row.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/report_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *get(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static const char *text(const cJSON *obj, const char *key)
{
	const cJSON *item = get(obj, key);
	return cJSON_IsString(item) ? item->valuestring : "";
}

/* Markdown table cells: no pipes or newlines inside. */
static void md_escape(struct buf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			buf_append_str(out, "\\|");
		else if (*s == '\n' || *s == '\r')
			buf_append_str(out, " ");
		else
			buf_append(out, s, 1);
	}
}

/* CSV fields per RFC 4180: quoted, quotes doubled. */
static void csv_field(struct buf *out, const cJSON *item, bool last)
{
	if (!item || cJSON_IsNull(item)) {
		/* empty */
	} else if (cJSON_IsNumber(item)) {
		buf_printf(out, "%.10g", item->valuedouble);
	} else if (cJSON_IsBool(item)) {
		buf_append_str(out, cJSON_IsTrue(item) ? "true" : "false");
	} else if (cJSON_IsString(item)) {
		buf_append_str(out, "\"");
		for (const char *s = item->valuestring; *s; s++)
			buf_append_str(out, *s == '"' ? "\"\"" : (char[]){*s, 0});
		buf_append_str(out, "\"");
	}
	buf_append_str(out, last ? "\r\n" : ",");
}

static void md_number(struct buf *out, double us)
{
	report_text_duration(out, us, "µs");
}

/* " · noise: other CPU max 12.0 %, 2 flagged, 1 retaken": what the agent
 * saw of the machine's other work in the cell (warm.noise), if anything. */
static void md_noise(struct buf *out, const cJSON *noise)
{
	const char *sep = " · noise:";

	if (!cJSON_IsObject(noise))
		return;
	if (cJSON_IsNumber(get(noise, "max_other_cpu_pct"))) {
		buf_printf(out, "%s other CPU max %.1f %%", sep,
			   get(noise, "max_other_cpu_pct")->valuedouble);
		sep = ",";
	}
	if (cJSON_IsNumber(get(noise, "flagged"))) {
		buf_printf(out, "%s %.0f flagged", sep, get(noise, "flagged")->valuedouble);
		sep = ",";
	}
	if (cJSON_IsNumber(get(noise, "retaken")))
		buf_printf(out, "%s %.0f retaken", sep, get(noise, "retaken")->valuedouble);
}

static void md_warm_cell(struct buf *out, const cJSON *c)
{
	if (report_text_failed_cell(out, c, "", md_escape))
		return;
	buf_append_str(out, "**");
	md_number(out, get(c, "min_us")->valuedouble);
	buf_append_str(out, "**");
	if (get(c, "min_change_pct"))
		buf_printf(out, " (%+.1f %%)", get(c, "min_change_pct")->valuedouble);
	buf_append_str(out, " · median ");
	md_number(out, get(c, "median_us")->valuedouble);
	buf_append_str(out, " [");
	md_number(out, get(c, "ci_low_us")->valuedouble);
	buf_append_str(out, " – ");
	md_number(out, get(c, "ci_high_us")->valuedouble);
	buf_append_str(out, "]");
	if (get(c, "change_pct"))
		buf_printf(out, " · %+.1f %%%s", get(c, "change_pct")->valuedouble,
			   cJSON_IsTrue(get(c, "significant")) ? " *" : "");
	if (cJSON_IsNumber(get(c, "x_floor")))
		buf_printf(out, " · %.2f× floor", get(c, "x_floor")->valuedouble);
	md_noise(out, get(c, "noise"));
}

/* " (+1.2 % *)": a cold count's change against the baseline, if any. */
static void md_count_change(struct buf *out, const cJSON *c, const char *change, const char *significant)
{
	if (cJSON_IsNumber(get(c, change)))
		buf_printf(out, " (%+.1f %%%s)", get(c, change)->valuedouble,
			   cJSON_IsTrue(get(c, significant)) ? " *" : "");
}

static void md_cold_cell(struct buf *out, const cJSON *c)
{
	const cJSON *faults =
		get(c, "page_faults_median") ? get(c, "page_faults_median") : get(c, "page_faults_mean");
	const cJSON *bytes =
		get(c, "read_bytes_median") ? get(c, "read_bytes_median") : get(c, "read_bytes_mean");

	if (report_text_failed_cell(out, c, "", md_escape))
		return;
	buf_append_str(out, "**");
	md_number(out, get(c, "median_us")->valuedouble);
	buf_append_str(out, "**");
	if (cJSON_IsNumber(get(c, "ci_low_us")) && cJSON_IsNumber(get(c, "ci_high_us"))) {
		buf_append_str(out, " [");
		md_number(out, get(c, "ci_low_us")->valuedouble);
		buf_append_str(out, " – ");
		md_number(out, get(c, "ci_high_us")->valuedouble);
		buf_append_str(out, "]");
	}
	if (cJSON_IsNumber(get(c, "change_pct")))
		buf_printf(out, " %+.1f %%%s", get(c, "change_pct")->valuedouble,
			   cJSON_IsTrue(get(c, "significant")) ? " *" : "");
	buf_append_str(out, " · mean ");
	md_number(out, get(c, "mean_us")->valuedouble);
	buf_append_str(out, " ± ");
	md_number(out, get(c, "stddev_us")->valuedouble);
	if (get(c, "time_pct"))
		buf_printf(out, " (%.1f %%)", get(c, "time_pct")->valuedouble);
	if (cJSON_IsNumber(faults)) {
		buf_printf(out, " · %.0f faults", faults->valuedouble);
		md_count_change(out, c, "page_faults_change_pct", "page_faults_significant");
	}
	if (cJSON_IsNumber(bytes)) {
		buf_printf(out, " · %.0f KiB read", bytes->valuedouble / 1024);
		md_count_change(out, c, "read_bytes_change_pct", "read_bytes_significant");
	}
	if (cJSON_IsFalse(get(c, "cold")))
		buf_printf(out, " · NOT COLD (%s)", text(c, "method"));
}

static void md_table(struct buf *out, const cJSON *table, const cJSON *cells,
		     void (*cell)(struct buf *, const cJSON *))
{
	const cJSON *c, *row;

	buf_append_str(out, "| variant |");
	cJSON_ArrayForEach(c, cells) {
		buf_append_str(out, " ");
		md_escape(out, text(c, "key"));
		buf_append_str(out, " |");
	}
	buf_append_str(out, "\n|---|");
	cJSON_ArrayForEach(c, cells)
		buf_append_str(out, "---|");
	buf_append_str(out, "\n");
	cJSON_ArrayForEach(row, get(table, "variants")) {
		buf_append_str(out, "| ");
		md_escape(out, text(row, "variant"));
		buf_append_str(out, " |");
		cJSON_ArrayForEach(c, get(row, "cells")) {
			buf_append_str(out, " ");
			cell(out, c);
			buf_append_str(out, " |");
		}
		buf_append_str(out, "\n");
	}
}

static void csv_rows(struct buf *out, const char *table_name, const cJSON *table, const char *const *fields)
{
	const cJSON *row, *c;

	cJSON_ArrayForEach(row, get(table, "variants")) {
		cJSON_ArrayForEach(c, get(row, "cells")) {
			cJSON *name = cJSON_CreateString(table_name);
			csv_field(out, name, false);
			cJSON_Delete(name);
			csv_field(out, get(row, "variant"), false);
			for (int i = 0; fields[i]; i++)
				csv_field(out,
					  strncmp(fields[i], "noise_", 6) == 0
						  ? get(get(c, "noise"), fields[i] + 6)
						  : get(c, fields[i]),
					  fields[i + 1] == NULL);
		}
	}
}

static const char *const report_csv_fields[] = {
	"cell",
	"status",
	"reason",
	"n",
	"min_us",
	"median_us",
	"ci_low_us",
	"ci_high_us",
	"mad_us",
	"change_pct",
	"min_change_pct",
	"p_value",
	"significant",
	"mean_us",
	"stddev_us",
	"time_pct",
	"page_faults_mean",
	"read_bytes_mean",
	"cold",
	/* issue 12: the cold table's statistics, the warm table's noise */
	"ratio",
	"ratio_ci_low",
	"ratio_ci_high",
	"page_faults_median",
	"page_faults_change_pct",
	"page_faults_significant",
	"read_bytes_median",
	"read_bytes_change_pct",
	"read_bytes_significant",
	"noise_other_cpu_pct",
	"noise_max_other_cpu_pct",
	"noise_disk_ios",
	"noise_flagged",
	"noise_retaken",
	/* the empty program timed in the same run */
	"floor_median_us",
	"x_floor",
	NULL,
};

int report_render(const cJSON *report, const char *format, struct buf *out)
{
	const cJSON *job = get(report, "job"), *cells = get(report, "cells"), *f;

	if (strcmp(format, "csv") == 0) {
		buf_append_str(out, "table,variant");
		for (int i = 0; report_csv_fields[i]; i++)
			buf_printf(out, ",%s", report_csv_fields[i]);
		buf_append_str(out, "\r\n");
		csv_rows(out, "warm", get(report, "warm"), report_csv_fields);
		if (cJSON_IsObject(get(report, "cold")))
			csv_rows(out, "cold", get(report, "cold"), report_csv_fields);
		return 0;
	}
	if (strcmp(format, "md") != 0)
		return err_set(LL_EINVAL, "Unknown report format '%s'.", format);

	buf_printf(out, "# Job %d: ", (int)get(job, "id")->valuedouble);
	md_escape(out, text(job, "name"));
	buf_printf(out, " (%s, %s)\n\n", text(job, "family"), text(job, "state"));
	buf_printf(
		out,
		"## Warm load time\n\nFastest run in bold (its change against `%s`), then the "
		"median with its 95 %% bootstrap CI, then the median's change against it in the same cell; "
		"`*` marks a significant difference (Mann-Whitney p < %.2f, CI of the ratio "
		"excluding 1, at least %.0f %%); noise: the other processes' CPU share seen while "
		"the cell was measured, and the runs flagged and retaken for it.\n\n",
		text(get(report, "warm"), "baseline"), REPORT_ALPHA, REPORT_MIN_EFFECT_PCT);
	md_table(out, get(report, "warm"), cells, md_warm_cell);
	buf_append_str(out, "\n");
	cJSON_ArrayForEach(f, get(report, "findings")) {
		buf_append_str(out, "- ");
		md_escape(out, f->valuestring);
		buf_append_str(out, "\n");
	}
	if (cJSON_IsObject(get(report, "cold"))) {
		buf_printf(out,
			   "\n## Cold start\n\nMedian cold start in bold with its 95 %% bootstrap CI and "
			   "its change against `%s` in the same cell (`*`: significant, as for warm "
			   "times), then the mean ± standard deviation (as a percentage of the "
			   "baseline's), the median page faults and bytes read with their changes.\n\n",
			   text(get(report, "cold"), "baseline"));
		md_table(out, get(report, "cold"), cells, md_cold_cell);
	}
	if (cJSON_IsObject(get(report, "churn"))) {
		const cJSON *r;
		buf_append_str(
			out,
			"\n## Process churn\n\n| cell | DLL set | processes | create / process | "
			"destroy / process | blocked total | blocked max |\n|---|---|---|---|---|---|---|\n");
		cJSON_ArrayForEach(r, get(get(report, "churn"), "rows")) {
			buf_append_str(out, "| ");
			md_escape(out, text(r, "cell"));
			buf_append_str(out, " | ");
			md_escape(out, text(r, "dll_set"));
			buf_printf(out, " | %.0f | %.1f µs | %.1f µs | ",
				   get(r, "processes") ? get(r, "processes")->valuedouble : 0,
				   get(r, "create_us_per_process")
					   ? get(r, "create_us_per_process")->valuedouble
					   : NAN,
				   get(r, "destroy_us_per_process")
					   ? get(r, "destroy_us_per_process")->valuedouble
					   : NAN);
			if (get(r, "blocked_total_ms"))
				buf_printf(out, "%.1f ms | %.1f ms |\n",
					   get(r, "blocked_total_ms")->valuedouble,
					   get(r, "blocked_max_ms")->valuedouble);
			else
				buf_append_str(out, "not measured | not measured |\n");
		}
	}
	return 0;
}

static const char *const compare_csv_fields[] = {
	"variant",
	"cell",
	"status",
	"reason",
	"regression",
	"baseline_median_us",
	"candidate_median_us",
	"ratio",
	"ratio_ci_low",
	"ratio_ci_high",
	"change_pct",
	"baseline_min_us",
	"candidate_min_us",
	"min_change_pct",
	"min_ratio_ci_low",
	"min_ratio_ci_high",
	"p_value",
	/* issue 12: rounds, the floor, the metric's judgement */
	"significant",
	"unit",
	"baseline_rounds",
	"candidate_rounds",
	"baseline_floor_us",
	"candidate_floor_us",
	"baseline_over_floor_us",
	"candidate_over_floor_us",
	"over_floor_ratio",
	"over_floor_ratio_ci_low",
	"over_floor_ratio_ci_high",
	"over_floor_change_pct",
	NULL,
};

/* Appended to the CSV's columns when the comparison judges floor-ratio
 * (the other metrics' columns stay as they were). */
static const char *const compare_csv_floor_ratio_fields[] = {
	"baseline_floor_ratio", "candidate_floor_ratio",  "floor_ratio", "floor_ratio_ci_low",
	"floor_ratio_ci_high",  "floor_ratio_change_pct", NULL,
};

/* The row fields the Markdown comparison shows for a metric: the two
 * sides' figures, the ratio, its interval and the change. */
struct metric_columns {
	const char *metric, *title, *base, *cand, *ratio, *low, *high, *change;
	int digits;       /* of the sides' figures */
	const char *unit; /* after them */
};

static const struct metric_columns metric_columns[] = {
	{"median", "median", "baseline_median_us", "candidate_median_us", "ratio", "ratio_ci_low",
	 "ratio_ci_high", "change_pct", 1, " µs"},
	{"min", "fastest run", "baseline_min_us", "candidate_min_us", NULL, "min_ratio_ci_low",
	 "min_ratio_ci_high", "min_change_pct", 1, " µs"},
	{"over-floor", "median over floor", "baseline_over_floor_us", "candidate_over_floor_us",
	 "over_floor_ratio", "over_floor_ratio_ci_low", "over_floor_ratio_ci_high", "over_floor_change_pct",
	 1, " µs"},
	{"floor-ratio", "median / floor", "baseline_floor_ratio", "candidate_floor_ratio", "floor_ratio",
	 "floor_ratio_ci_low", "floor_ratio_ci_high", "floor_ratio_change_pct", 3, " ×"},
};

static double field(const cJSON *row, const char *name)
{
	const cJSON *item = get(row, name);
	return cJSON_IsNumber(item) ? item->valuedouble : NAN;
}

/* The columns of METRIC, or FALLBACK. */
static const struct metric_columns *metric_of(const char *metric, const struct metric_columns *fallback)
{
	for (size_t i = 0; i < sizeof(metric_columns) / sizeof(metric_columns[0]); i++)
		if (strcmp(metric, metric_columns[i].metric) == 0)
			return &metric_columns[i];
	return fallback;
}

/* The comparison's "intervals" (report.h) said in one line: whether the
 * intervals hold what varies between jobs, or one job's rounds only. */
static void intervals_line(const cJSON *intervals, struct buf *out)
{
	const char *scope = text(intervals, "scope");
	int rows = (int)field(intervals, "rows_within_and_between_jobs");

	if (!intervals)
		return;
	if (strcmp(scope, "within-job") == 0)
		buf_append_str(
			out, "Intervals are within-job only: no cell had 3 or more earlier jobs of the same "
			     "spec or series to tell what varies between jobs.\n\n");
	else
		buf_printf(out,
			   "Intervals hold what varies between jobs in %d row%s (\"across jobs\", from %d "
			   "earlier "
			   "job%s of the same spec or series)%s.\n\n",
			   rows, rows == 1 ? "" : "s", (int)field(intervals, "history_jobs"),
			   field(intervals, "history_jobs") == 1 ? "" : "s",
			   strcmp(scope, "mixed") == 0 ? "; the others are within-job only" : "");
}

int report_render_compare(const cJSON *comparison, const char *format, struct buf *out)
{
	const cJSON *row, *base = get(comparison, "baseline"), *cand = get(comparison, "candidate");
	const cJSON *counts = get(comparison, "counts");
	const struct metric_columns *m = metric_columns, *rm;
	const bool automatic = strcmp(text(comparison, "metric"), "auto") == 0;
	bool across;

	if (strcmp(format, "csv") == 0) {
		const char *const *more = strcmp(text(comparison, "metric"), "floor-ratio") == 0 ||
							  strcmp(text(comparison, "metric"), "auto") == 0
						  ? compare_csv_floor_ratio_fields
						  : compare_csv_floor_ratio_fields + 6;
		for (int i = 0; compare_csv_fields[i]; i++)
			buf_printf(out, "%s%s", i ? "," : "", compare_csv_fields[i]);
		for (int i = 0; more[i]; i++)
			buf_printf(out, ",%s", more[i]);
		buf_append_str(out, "\r\n");
		cJSON_ArrayForEach(row, get(comparison, "rows")) {
			for (int i = 0; compare_csv_fields[i]; i++)
				csv_field(out, get(row, compare_csv_fields[i]),
					  compare_csv_fields[i + 1] == NULL && !more[0]);
			for (int i = 0; more[i]; i++)
				csv_field(out, get(row, more[i]), more[i + 1] == NULL);
		}
		return 0;
	}
	if (strcmp(format, "md") != 0)
		return err_set(LL_EINVAL, "Unknown comparison format '%s'.", format);
	buf_printf(out, "### loadlab compare: %s\n\nBaseline job %d (", text(comparison, "verdict"),
		   (int)get(base, "id")->valuedouble);
	md_escape(out, text(base, "name"));
	buf_printf(out, "), candidate job %d (", (int)get(cand, "id")->valuedouble);
	md_escape(out, text(cand, "name"));
	buf_printf(out,
		   "); regressions beyond %.1f %% fail. %d faster, %d slower, %d without "
		   "significant change, %d not comparable.\n\n",
		   get(comparison, "max_regression_pct")->valuedouble,
		   (int)get(counts, "faster")->valuedouble, (int)get(counts, "slower")->valuedouble,
		   (int)get(counts, "no_significant_change")->valuedouble,
		   (int)get(counts, "not_comparable")->valuedouble);
	if (cJSON_IsObject(get(comparison, "generator"))) {
		char *a = cJSON_PrintUnformatted(get(get(comparison, "generator"), "baseline"));
		char *b = cJSON_PrintUnformatted(get(get(comparison, "generator"), "candidate"));
		buf_printf(out, "The jobs' generators differ: baseline `%s`, candidate `%s`.\n\n",
			   a ? a : "?", b ? b : "?");
		cJSON_free(a);
		cJSON_free(b);
	}
	m = metric_of(text(comparison, "metric"), metric_columns);
	if (automatic)
		buf_append_str(out, "Judged by the median / floor where both sides have a floor, else by the "
				    "median (each row says which).\n\n");
	else if (m != metric_columns)
		buf_printf(out, "Judged by the %s.\n\n", m->title);
	intervals_line(get(comparison, "intervals"), out);
	if (strcmp(m->metric, "floor-ratio") == 0 || automatic) { /* paired12's legend line */
		int paired = 0, rows = 0;
		cJSON_ArrayForEach(row, get(comparison, "rows")) {
			rows += get(row, "floor_ratio_paired") != NULL;
			paired += cJSON_IsTrue(get(row, "floor_ratio_paired"));
		}
		buf_printf(out,
			   "Paired by pass (the median of variant / floor over the passes) in %d of %d rows; "
			   "the others divide the medians.\n\n",
			   paired, rows);
	}
	buf_printf(out,
		   "| variant | cell | baseline %s | candidate %s | ratio [95 %% CI] | "
		   "change | verdict |\n|---|---|---|---|---|---|---|\n",
		   automatic ? "figure" : m->title, automatic ? "figure" : m->title);
	cJSON_ArrayForEach(row, get(comparison, "rows")) {
		buf_append_str(out, "| ");
		md_escape(out, text(row, "variant"));
		buf_append_str(out, " | ");
		md_escape(out, text(row, "cell"));
		if (strcmp(text(row, "status"), "not_comparable") == 0) {
			buf_append_str(out, " | | | | | not comparable: ");
			md_escape(out, text(row, "reason"));
			buf_append_str(out, " |\n");
			continue;
		}
		rm = automatic ? metric_of(text(row, "metric"), m) : m;
		across = strcmp(text(row, "interval_scope"), "within-and-between-jobs") == 0;
		buf_printf(out, " | %.*f%s | %.*f%s | %.3f [%.3f, %.3f]%s | %+.1f %% | %s%s%s%s |\n",
			   rm->digits, field(row, rm->base), rm->unit, rm->digits, field(row, rm->cand),
			   rm->unit, rm->ratio ? field(row, rm->ratio) : field(row, rm->change) / 100 + 1,
			   field(row, get(row, "interval_low") ? "interval_low" : rm->low),
			   field(row, get(row, "interval_high") ? "interval_high" : rm->high),
			   across ? " across jobs" : "", field(row, rm->change), text(row, "status"),
			   cJSON_IsTrue(get(row, "regression")) ? " **(regression)**" : "",
			   strcmp(text(row, "unit"), "rounds") == 0 ? " (rounds)" : "",
			   automatic ? strcmp(rm->metric, "floor-ratio") == 0 ? " (median / floor)"
									      : " (median)"
				     : "");
	}
	return 0;
}

/* JSON: common's printer (json.h), cJSON_PrintUnformatted()'s bytes. */

char *report_print_json(cJSON *item)
{
	return json_print(item);
}

int report_json_append(const cJSON *item, struct buf *out)
{
	return json_append(out, item);
}

/* report_row.h: rows written as cJSON objects or as their text. */

/* TEXT: ',"KEY":' (no comma first) then VALUE's LEN bytes. */
static void put_member(struct report_row *r, const char *key, const char *value, size_t len)
{
	char head[64];
	size_t n = 0, k;
	bool comma = !r->first;

	r->first = false;
	if (comma)
		head[n++] = ',';
	head[n++] = '"';
	for (k = 0; key[k] && n < sizeof(head) - 2; k++) {
		unsigned char c = (unsigned char)key[k];
		if (c < 32 || c == '"' || c == '\\')
			break;
		head[n++] = (char)c;
	}
	if (key[k]) { /* a key to escape, or a long one: as any string */
		if (r->rc == 0 && comma)
			r->rc = buf_append(r->text, ",", 1);
		if (r->rc == 0)
			r->rc = json_append_string(r->text, key);
		if (r->rc == 0)
			r->rc = buf_append(r->text, ":", 1);
	} else {
		head[n++] = '"';
		head[n++] = ':';
		if (r->rc == 0)
			r->rc = buf_append(r->text, head, n);
	}
	if (r->rc == 0 && len)
		r->rc = buf_append(r->text, value, len);
}

void report_row_number(struct report_row *r, const char *key, double v)
{
	char text[JSON_NUMBER_MAX];

	if (r->obj) {
		cJSON_AddNumberToObject(r->obj, key, v);
		return;
	}
	put_member(r, key, text, json_number_text(v, text));
}

void report_row_bool(struct report_row *r, const char *key, bool v)
{
	if (r->obj) {
		cJSON_AddBoolToObject(r->obj, key, v);
		return;
	}
	put_member(r, key, v ? "true" : "false", v ? 4 : 5);
	if (strcmp(key, "significant") == 0 && r->rc == 0) {
		r->significant_len = v ? 4 : 5;
		r->significant_at = r->text->len - r->significant_len;
	}
}

void report_row_string(struct report_row *r, const char *key, const char *s)
{
	if (!s)
		return;
	if (r->obj) {
		cJSON_AddStringToObject(r->obj, key, s);
		return;
	}
	put_member(r, key, NULL, 0);
	if (r->rc == 0)
		r->rc = json_append_string(r->text, s);
}

void report_row_item(struct report_row *r, const char *key, cJSON *item)
{
	if (r->obj) {
		cJSON_AddItemToObject(r->obj, key, item);
		return;
	}
	put_member(r, key, NULL, 0);
	if (r->rc == 0)
		r->rc = report_json_append(item, r->text);
	cJSON_Delete(item);
}

void report_row_set_significant(struct report_row *r, bool v)
{
	struct buf *t = r->text;
	size_t n = v ? 4 : 5, old = r->significant_len, len, tail;

	if (r->obj) {
		cJSON_ReplaceItemInObjectCaseSensitive(r->obj, "significant", cJSON_CreateBool(v));
		return;
	}
	if (r->rc < 0 || !old)
		return;
	len = t->len;
	tail = len - r->significant_at - old;
	if (n > old && (r->rc = buf_append(t, " ", n - old)) < 0)
		return;
	memmove(t->data + r->significant_at + n, t->data + r->significant_at + old, tail);
	memcpy(t->data + r->significant_at, v ? "true" : "false", n);
	t->len = len - old + n;
	t->data[t->len] = 0;
	r->significant_len = n;
}

void report_row_take(struct report_row *r)
{
	cJSON *item;

	while ((item = r->figures->child)) {
		cJSON_DetachItemViaPointer(r->figures, item);
		if (r->obj) {
			if (!cJSON_AddItemToObject(r->obj, item->string, item))
				cJSON_Delete(item);
			continue;
		}
		if (cJSON_IsBool(item)) {
			report_row_bool(r, item->string, cJSON_IsTrue(item));
		} else {
			put_member(r, item->string, NULL, 0);
			if (r->rc == 0)
				r->rc = json_append(r->text, item);
		}
		cJSON_Delete(item);
	}
}
