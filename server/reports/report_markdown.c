/* A job's report as Markdown (GET /api/v1/jobs/{id}/report?format=md):
 * the tables the job measured, each in one unit (report_text.h), what the
 * runner could not show under each table, then the findings. */
#include "report_int.h"

#include "loadlab/report_text.h"

#include <string.h>

static const char *text(const cJSON *obj, const char *key)
{
	const char *s = string(obj, key);
	return s ? s : "";
}

void report_md_escape(struct buf *out, const char *s)
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

/* A figure of KEY in C in the table's UNIT, with the unit's name. */
static void md_figure(struct buf *out, const cJSON *c, const char *key, struct report_text_unit unit)
{
	report_text_figure(out, number(c, key, NAN), unit);
	buf_printf(out, " %s", unit.name);
}

/* " · noise: other CPU max 12.0 %, 2 flagged, 1 retaken": what the agent
 * saw of the machine's other work in the cell (warm.noise), if anything. */
static void md_noise(struct buf *out, const cJSON *noise)
{
	const char *sep = " · noise:";

	if (!cJSON_IsObject(noise))
		return;
	if (cJSON_IsNumber(get(noise, "max_other_cpu_pct"))) {
		buf_printf(out, "%s other CPU max %.1f %%", sep, number(noise, "max_other_cpu_pct", 0));
		sep = ",";
	}
	if (cJSON_IsNumber(get(noise, "flagged"))) {
		buf_printf(out, "%s %.0f flagged", sep, number(noise, "flagged", 0));
		sep = ",";
	}
	if (cJSON_IsNumber(get(noise, "retaken")))
		buf_printf(out, "%s %.0f retaken", sep, number(noise, "retaken", 0));
}

static void md_warm_cell(struct buf *out, const cJSON *c, struct report_text_unit unit)
{
	if (report_text_failed_cell(out, c, "", report_md_escape))
		return;
	buf_append_str(out, "**");
	md_figure(out, c, "min_us", unit);
	buf_append_str(out, "**");
	if (get(c, "min_change_pct"))
		buf_printf(out, " (%+.1f %%)", number(c, "min_change_pct", 0));
	buf_append_str(out, " · median ");
	md_figure(out, c, "median_us", unit);
	buf_append_str(out, " [");
	md_figure(out, c, "ci_low_us", unit);
	buf_append_str(out, " – ");
	md_figure(out, c, "ci_high_us", unit);
	buf_append_str(out, "]");
	if (get(c, "change_pct")) { /* with the interval and p that decide the star */
		buf_printf(out, " · %+.1f %%", number(c, "change_pct", 0));
		if (cJSON_IsNumber(get(c, "ratio_ci_low")) && cJSON_IsNumber(get(c, "ratio_ci_high")))
			buf_printf(out, " [×%.3f – ×%.3f]", number(c, "ratio_ci_low", 0),
				   number(c, "ratio_ci_high", 0));
		if (cJSON_IsNumber(get(c, "p_value")))
			buf_printf(out, number(c, "p_value", 1) < 0.001 ? ", p %.1e" : ", p %.3f",
				   number(c, "p_value", 1));
		buf_append_str(out, cJSON_IsTrue(get(c, "significant")) ? " *" : "");
	}
	if (cJSON_IsNumber(get(c, "x_floor")))
		buf_printf(out, " · %.2f× floor", number(c, "x_floor", 0));
	md_noise(out, get(c, "noise"));
	if (report_text_has_notes(c))
		buf_append_str(out, " ⚠");
}

/* " (+1.2 % *)": a cold count's change against the baseline, if any. */
static void md_count_change(struct buf *out, const cJSON *c, const char *change, const char *significant)
{
	if (cJSON_IsNumber(get(c, change)))
		buf_printf(out, " (%+.1f %%%s)", number(c, change, 0),
			   cJSON_IsTrue(get(c, significant)) ? " *" : "");
}

static void md_cold_cell(struct buf *out, const cJSON *c, struct report_text_unit unit)
{
	const cJSON *faults =
		get(c, "page_faults_median") ? get(c, "page_faults_median") : get(c, "page_faults_mean");
	const cJSON *bytes =
		get(c, "read_bytes_median") ? get(c, "read_bytes_median") : get(c, "read_bytes_mean");

	if (report_text_failed_cell(out, c, "", report_md_escape))
		return;
	buf_append_str(out, "**");
	md_figure(out, c, "median_us", unit);
	buf_append_str(out, "**");
	if (cJSON_IsNumber(get(c, "ci_low_us")) && cJSON_IsNumber(get(c, "ci_high_us"))) {
		buf_append_str(out, " [");
		md_figure(out, c, "ci_low_us", unit);
		buf_append_str(out, " – ");
		md_figure(out, c, "ci_high_us", unit);
		buf_append_str(out, "]");
	}
	if (cJSON_IsNumber(get(c, "change_pct")))
		buf_printf(out, " %+.1f %%%s", number(c, "change_pct", 0),
			   cJSON_IsTrue(get(c, "significant")) ? " *" : "");
	buf_append_str(out, " · mean ");
	md_figure(out, c, "mean_us", unit);
	buf_append_str(out, " ± ");
	md_figure(out, c, "stddev_us", unit);
	if (get(c, "time_pct"))
		buf_printf(out, " (%.1f %%)", number(c, "time_pct", 0));
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
	if (report_text_has_notes(c))
		buf_append_str(out, " ⚠");
}

static void md_table(struct buf *out, const cJSON *table, const cJSON *cells,
		     void (*cell)(struct buf *, const cJSON *, struct report_text_unit))
{
	struct report_text_unit unit = report_text_unit_named(string(table, "unit"), "µs");
	const cJSON *c, *row;

	buf_append_str(out, "| variant |");
	cJSON_ArrayForEach(c, cells) {
		buf_append_str(out, " ");
		report_md_escape(out, text(c, "key"));
		buf_append_str(out, " |");
	}
	buf_append_str(out, "\n|---|");
	cJSON_ArrayForEach(c, cells)
		buf_append_str(out, "---|");
	buf_append_str(out, "\n");
	cJSON_ArrayForEach(row, get(table, "variants")) {
		buf_append_str(out, "| ");
		report_md_escape(out, text(row, "variant"));
		buf_append_str(out, " |");
		cJSON_ArrayForEach(c, get(row, "cells")) {
			buf_append_str(out, " ");
			cell(out, c, unit);
			buf_append_str(out, " |");
		}
		buf_append_str(out, "\n");
	}
	buf_append_str(out, "\n");
	report_text_notes(out, table, "- ⚠ ", report_md_escape);
}

/* " 2.80×" or "" for a ratio against none. */
static void md_ratio(struct buf *out, const cJSON *r, const char *key)
{
	if (cJSON_IsNumber(get(r, key)))
		buf_printf(out, " (%.2f×)", number(r, key, 0));
}

static void md_churn(struct buf *out, const cJSON *churn)
{
	struct report_text_unit unit = report_text_unit_named(string(churn, "unit"), "µs");
	const cJSON *r;

	buf_printf(out,
		   "\n## Process churn\n\nPer process, in %s: the time to create it and to destroy it, "
		   "with its ratio against `%s` in the same cell (one run of every process each: no "
		   "interval), and the time the probe found the input lock blocked while they were "
		   "destroyed.\n\n| cell | DLL set | processes | create / process | destroy / process | "
		   "blocked total | blocked max |\n|---|---|---|---|---|---|---|\n",
		   unit.name, text(churn, "baseline"));
	cJSON_ArrayForEach(r, get(churn, "rows")) {
		buf_append_str(out, "| ");
		report_md_escape(out, text(r, "cell"));
		buf_append_str(out, " | ");
		report_md_escape(out, text(r, "dll_set"));
		buf_printf(out, " | %.0f | ", number(r, "processes", 0));
		md_figure(out, r, "create_us_per_process", unit);
		md_ratio(out, r, "create_ratio");
		buf_append_str(out, " | ");
		md_figure(out, r, "destroy_us_per_process", unit);
		md_ratio(out, r, "destroy_ratio");
		buf_append_str(out, " | ");
		if (get(r, "blocked_total_us")) {
			md_figure(out, r, "blocked_total_us", unit);
			md_ratio(out, r, "blocked_total_ratio");
			buf_append_str(out, " | ");
			md_figure(out, r, "blocked_max_us", unit);
			buf_append_str(out, " |");
		} else {
			buf_append_str(out, "not measured | not measured |");
		}
		buf_append_str(out, report_text_has_notes(r) ? " ⚠\n" : "\n");
	}
	buf_append_str(out, "\n");
	report_text_notes(out, churn, "- ⚠ ", report_md_escape);
}

/* KEY of ROW as a Markdown cell's figure: the count, or "–"; with the
 * files' own count beside it (STATIC_KEY, may be NULL) where it differs. */
static void md_loader_count(struct buf *out, const cJSON *row, const char *key, const char *static_key)
{
	if (!cJSON_IsNumber(get(row, key))) {
		buf_append_str(out, " – |");
		return;
	}
	buf_printf(out, " %.0f", number(row, key, 0));
	if (static_key && cJSON_IsNumber(get(row, static_key)) &&
	    number(row, static_key, 0) != number(row, key, 0))
		buf_printf(out, " (files: %.0f)", number(row, static_key, 0));
	buf_append_str(out, " |");
}

/* The loader-work table (report_loader_work.h): counts per variant and
 * cell, flagged rows' reasons and what the runner hides below it. */
static void md_loader_work(struct buf *out, const cJSON *table)
{
	const cJSON *row;

	if (!cJSON_IsObject(table))
		return;
	buf_append_str(out,
		       "\n## Loader work\n\nWhat the loader did for each variant, beside its times: "
		       "relocations applied (ELF: glibc's count of symbol lookups at start-up, and its "
		       "relative relocations; PE: the base relocations of every image away from its "
		       "preferred base), lazy bindings after the start (ELF), imports resolved by name, "
		       "by ordinal, and held by a valid binding (PE; \"files: N\" where the images "
		       "themselves say otherwise than what the probe saw), and the time in the loader where "
		       "glibc reports it. ⚑: the counts contradict what the variant's transform promises "
		       "(the reason below the table).\n\n"
		       "| variant | cell | source | relocations | relative | lazy after start | by name | "
		       "by ordinal | bound | time in loader |\n"
		       "|---|---|---|---|---|---|---|---|---|---|\n");
	cJSON_ArrayForEach(row, get(table, "rows")) {
		buf_append_str(out, "| ");
		report_md_escape(out, string(row, "variant") ? string(row, "variant") : "");
		if (cJSON_IsFalse(get(row, "valid")))
			buf_append_str(out, " (invalid, not timed)");
		buf_append_str(out, cJSON_IsTrue(get(row, "flagged")) ? " ⚑ | " : " | ");
		report_md_escape(out, string(row, "cell") ? string(row, "cell") : "");
		buf_append_str(out, " | ");
		if (string(row, "not_counted")) {
			buf_append_str(out, "not counted: ");
			report_md_escape(out, string(row, "not_counted"));
			buf_append_str(out, " | | | | | | | |\n");
			continue;
		}
		report_md_escape(out, string(row, "source") ? string(row, "source") : "");
		buf_append_str(out, " |");
		md_loader_count(out, row, "relocations", "static_relocations");
		md_loader_count(out, row, "relative_relocations", NULL);
		md_loader_count(out, row, "lazy_after_start", NULL);
		md_loader_count(out, row, "imports_by_name", NULL);
		md_loader_count(out, row, "imports_by_ordinal", NULL);
		md_loader_count(out, row, "imports_bound", "static_imports_bound");
		if (cJSON_IsNumber(get(row, "startup_time"))) {
			buf_printf(out, " %.0f ", number(row, "startup_time", 0));
			report_md_escape(out, string(row, "time_unit") ? string(row, "time_unit") : "");
			buf_append_str(out, " |\n");
		} else {
			buf_append_str(out, " – |\n");
		}
	}
	cJSON_ArrayForEach(row, get(table, "rows")) {
		if (!cJSON_IsTrue(get(row, "flagged")))
			continue;
		buf_append_str(out, "\n- ⚑ ");
		report_md_escape(out, string(row, "variant") ? string(row, "variant") : "");
		buf_append_str(out, " on ");
		report_md_escape(out, string(row, "cell") ? string(row, "cell") : "");
		buf_append_str(out, ": ");
		report_md_escape(out, string(row, "flag") ? string(row, "flag") : "");
	}
	/* What the loader hides is the runner's: said once. */
	cJSON_ArrayForEach(row, get(table, "rows")) {
		if (!string(row, "cannot_show"))
			continue;
		buf_append_str(out, "\n- ⚠ ");
		report_md_escape(out, string(row, "cannot_show"));
		break;
	}
	buf_append_str(out, "\n");
}

void report_markdown_job(const cJSON *report, struct buf *out)
{
	const cJSON *job = get(report, "job"), *cells = get(report, "cells"), *f;
	const cJSON *warm = get(report, "warm");

	buf_printf(out, "# Job %d: ", (int)number(job, "id", 0));
	report_md_escape(out, text(job, "name"));
	buf_printf(out, " (%s, %s)\n", text(job, "family"), text(job, "state"));
	if (!cJSON_IsFalse(get(warm, "measured"))) {
		buf_printf(out,
			   "\n## Warm load time\n\nIn %s. Fastest run in bold (its change against `%s`), "
			   "then the median with its 95 %% bootstrap CI, then the median's change against it "
			   "in the same cell with the 95 %% interval of the ratio of medians [×low – ×high] "
			   "and the Mann-Whitney p that decide its star: `*` marks a significant difference "
			   "(p < %.2f, the interval excluding 1, at least %.0f %%); noise: the other "
			   "processes' CPU "
			   "share seen while the cell was measured, and the runs flagged and retaken for it; "
			   "⚠: what the runner cannot show (below the table).\n\n",
			   report_text_unit_named(string(warm, "unit"), "µs").name, text(warm, "baseline"),
			   REPORT_ALPHA, REPORT_MIN_EFFECT_PCT);
		md_table(out, warm, cells, md_warm_cell);
	}
	if (cJSON_IsObject(get(report, "cold"))) {
		buf_printf(out,
			   "\n## Cold start\n\nIn %s. Median cold start in bold with its 95 %% bootstrap CI "
			   "and its change against `%s` in the same cell (`*`: significant, as for warm "
			   "times), then the mean ± standard deviation (as a percentage of the "
			   "baseline's), the median page faults and bytes read with their changes.\n\n",
			   report_text_unit_named(string(get(report, "cold"), "unit"), "µs").name,
			   text(get(report, "cold"), "baseline"));
		md_table(out, get(report, "cold"), cells, md_cold_cell);
	}
	if (cJSON_IsObject(get(report, "churn")))
		md_churn(out, get(report, "churn"));
	md_loader_work(out, get(report, "loader_work"));
	if (cJSON_IsArray(get(report, "shipped"))) {
		buf_append_str(
			out, "\n## Same bytes in every cell\n\nThe job's programs were built once and "
			     "shipped by digest; per variant, whether every cell ran the build's files.\n\n");
		report_text_shipped(out, get(report, "shipped"), cells, "- ", report_md_escape);
	}
	if (cJSON_GetArraySize(get(report, "findings")))
		buf_append_str(out, "\n## Findings\n\n");
	cJSON_ArrayForEach(f, get(report, "findings")) {
		buf_append_str(out, "- ");
		report_md_escape(out, cJSON_IsString(f) ? f->valuestring : "");
		buf_append_str(out, "\n");
	}
}
