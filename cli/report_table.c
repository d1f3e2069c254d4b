#include "report_table.h"

#include "table.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/report_text.h" /* report_text_failed_cell, report_text_shipped */

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

/* A duration in its table's one unit, "812.4 us" or "92.22 ms": the unit
 * the report names for the table (report_text.h's rule, the Markdown's
 * and the dashboard's), never one per cell. */
static void duration(struct buf *b, double us, struct report_text_unit unit)
{
	report_text_figure(b, us, unit);
	buf_printf(b, " %s", unit.name);
}

/* The unit of the report's TABLE (its "unit"; microseconds when an older
 * server gave none). */
static struct report_text_unit unit_of(const cJSON *table)
{
	const cJSON *unit = get(table, "unit");
	return report_text_unit_named(cJSON_IsString(unit) ? unit->valuestring : NULL, "us");
}

static void warm_text(struct buf *b, const cJSON *c, struct report_text_unit unit)
{
	if (report_text_failed_cell(b, c, "?", NULL))
		return;
	duration(b, number(c, "min_us"), unit);
	buf_append_str(b, " / ");
	duration(b, number(c, "median_us"), unit);
	if (get(c, "change_pct")) { /* with the interval and p that decide the star */
		buf_printf(b, " %+.1f%%%s", number(c, "change_pct"),
			   cJSON_IsTrue(get(c, "significant")) ? "*" : "");
		if (cJSON_IsNumber(get(c, "ratio_ci_low")) && cJSON_IsNumber(get(c, "ratio_ci_high")))
			buf_printf(b, " [%.3f, %.3f]", number(c, "ratio_ci_low"), number(c, "ratio_ci_high"));
		if (cJSON_IsNumber(get(c, "p_value")))
			buf_printf(b, number(c, "p_value") < 0.001 ? " p %.1e" : " p %.3f",
				   number(c, "p_value"));
	}
	if (cJSON_IsNumber(get(c, "x_floor"))) /* the median over the empty program's */
		buf_printf(b, " %.2fx floor", number(c, "x_floor"));
	if (cJSON_IsObject(get(c, "noise"))) /* other CPU max %, runs flagged/retaken */
		buf_printf(b, " noise %.0f%% %.0f/%.0f", number(get(c, "noise"), "max_other_cpu_pct"),
			   number(get(c, "noise"), "flagged"), number(get(c, "noise"), "retaken"));
	if (report_text_has_notes(c))
		buf_append_str(b, " !");
}

static void cold_text(struct buf *b, const cJSON *c, struct report_text_unit unit)
{
	if (report_text_failed_cell(b, c, "?", NULL))
		return;
	duration(b, number(c, "median_us"), unit);
	if (get(c, "change_pct"))
		buf_printf(b, " %+.1f%%%s /", number(c, "change_pct"),
			   cJSON_IsTrue(get(c, "significant")) ? "*" : "");
	else
		buf_append_str(b, " /");
	buf_append_str(b, " ");
	duration(b, number(c, "mean_us"), unit);
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
	if (report_text_has_notes(c))
		buf_append_str(b, " !");
}

/* The notes of TABLE (what the runner cannot show, marked "!" in its
 * cells), a line each. */
static void print_notes(const cJSON *table, FILE *out)
{
	struct buf b;

	buf_init(&b, 65536);
	report_text_notes(&b, table, "  ! ", NULL);
	table_print_lines(out, buf_str(&b));
	buf_release(&b);
}

/* One table: a row per variant, a column per report cell, then its notes. */
static int print_table(const cJSON *table, const cJSON *cells, FILE *out,
		       void (*text)(struct buf *, const cJSON *, struct report_text_unit))
{
	struct report_text_unit unit = unit_of(table);
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
			text(&b, c, unit);
			if (rc == 0)
				rc = table_add(&t, buf_str(&b));
			buf_release(&b);
		}
	}
	rc = table_finish(&t, rc, out);
	free(headers);
	if (rc == 0)
		print_notes(table, out);
	return rc;
}

/* "812.4 (2.80x)": a churn figure in UNIT with its ratio against none. */
static void churn_figure(struct table *t, const cJSON *r, const char *key, const char *ratio,
			 struct report_text_unit unit)
{
	struct buf b;

	buf_init(&b, 256);
	if (cJSON_IsNumber(get(r, key)))
		report_text_figure(&b, number(r, key), unit);
	else
		buf_append_str(&b, "-");
	if (ratio && cJSON_IsNumber(get(r, ratio)))
		buf_printf(&b, " (%.2fx)", number(r, ratio));
	table_add(t, buf_str(&b));
	buf_release(&b);
}

/* The churn table: per cell and DLL set, per process, against none. */
static void print_churn(const cJSON *churn, FILE *out)
{
	struct report_text_unit unit = unit_of(churn);
	const char *baseline =
		cJSON_IsString(get(churn, "baseline")) ? get(churn, "baseline")->valuestring : "none";
	const cJSON *r;
	struct table t;

	table_init(&t, (const char *const[]){"CELL", "DLL SET", "PROCESSES", "CREATE/PROC", "DESTROY/PROC",
					     "BLOCKED TOTAL", "BLOCKED MAX", NULL});
	fprintf(out,
		"\nProcess churn, %s per process (its ratio against %s in the same cell), and the\n"
		"input lock's blocked time while they were destroyed (! what the runner cannot show).\n"
		"One run of every process each: no interval, so no change is called significant.\n",
		unit.name, baseline);
	cJSON_ArrayForEach(r, get(churn, "rows")) {
		char set[128];
		table_add_json(&t, get(r, "cell"));
		table_json_text(get(r, "dll_set"), set, sizeof(set) - 2);
		table_addf(&t, "%s%s", set, report_text_has_notes(r) ? " !" : "");
		table_add_json(&t, get(r, "processes"));
		churn_figure(&t, r, "create_us_per_process", "create_ratio", unit);
		churn_figure(&t, r, "destroy_us_per_process", "destroy_ratio", unit);
		if (cJSON_IsNumber(get(r, "blocked_total_us"))) {
			churn_figure(&t, r, "blocked_total_us", "blocked_total_ratio", unit);
			churn_figure(&t, r, "blocked_max_us", NULL, unit);
		} else {
			table_add(&t, "not measured");
			table_add(&t, "not measured");
		}
	}
	table_print(&t, out);
	table_release(&t);
	print_notes(churn, out);
}

/* KEY of ROW as a count, or "-" where the agent recorded none; the
 * files' own count (STATIC_KEY, may be NULL) beside it where it differs. */
static void count_cell(struct table *t, const cJSON *row, const char *key, const char *static_key)
{
	if (!cJSON_IsNumber(get(row, key)))
		table_add(t, "-");
	else if (static_key && cJSON_IsNumber(get(row, static_key)) &&
		 number(row, static_key) != number(row, key))
		table_addf(t, "%.0f (files %.0f)", number(row, key), number(row, static_key));
	else
		table_addf(t, "%.0f", number(row, key));
}

/* A line under the table: PREFIX, row R's variant, then its string KEY. */
static void print_variant_line(FILE *out, const char *prefix, const cJSON *r, const char *key)
{
	const cJSON *variant = get(r, "variant");

	fputs(prefix, out);
	table_print_text(out, cJSON_IsString(variant) ? variant->valuestring : "?");
	fputs(": ", out);
	table_print_text(out, get(r, key)->valuestring);
	fputc('\n', out);
}

/* The loader-work table (server/reports/report_loader_work.h): per
 * variant and cell, the loader's counts, flagged rows' reasons below. */
static void print_loader_work(const cJSON *work, FILE *out)
{
	const cJSON *r;
	struct table t;
	const char *note = NULL;

	table_init(&t, (const char *const[]){"VARIANT", "CELL", "SOURCE", "RELOCATIONS", "RELATIVE", "LAZY",
					     "BY NAME", "BY ORDINAL", "BOUND", "LOADER TIME", NULL});
	fputs("\nLoader work: relocations applied (ELF: symbol lookups at start-up; PE: base\n"
	      "relocations of images away from their base), relative relocations and lazy bindings\n"
	      "after the start (ELF), imports by name, by ordinal and held by a valid binding (PE;\n"
	      "\"files N\" where the images say otherwise than what the probe saw),\n"
	      "time in the loader where glibc reports it; \"!\" the counts contradict the\n"
	      "variant's transform (below the table)\n",
	      out);
	cJSON_ArrayForEach(r, get(work, "rows")) {
		table_addf(&t, "%s%s%s",
			   cJSON_IsString(get(r, "variant")) ? get(r, "variant")->valuestring : "?",
			   cJSON_IsFalse(get(r, "valid")) ? " (invalid)" : "",
			   cJSON_IsTrue(get(r, "flagged")) ? " !" : "");
		table_add_json(&t, get(r, "cell"));
		if (cJSON_IsString(get(r, "not_counted"))) {
			table_add(&t, "not counted");
			for (int i = 0; i < 7; i++)
				table_add(&t, "-");
			continue;
		}
		table_add_json(&t, get(r, "source"));
		count_cell(&t, r, "relocations", "static_relocations");
		count_cell(&t, r, "relative_relocations", NULL);
		count_cell(&t, r, "lazy_after_start", NULL);
		count_cell(&t, r, "imports_by_name", NULL);
		count_cell(&t, r, "imports_by_ordinal", NULL);
		count_cell(&t, r, "imports_bound", "static_imports_bound");
		if (cJSON_IsNumber(get(r, "startup_time")))
			table_addf(&t, "%.0f %s", number(r, "startup_time"),
				   cJSON_IsString(get(r, "time_unit")) ? get(r, "time_unit")->valuestring
								       : "");
		else
			table_add(&t, "-");
	}
	table_print(&t, out);
	table_release(&t);
	cJSON_ArrayForEach(r, get(work, "rows")) {
		if (cJSON_IsString(get(r, "not_counted")))
			print_variant_line(out, "  not counted: ", r, "not_counted");
		if (cJSON_IsTrue(get(r, "flagged")) && cJSON_IsString(get(r, "flag")))
			print_variant_line(out, "  ! ", r, "flag");
		if (!note && cJSON_IsString(get(r, "cannot_show")))
			note = get(r, "cannot_show")->valuestring;
	}
	if (note) { /* the runner's, said once */
		fputs("  ", out);
		table_print_text(out, note);
		fputc('\n', out);
	}
}

int report_table_print(const cJSON *report, FILE *out)
{
	const cJSON *job = get(report, "job"), *cells = get(report, "cells"), *f;
	const cJSON *warm = get(report, "warm");
	int rc;

	if (!cJSON_IsObject(job) || !cJSON_IsArray(cells) || !cJSON_IsObject(warm))
		return err_set(LL_EFORMAT, "The server's report is not shaped as schemas/report.json.");
	fprintf(out, "Job %.0f: ", number(job, "id"));
	table_print_text(out, cJSON_IsString(get(job, "name")) ? get(job, "name")->valuestring : "?");
	fputc('\n', out);
	if (!cJSON_IsFalse(get(warm, "measured"))) { /* a cold-only or churn-only job took none */
		fprintf(out,
			"\nWarm load time, %s: fastest / median, median change against %s with the 95 %% "
			"interval\nof the ratio of medians and the Mann-Whitney p (* significant: p < 0.05, "
			"the interval\nexcluding 1, and the change at least 1 %%), the median over the empty "
			"program's\n(Nx floor), noise: other CPU max, runs flagged/retaken, ! what the "
			"runner "
			"cannot show\n(below the table)\n",
			unit_of(warm).name,
			cJSON_IsString(get(warm, "baseline")) ? get(warm, "baseline")->valuestring : "?");
		if ((rc = print_table(warm, cells, out, warm_text)) < 0)
			return rc;
	}
	if (cJSON_IsObject(get(report, "cold"))) {
		fprintf(out,
			"\nCold start, %s: median (its change, * significant) / mean (percent of the "
			"baseline), page faults, bytes read\n",
			unit_of(get(report, "cold")).name);
		if ((rc = print_table(get(report, "cold"), cells, out, cold_text)) < 0)
			return rc;
	}
	if (cJSON_IsObject(get(report, "churn")))
		print_churn(get(report, "churn"), out);
	if (cJSON_IsObject(get(report, "loader_work")))
		print_loader_work(get(report, "loader_work"), out);
	if (cJSON_IsArray(get(report, "shipped"))) { /* a shared build (docs/builds.md) */
		struct buf b;
		buf_init(&b, 65536);
		fputs("\nSame bytes in every cell: built once, shipped by digest\n", out);
		report_text_shipped(&b, get(report, "shipped"), cells, "  ", NULL);
		table_print_lines(out, buf_str(&b));
		buf_release(&b);
	}
	if (cJSON_GetArraySize(get(report, "findings")))
		fputs("\nFindings\n", out);
	cJSON_ArrayForEach(f, get(report, "findings")) {
		fputs("  ", out);
		table_print_text(out, cJSON_IsString(f) ? f->valuestring : "");
		fputc('\n', out);
	}
	return 0;
}
