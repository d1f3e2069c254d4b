/* The process-churn table of a job's report and its findings (report.h,
 * "churn"): the seed's study (creating and destroying 1,000 processes,
 * with and without user32.dll) read against the `none` set of the same
 * cell. */
#include "report_int.h"

#include "loadlab/buf.h"
#include "loadlab/report_text.h"

#include <string.h>

/* The set every other one is read against, as the seed's program without
 * -user32. */
#define CHURN_BASELINE "none"

static void add_ratio(cJSON *row, const char *key, double figure, double baseline)
{
	if (baseline > 0 && isfinite(figure))
		cJSON_AddNumberToObject(row, key, round_to(figure / baseline, 0.001));
}

/* The row of one set's figures C in the cell KEY. */
static cJSON *churn_row(const char *key, const cJSON *c)
{
	double processes = number(c, "processes", 0);
	const cJSON *method = get(c, "method");
	cJSON *r = cJSON_CreateObject();

	cJSON_AddStringToObject(r, "cell", key);
	cJSON_AddStringToObject(r, "dll_set", string(c, "dll_set") ? string(c, "dll_set") : "?");
	cJSON_AddNumberToObject(r, "processes", processes);
	if (processes > 0) {
		cJSON_AddNumberToObject(r, "create_us_per_process",
					round_to(number(c, "create_us", 0) / processes, 0.1));
		cJSON_AddNumberToObject(r, "destroy_us_per_process",
					round_to(number(c, "destroy_us", 0) / processes, 0.1));
	}
	if (get(c, "blocked_total_ms")) {
		cJSON_AddNumberToObject(r, "blocked_total_ms", number(c, "blocked_total_ms", 0));
		cJSON_AddNumberToObject(r, "blocked_max_ms", number(c, "blocked_max_ms", 0));
		/* the same in the table's one unit, as the other figures */
		cJSON_AddNumberToObject(r, "blocked_total_us",
					round_to(number(c, "blocked_total_ms", 0) * 1000, 0.1));
		cJSON_AddNumberToObject(r, "blocked_max_us",
					round_to(number(c, "blocked_max_ms", 0) * 1000, 0.1));
	} else {
		cJSON_AddStringToObject(r, "blocked", "not measured on this platform");
	}
	if (string(method, "runner"))
		cJSON_AddStringToObject(r, "runner", string(method, "runner"));
	return r;
}

/* The row of ROWS (from FIRST on) in the same cell as ROW whose set is
 * none, or NULL. */
static const cJSON *baseline_row(const cJSON *first, const cJSON *row)
{
	for (const cJSON *r = first; r; r = r->next)
		if (strcmp(string(r, "cell"), string(row, "cell")) == 0 &&
		    strcmp(string(r, "dll_set"), CHURN_BASELINE) == 0)
			return r;
	return NULL;
}

/* Adds each row's ratios against its cell's none (none's own are 1). */
static void add_ratios(cJSON *rows)
{
	cJSON *r;

	cJSON_ArrayForEach(r, rows) {
		const cJSON *base = baseline_row(rows->child, r);
		if (!base)
			continue;
		add_ratio(r, "create_ratio", number(r, "create_us_per_process", NAN),
			  number(base, "create_us_per_process", 0));
		add_ratio(r, "destroy_ratio", number(r, "destroy_us_per_process", NAN),
			  number(base, "destroy_us_per_process", 0));
		add_ratio(r, "blocked_total_ratio", number(r, "blocked_total_ms", NAN),
			  number(base, "blocked_total_ms", 0));
	}
}

/* The largest duration of ROWS, in microseconds: the table's unit. */
static double largest_us(const cJSON *rows)
{
	static const char *const keys[] = {"create_us_per_process", "destroy_us_per_process",
					   "blocked_total_us", "blocked_max_us"};
	const cJSON *r;
	double largest = 0;

	cJSON_ArrayForEach(r, rows)
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			largest = fmax(largest, number(r, keys[i], 0));
	return largest;
}

cJSON *report_churn_table(const cJSON *tasks)
{
	cJSON *out, *rows = cJSON_CreateArray();
	const cJSON *t, *c;

	cJSON_ArrayForEach(t, tasks)
		cJSON_ArrayForEach(c, get(get(t, "summary"), "churn"))
			cJSON_AddItemToArray(rows, churn_row(string(t, "key"), c));
	if (!rows->child) {
		cJSON_Delete(rows);
		return NULL;
	}
	add_ratios(rows);
	out = cJSON_CreateObject();
	cJSON_AddStringToObject(out, "baseline", CHURN_BASELINE);
	cJSON_AddStringToObject(out, "unit", report_text_unit_of(largest_us(rows), "us").name);
	cJSON_AddItemToObject(out, "rows", rows);
	return out;
}

/* "2240.0 µs against 801.0 µs": the figure KEY of R and of BASE, in the
 * one unit the larger calls for (a pair read as a table is). */
static void say_pair(struct buf *text, const cJSON *r, const cJSON *base, const char *key)
{
	double a = number(r, key, 0), b = number(base, key, 0);
	struct report_text_unit unit = report_text_unit_of(fmax(a, b), "µs");

	report_text_figure(text, a, unit);
	buf_printf(text, " %s against ", unit.name);
	report_text_figure(text, b, unit);
	buf_printf(text, " %s", unit.name);
}

/* "destroying a process took 2.80× as long (2240.0 µs against 801.0 µs)" */
static void say_ratio(struct buf *text, const char *what, const cJSON *r, const cJSON *base, const char *key,
		      const char *ratio)
{
	buf_printf(text, "%s took %.2f× as long (", what, number(r, ratio, 0));
	say_pair(text, r, base, key);
	buf_append_str(text, ")");
}

void report_churn_findings(const cJSON *churn, cJSON *findings)
{
	const cJSON *rows = get(churn, "rows"), *r;

	cJSON_ArrayForEach(r, rows) {
		const cJSON *base = baseline_row(rows->child, r);
		struct buf text;
		if (strcmp(string(r, "dll_set"), CHURN_BASELINE) == 0)
			continue;
		buf_init(&text, 8192);
		buf_printf(&text, "%s against %s on %s: ", string(r, "dll_set"), CHURN_BASELINE,
			   string(r, "cell"));
		if (!base || !get(r, "destroy_ratio") || !get(r, "create_ratio")) {
			buf_append_str(&text, "no figures of none in this cell to compare with.");
		} else {
			say_ratio(&text, "destroying a process", r, base, "destroy_us_per_process",
				  "destroy_ratio");
			buf_append_str(&text, ", ");
			say_ratio(&text, "creating one", r, base, "create_us_per_process", "create_ratio");
			if (get(r, "blocked_total_ms") && get(base, "blocked_total_ms")) {
				buf_append_str(&text, "; the input lock was blocked in total ");
				say_pair(&text, r, base, "blocked_total_us");
				if (get(r, "blocked_total_ratio"))
					buf_printf(&text, " (%.1f×)", number(r, "blocked_total_ratio", 0));
			}
			buf_append_str(&text, ".");
		}
		cJSON_AddItemToArray(findings, cJSON_CreateString(buf_str(&text)));
		buf_release(&text);
	}
}
