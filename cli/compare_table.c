#include "compare_table.h"

#include "table.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/report_text.h"

#include <math.h>
#include <string.h>

static const cJSON *get(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static const char *text(const cJSON *obj, const char *key)
{
	const char *s = cJSON_GetStringValue(get(obj, key));
	return s ? s : "";
}

static double number(const cJSON *obj, const char *key)
{
	const cJSON *item = get(obj, key);
	return cJSON_IsNumber(item) ? item->valuedouble : NAN;
}

/* The lines above the table: the answer (the verdict, the jobs, the
 * counts). */
static void print_head(const cJSON *cmp, FILE *out)
{
	const cJSON *counts = get(cmp, "counts");
	struct buf b;

	buf_init(&b, 1 << 20);
	buf_printf(&b,
		   "loadlab compare: %s\n\nBaseline job %.0f (%s), candidate job %.0f (%s); regressions "
		   "beyond %.1f %% fail.\n",
		   text(cmp, "verdict"), number(get(cmp, "baseline"), "id"),
		   text(get(cmp, "baseline"), "name"), number(get(cmp, "candidate"), "id"),
		   text(get(cmp, "candidate"), "name"), number(cmp, "max_regression_pct"));
	buf_printf(&b, "%.0f faster, %.0f slower, %.0f without significant change, %.0f not comparable.\n",
		   number(counts, "faster"), number(counts, "slower"),
		   number(counts, "no_significant_change"), number(counts, "not_comparable"));
	report_text_power(&b, cmp);
	buf_append_str(&b, "\n");
	table_print_lines(out, buf_str(&b));
	buf_release(&b);
}

/* The lines below the table: what its columns hold, the metric, the
 * intervals' scope, the generators. */
static void print_notes(const cJSON *cmp, FILE *out)
{
	const char *metric = text(cmp, "metric");
	struct buf b;

	buf_init(&b, 1 << 20);
	buf_append_str(
		&b, "\nBASELINE and CANDIDATE: the figures of the metric that judged the row (x floor: the\n"
		    "median over the empty program's, paired by pass); RATIO, its 95 % interval and\n"
		    "CHANGE: theirs, the ones the verdict used; P: the Mann-Whitney test where it decides\n"
		    "beside the interval (-: the interval alone decides); DETECTABLE: the least change\n"
		    "the row could see (95 % level, 80 % power); MEDIANS and COUNTS (the run counters'\n"
		    "median differences): context only.\n");
	if (strcmp(metric, "auto") == 0)
		buf_append_str(
			&b, "Judged by the median / floor where both sides have a floor, else by the median "
			    "(each row says which).\n");
	else if (strcmp(metric, "median") != 0)
		buf_printf(&b, "Judged by the %s.\n", report_text_row_metric(NULL, metric)->title);
	report_text_intervals(&b, get(cmp, "intervals"));
	if (cJSON_IsObject(get(cmp, "generator"))) {
		char *a = cJSON_PrintUnformatted(get(get(cmp, "generator"), "baseline"));
		char *c = cJSON_PrintUnformatted(get(get(cmp, "generator"), "candidate"));
		buf_printf(&b, "The jobs' generators differ: baseline %s, candidate %s.\n", a ? a : "?",
			   c ? c : "?");
		cJSON_free(a);
		cJSON_free(c);
	}
	table_print_lines(out, buf_str(&b));
	buf_release(&b);
}

/* Each side's shared build (docs/builds.md), below the table. */
static void print_shipped(const cJSON *comparison, FILE *out)
{
	const char *names[2] = {"baseline", "candidate"};
	struct buf b;

	for (int i = 0; i < 2; i++) {
		const cJSON *side = get(comparison, names[i]);
		if (!cJSON_IsArray(get(side, "shipped")))
			continue;
		buf_init(&b, 65536);
		buf_printf(&b, "\nThe %s job %.0f was built once and shipped by digest:\n", names[i],
			   number(side, "id"));
		report_text_shipped(&b, get(side, "shipped"), get(side, "build_cells"), "  ", NULL);
		table_print_lines(out, buf_str(&b));
		buf_release(&b);
	}
}

/* ROW's cells: the judged figures of its sides in UNIT, their ratio
 * with the interval the verdict used, the change, p, the verdict in words
 * (with the metric the row was judged by), the raw medians as context. */
static int add_row(struct table *t, const cJSON *row, const char *metric, struct report_text_unit unit)
{
	struct report_text_judged j;
	bool automatic = strcmp(metric, "auto") == 0;
	struct buf b;
	int rc;

	table_add_json(t, get(row, "variant"));
	table_add_json(t, get(row, "cell"));
	if (strcmp(text(row, "status"), "not_comparable") == 0) {
		for (int i = 0; i < 5; i++)
			table_add(t, "");
		/* a counter a side did not count says so itself */
		table_addf(t,
			   strncmp(text(row, "reason"), "not counted", 11) == 0 ? "%s" : "not comparable: %s",
			   text(row, "reason"));
		for (int i = 0; i < 2; i++)
			table_add(t, "");
		return table_add(t, "");
	}
	report_text_judged_of(row, metric, &j);
	buf_init(&b, 4096);
	report_text_judged_side(&b, &j, false, unit, "x");
	table_add(t, buf_str(&b));
	buf_reset(&b);
	report_text_judged_side(&b, &j, true, unit, "x");
	table_add(t, buf_str(&b));
	table_addf(t, "%.3f [%.3f, %.3f]%s", j.ratio, j.low, j.high, j.across ? " across jobs" : "");
	table_addf(t, "%+.1f %%", j.change);
	buf_reset(&b);
	report_text_judged_p(&b, &j, "-");
	table_add(t, buf_str(&b));
	table_addf(t, "%s%s%s%s", report_text_status_words(text(row, "status")),
		   cJSON_IsTrue(get(row, "regression")) ? " (regression)" : "",
		   strcmp(text(row, "unit"), "rounds") == 0 ? " (rounds)" : "",
		   !automatic                                     ? ""
		   : strcmp(j.metric->metric, "floor-ratio") == 0 ? " (median / floor)"
								  : " (median)");
	buf_reset(&b);
	report_text_detectable(&b, row);
	table_add(t, buf_str(&b));
	buf_reset(&b);
	report_text_medians(&b, row, unit, "->");
	table_add(t, buf_str(&b));
	buf_reset(&b);
	report_text_counts(&b, row, "us");
	rc = table_add(t, buf_str(&b));
	buf_release(&b);
	return rc;
}

int compare_table_print(const cJSON *comparison, FILE *out)
{
	const char *metric = text(comparison, "metric");
	struct report_text_unit unit = report_text_compare_unit(comparison, "us");
	const cJSON *row;
	struct table t;
	int rc = 0;

	if (!cJSON_IsArray(get(comparison, "rows")) || !cJSON_IsObject(get(comparison, "counts")))
		return err_set(LL_EFORMAT, "The server's comparison is not shaped as schemas/compare.json.");
	print_head(comparison, out);
	table_init(&t, (const char *const[]){"VARIANT", "CELL", "BASELINE", "CANDIDATE", "RATIO [95% CI]",
					     "CHANGE", "P", "VERDICT", "DETECTABLE", "MEDIANS (CONTEXT)",
					     "COUNTS (CONTEXT)", NULL});
	cJSON_ArrayForEach(row, get(comparison, "rows"))
		if (rc == 0)
			rc = add_row(&t, row, metric, unit);
	if ((rc = table_finish(&t, rc, out)) == 0) {
		print_notes(comparison, out);
		print_shipped(comparison, out);
	}
	return rc;
}
