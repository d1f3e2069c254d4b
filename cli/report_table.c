#include "report_table.h"

#include "table.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/report_text.h" /* report_text_failed_cell */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *get(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static double number(const cJSON *obj, const char *key)
{
	const cJSON *item = get(obj, key);
	return cJSON_IsNumber(item) ? item->valuedouble : 0;
}

/* Microseconds as "812.4 us", and "92220.0 us" rather than "92.22 ms":
 * every load time is in microseconds, as the API and the dashboard give
 * them (a table that switches units per cell reads wrong at a glance). */
static void duration(struct buf *b, double us)
{
	buf_printf(b, "%.1f us", us);
}

static void warm_text(struct buf *b, const cJSON *c)
{
	if (report_text_failed_cell(b, c, "?", NULL))
		return;
	duration(b, number(c, "min_us"));
	buf_append_str(b, " / ");
	duration(b, number(c, "median_us"));
	if (get(c, "change_pct"))
		buf_printf(b, " %+.1f%%%s", number(c, "change_pct"),
			   cJSON_IsTrue(get(c, "significant")) ? "*" : "");
	if (cJSON_IsNumber(get(c, "x_floor"))) /* the median over the empty program's */
		buf_printf(b, " %.2fx", number(c, "x_floor"));
	if (cJSON_IsObject(get(c, "noise"))) /* other CPU max %, runs flagged/retaken */
		buf_printf(b, " noise %.0f%% %.0f/%.0f", number(get(c, "noise"), "max_other_cpu_pct"),
			   number(get(c, "noise"), "flagged"), number(get(c, "noise"), "retaken"));
}

static void cold_text(struct buf *b, const cJSON *c)
{
	if (report_text_failed_cell(b, c, "?", NULL))
		return;
	duration(b, number(c, "median_us"));
	if (get(c, "change_pct"))
		buf_printf(b, " %+.1f%%%s /", number(c, "change_pct"),
			   cJSON_IsTrue(get(c, "significant")) ? "*" : "");
	else
		buf_append_str(b, " /");
	buf_append_str(b, " ");
	duration(b, number(c, "mean_us"));
	if (get(c, "time_pct"))
		buf_printf(b, " (%.1f%%)", number(c, "time_pct"));
	if (get(c, "page_faults_mean"))
		buf_printf(b, " %.0f faults%s", number(c, "page_faults_mean"),
			   cJSON_IsTrue(get(c, "page_faults_significant")) ? "*" : "");
	if (get(c, "read_bytes_mean"))
		buf_printf(b, " %.0f KiB%s", number(c, "read_bytes_mean") / 1024,
			   cJSON_IsTrue(get(c, "read_bytes_significant")) ? "*" : "");
	if (cJSON_IsFalse(get(c, "cold")))
		buf_append_str(b, " NOT COLD");
}

/* One table: a row per variant, a column per report cell. */
static int print_table(const cJSON *table, const cJSON *cells, FILE *out,
		       void (*text)(struct buf *, const cJSON *))
{
	int columns = cJSON_GetArraySize(cells) + 1, i = 1, rc = 0;
	const char **headers = calloc((size_t)columns + 1, sizeof(*headers));
	const cJSON *c, *row;
	struct table t;

	if (!headers)
		return LL_ENOMEM;
	headers[0] = "VARIANT";
	cJSON_ArrayForEach(c, cells)
		headers[i++] = cJSON_IsString(get(c, "key")) ? get(c, "key")->valuestring : "?";
	table_init(&t, headers);
	cJSON_ArrayForEach(row, get(table, "variants")) {
		rc = table_add_json(&t, get(row, "variant"));
		cJSON_ArrayForEach(c, get(row, "cells")) {
			struct buf b;
			buf_init(&b, 4096);
			text(&b, c);
			if (rc == 0)
				rc = table_add(&t, buf_str(&b));
			buf_release(&b);
		}
	}
	rc = table_finish(&t, rc, out);
	free(headers);
	return rc;
}

int report_table_print(const cJSON *report, FILE *out)
{
	const cJSON *job = get(report, "job"), *cells = get(report, "cells"), *f, *r;
	int rc;

	if (!cJSON_IsObject(job) || !cJSON_IsArray(cells) || !cJSON_IsObject(get(report, "warm")))
		return err_set(LL_EFORMAT, "The server's report is not shaped as schemas/report.json.");
	fprintf(out, "Job %.0f: ", number(job, "id"));
	table_print_text(out, cJSON_IsString(get(job, "name")) ? get(job, "name")->valuestring : "?");
	fprintf(out,
		"\n\nWarm load time, us: fastest / median, median change against %s (* significant),\n"
		"median over the empty program's (Nx), noise: other CPU max, runs flagged/retaken\n",
		cJSON_IsString(get(get(report, "warm"), "baseline"))
			? get(get(report, "warm"), "baseline")->valuestring
			: "?");
	if ((rc = print_table(get(report, "warm"), cells, out, warm_text)) < 0)
		return rc;
	cJSON_ArrayForEach(f, get(report, "findings")) {
		fputs("  ", out);
		table_print_text(out, cJSON_IsString(f) ? f->valuestring : "");
		fputc('\n', out);
	}
	if (cJSON_IsObject(get(report, "cold"))) {
		fputs("\nCold start, us: median (its change, * significant) / mean (percent of the "
		      "baseline), "
		      "page faults, bytes read\n",
		      out);
		if ((rc = print_table(get(report, "cold"), cells, out, cold_text)) < 0)
			return rc;
	}
	if (cJSON_IsObject(get(report, "churn"))) {
		struct table t;
		table_init(&t, (const char *const[]){"CELL", "DLL SET", "PROCESSES", "CREATE/PROC US",
						     "DESTROY/PROC US", "BLOCKED TOTAL MS", "BLOCKED MAX MS",
						     NULL});
		fputs("\nProcess churn\n", out);
		cJSON_ArrayForEach(r, get(get(report, "churn"), "rows")) {
			table_add_json(&t, get(r, "cell"));
			table_add_json(&t, get(r, "dll_set"));
			table_add_json(&t, get(r, "processes"));
			table_addf(&t, "%.1f", number(r, "create_us_per_process"));
			table_addf(&t, "%.1f", number(r, "destroy_us_per_process"));
			table_add_json(&t, get(r, "blocked_total_ms"));
			table_add_json(&t, get(r, "blocked_max_ms"));
		}
		table_print(&t, out);
		table_release(&t);
	}
	return 0;
}
