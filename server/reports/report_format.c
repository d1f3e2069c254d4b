/* Markdown and CSV forms of reports and comparisons (report.h). */
#include "report_int.h"
#include "report_row.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/report_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *text(const cJSON *obj, const char *key)
{
	const cJSON *item = get(obj, key);
	return cJSON_IsString(item) ? item->valuestring : "";
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

/* TABLE's rows (a row per variant and cell), then EXTRA empty fields. */
static void csv_rows(struct buf *out, const char *table_name, const cJSON *table, const char *const *fields,
		     int extra)
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
					  fields[i + 1] == NULL && extra == 0);
			for (int i = 0; i < extra; i++)
				csv_field(out, NULL, i == extra - 1);
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

/* CSV FIELD: the strings of LIST joined by spaces (file names have none). */
static void csv_list(struct buf *out, const cJSON *list, bool last)
{
	struct buf joined;
	const cJSON *item;
	cJSON *field;

	buf_init(&joined, 65536);
	cJSON_ArrayForEach(item, list)
		if (cJSON_IsString(item))
			buf_printf(&joined, "%s%s", joined.len ? " " : "", item->valuestring);
	field = cJSON_CreateString(buf_str(&joined));
	csv_field(out, field, last);
	cJSON_Delete(field);
	buf_release(&joined);
}

/* A shared build's rows (table "shipped"; docs/builds.md): the variant,
 * then only the columns csv_shipped_fields adds; nothing without SHIPPED. */
static void csv_shipped(struct buf *out, const cJSON *shipped)
{
	const cJSON *row;

	cJSON_ArrayForEach(row, shipped) {
		cJSON *name = cJSON_CreateString("shipped");
		csv_field(out, name, false);
		cJSON_Delete(name);
		csv_field(out, get(row, "variant"), false);
		for (int i = 0; report_csv_fields[i]; i++)
			csv_field(out, strcmp(report_csv_fields[i], "n") == 0 ? get(row, "cells") : NULL,
				  false);
		csv_field(out, get(row, "identical"), false);
		csv_list(out, get(row, "differing_files"), false);
		csv_list(out, get(row, "local_files"), true);
	}
}

int report_render(const cJSON *report, const char *format, struct buf *out)
{
	const bool shipped = cJSON_IsArray(get(report, "shipped"));

	if (strcmp(format, "csv") == 0) {
		buf_append_str(out, "table,variant");
		for (int i = 0; report_csv_fields[i]; i++)
			buf_printf(out, ",%s", report_csv_fields[i]);
		/* a shared build's columns, only when it has one */
		buf_append_str(out, shipped ? ",identical,differing_files,local_files\r\n" : "\r\n");
		if (!cJSON_IsFalse(get(get(report, "warm"), "measured")))
			csv_rows(out, "warm", get(report, "warm"), report_csv_fields, shipped ? 3 : 0);
		if (cJSON_IsObject(get(report, "cold")))
			csv_rows(out, "cold", get(report, "cold"), report_csv_fields, shipped ? 3 : 0);
		csv_shipped(out, get(report, "shipped"));
		return 0;
	}
	if (strcmp(format, "md") != 0)
		return err_set(LL_EINVAL, "Unknown report format '%s'.", format);
	report_markdown_job(report, out);
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

/* The "identical" of VARIANT's row in SIDE's "shipped" (NULL: none). */
static const cJSON *shipped_identical(const cJSON *side, const cJSON *variant)
{
	const cJSON *row;

	cJSON_ArrayForEach(row, get(side, "shipped"))
		if (cJSON_IsString(variant) && strcmp(text(row, "variant"), variant->valuestring) == 0)
			return get(row, "identical");
	return NULL;
}

/* Each side's shared build, in Markdown (docs/builds.md). */
static void md_compare_shipped(struct buf *out, const cJSON *base, const cJSON *cand)
{
	const cJSON *sides[2] = {base, cand};

	for (int i = 0; i < 2; i++) {
		if (!cJSON_IsArray(get(sides[i], "shipped")))
			continue;
		buf_printf(out, "%s job %d was built once and shipped by digest:\n\n",
			   i ? "Candidate" : "Baseline", (int)get(sides[i], "id")->valuedouble);
		report_text_shipped(out, get(sides[i], "shipped"), get(sides[i], "build_cells"), "- ",
				    report_md_escape);
		buf_append_str(out, "\n");
	}
}

int report_render_compare(const cJSON *comparison, const char *format, struct buf *out)
{
	const cJSON *row, *base = get(comparison, "baseline"), *cand = get(comparison, "candidate");
	const cJSON *counts = get(comparison, "counts");
	const struct report_text_metric *m;
	struct report_text_unit unit = report_text_compare_unit(comparison, "µs");
	const bool automatic = strcmp(text(comparison, "metric"), "auto") == 0;

	if (strcmp(format, "csv") == 0) {
		const char *const *more = strcmp(text(comparison, "metric"), "floor-ratio") == 0 ||
							  strcmp(text(comparison, "metric"), "auto") == 0
						  ? compare_csv_floor_ratio_fields
						  : compare_csv_floor_ratio_fields + 6;
		/* a shared build's columns, only when a side has one */
		const bool shipped = get(base, "shipped") || get(cand, "shipped");
		for (int i = 0; compare_csv_fields[i]; i++)
			buf_printf(out, "%s%s", i ? "," : "", compare_csv_fields[i]);
		for (int i = 0; more[i]; i++)
			buf_printf(out, ",%s", more[i]);
		buf_append_str(out, shipped ? ",baseline_identical,candidate_identical\r\n" : "\r\n");
		cJSON_ArrayForEach(row, get(comparison, "rows")) {
			for (int i = 0; compare_csv_fields[i]; i++)
				csv_field(out, get(row, compare_csv_fields[i]),
					  compare_csv_fields[i + 1] == NULL && !more[0] && !shipped);
			for (int i = 0; more[i]; i++)
				csv_field(out, get(row, more[i]), more[i + 1] == NULL && !shipped);
			if (shipped) {
				csv_field(out, shipped_identical(base, get(row, "variant")), false);
				csv_field(out, shipped_identical(cand, get(row, "variant")), true);
			}
		}
		return 0;
	}
	if (strcmp(format, "md") != 0)
		return err_set(LL_EINVAL, "Unknown comparison format '%s'.", format);
	/* the answer first: the verdict, the counts, the table; then what
	 * explains it, and the builds' provenance last */
	buf_printf(out, "### loadlab compare: %s\n\nBaseline job %d (", text(comparison, "verdict"),
		   (int)get(base, "id")->valuedouble);
	report_md_escape(out, text(base, "name"));
	buf_printf(out, "), candidate job %d (", (int)get(cand, "id")->valuedouble);
	report_md_escape(out, text(cand, "name"));
	buf_printf(out,
		   "); regressions beyond %.1f %% fail. %d faster, %d slower, %d without "
		   "significant change, %d not comparable.\n",
		   get(comparison, "max_regression_pct")->valuedouble,
		   (int)get(counts, "faster")->valuedouble, (int)get(counts, "slower")->valuedouble,
		   (int)get(counts, "no_significant_change")->valuedouble,
		   (int)get(counts, "not_comparable")->valuedouble);
	report_text_power(out, comparison);
	buf_append_str(out,
		       "\n| variant | cell | baseline | candidate | ratio [95 % CI] | change | p | verdict | "
		       "detectable | medians (context) | counts (context) |\n"
		       "|---|---|---|---|---|---|---|---|---|---|---|\n");
	cJSON_ArrayForEach(row, get(comparison, "rows")) {
		struct report_text_judged j;
		buf_append_str(out, "| ");
		report_md_escape(out, text(row, "variant"));
		buf_append_str(out, " | ");
		report_md_escape(out, text(row, "cell"));
		if (strcmp(text(row, "status"), "not_comparable") == 0) {
			buf_append_str(out, strncmp(text(row, "reason"), "not counted", 11) == 0
						    ? " | | | | | | "
						    : " | | | | | | not comparable: ");
			report_md_escape(out, text(row, "reason"));
			buf_append_str(out, " | | | |\n");
			continue;
		}
		report_text_judged_of(row, text(comparison, "metric"), &j);
		buf_append_str(out, " | ");
		report_text_judged_side(out, &j, false, unit, "×");
		buf_append_str(out, " | ");
		report_text_judged_side(out, &j, true, unit, "×");
		buf_printf(out, " | %.3f [%.3f, %.3f]%s | %+.1f %% | ", j.ratio, j.low, j.high,
			   j.across ? " across jobs" : "", j.change);
		report_text_judged_p(out, &j, "–");
		buf_printf(out, " | %s%s%s%s | ", report_text_status_words(text(row, "status")),
			   cJSON_IsTrue(get(row, "regression")) ? " **(regression)**" : "",
			   strcmp(text(row, "unit"), "rounds") == 0 ? " (rounds)" : "",
			   automatic ? strcmp(j.metric->metric, "floor-ratio") == 0 ? " (median / floor)"
										    : " (median)"
				     : "");
		report_text_detectable(out, row);
		buf_append_str(out, " | ");
		report_text_medians(out, row, unit, "→");
		buf_append_str(out, " | ");
		report_text_counts(out, row, "µs");
		buf_append_str(out, " |\n");
	}
	buf_append_str(out,
		       "\nBaseline and candidate are the figures of the metric that judged the row "
		       "(× floor: the median over the empty program's); the ratio, its 95 % interval and "
		       "the change are theirs, the ones the verdict used; p is the Mann-Whitney test where "
		       "it decides beside the interval (–: the interval alone decides); detectable is the "
		       "least change the row could see (at the interval's 95 % level and 80 % power, "
		       "docs/statistics.md); the medians and the counts (the run counters' median "
		       "differences) are context only.\n\n");
	m = report_text_row_metric(NULL, text(comparison, "metric"));
	if (automatic)
		buf_append_str(out, "Judged by the median / floor where both sides have a floor, else by the "
				    "median (each row says which).\n\n");
	else if (strcmp(m->metric, "median") != 0)
		buf_printf(out, "Judged by the %s.\n\n", m->title);
	report_text_intervals(out, get(comparison, "intervals"));
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
	if (cJSON_IsObject(get(comparison, "generator"))) {
		char *a = cJSON_PrintUnformatted(get(get(comparison, "generator"), "baseline"));
		char *b = cJSON_PrintUnformatted(get(get(comparison, "generator"), "candidate"));
		buf_printf(out, "The jobs' generators differ: baseline `%s`, candidate `%s`.\n\n",
			   a ? a : "?", b ? b : "?");
		cJSON_free(a);
		cJSON_free(b);
	}
	md_compare_shipped(out, base, cand);
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
