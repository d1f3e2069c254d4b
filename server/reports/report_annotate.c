/* What a job's report says beside its figures (report.h): each table's
 * unit, and what the runner that took a figure cannot show, where the
 * figure is. */
#include "report_int.h"

#include "loadlab/buf.h"
#include "loadlab/job_spec.h"
#include "loadlab/report_text.h"

#include <string.h>

/* DESIGN.md "Known traps": Wine's loader resolves every import again, so
 * a bound import table changes nothing there (agent/family/pe/pe_verify.c
 * records it as loader_used_binding false). */
static const char bind_note[] = "Wine ignores bound imports (it resolves every import again): under Wine "
				"this figure cannot show what binding does.";

/* agent/measure/churn.c's method note: Wine keeps no win32k lock. */
static const char churn_note[] =
	"Wine keeps no win32k lock (UserCrit): under Wine the blocked time is Wine's "
	"wineserver's, not the lock the study measures, and creating and destroying "
	"processes is Wine's work.";

/* The runner the report's cell I's result ran on, or "". */
static const char *runner_of(const cJSON *cells, int i)
{
	const char *runner = string(get(cJSON_GetArrayItem(cells, i), "facts"), "runner");
	return runner ? runner : "";
}

/* Whether the spec's variant NAME binds its imports. */
static bool binds(const cJSON *spec, const char *name)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, get(spec, "variants"))
		if (string(v, "name") && strcmp(string(v, "name"), name) == 0)
			return cJSON_IsTrue(get(v, "bind"));
	return false;
}

static void add_note(cJSON *obj, const char *note)
{
	cJSON *notes = cJSON_GetObjectItemCaseSensitive(obj, "notes");

	if (!notes)
		notes = cJSON_AddArrayToObject(obj, "notes");
	cJSON_AddItemToArray(notes, cJSON_CreateString(note));
}

/* The notes of TABLE's cells (measured ones) of variants that bind, timed
 * under Wine; a finding per such variant. */
static void note_bind(cJSON *table, const cJSON *cells, const cJSON *spec, const char *what, cJSON *findings)
{
	cJSON *row, *c;

	cJSON_ArrayForEach(row, get(table, "variants")) {
		int i = 0, noted = 0;
		if (!binds(spec, string(row, "variant")))
			continue;
		cJSON_ArrayForEach(c, get(row, "cells")) {
			if (strcmp(runner_of(cells, i++), "wine") == 0 &&
			    strcmp(string(c, "status"), "ok") == 0) {
				add_note(c, bind_note);
				noted++;
			}
		}
		if (noted) {
			struct buf text;
			buf_init(&text, 4096);
			buf_printf(&text,
				   "%s (%s): timed under Wine in %d cell%s, which ignores bound imports: "
				   "its figures there cannot show what binding does.",
				   string(row, "variant"), what, noted, noted > 1 ? "s" : "");
			cJSON_AddItemToArray(findings, cJSON_CreateString(buf_str(&text)));
			buf_release(&text);
		}
	}
}

/* The note of every churn row timed under Wine, and one finding. */
static void note_churn(cJSON *churn, const cJSON *cells, cJSON *findings)
{
	cJSON *r;
	int noted = 0;

	cJSON_ArrayForEach(r, get(churn, "rows")) {
		const char *runner = string(r, "runner");
		const cJSON *c;
		int i = 0;
		if (!runner) /* an older agent's churn: its cell's runner */
			cJSON_ArrayForEach(c, cells) {
				if (string(c, "key") && strcmp(string(c, "key"), string(r, "cell")) == 0)
					runner = runner_of(cells, i);
				i++;
			}
		if (runner && strcmp(runner, "wine") == 0) {
			add_note(r, churn_note);
			noted++;
		}
	}
	if (noted)
		cJSON_AddItemToArray(findings,
				     cJSON_CreateString("Process churn was timed under Wine: its blocked "
							"times are Wine's, not Windows' win32k "
							"lock's (see the note)."));
}

/* An ELF program's pagein row against as-built in the cold table: the
 * office study's open question (../shared/seeds/003_*, "Linux": its
 * wrapper's pagein beat demand loading without reordering), answered for
 * this program, per cell with the ratio's interval (docs/program-elf.md). */
static void note_pagein(cJSON *cold, const cJSON *spec, cJSON *findings)
{
	const cJSON *row, *c;

	if (!job_spec_program_is_elf(get(spec, "program")) || !string(cold, "baseline") ||
	    strcmp(string(cold, "baseline"), "as-built") != 0)
		return;
	cJSON_ArrayForEach(row, get(cold, "variants")) {
		if (!string(row, "variant") || strcmp(string(row, "variant"), "pagein") != 0)
			continue;
		cJSON_ArrayForEach(c, get(row, "cells")) {
			struct buf text;
			double ratio = number(c, "ratio", 0);
			bool significant = cJSON_IsTrue(get(c, "significant"));
			if (!string(c, "status") || strcmp(string(c, "status"), "ok") != 0 || ratio <= 0)
				continue;
			buf_init(&text, 4096);
			buf_printf(
				&text,
				"pagein against as-built, cold, on %s (the office study's question for this "
				"program): pagein's cold start took %.1f %% of as-built's (95 %% interval "
				"%.1f-%.1f %%, within this job only), %s: reading the program's files first "
				"was %s demand loading them, without reordering.",
				string(c, "cell") ? string(c, "cell") : "?", ratio * 100,
				number(c, "ratio_ci_low", 0) * 100, number(c, "ratio_ci_high", 0) * 100,
				significant ? "significant" : "not significant",
				!significant ? "not told apart from"
				: ratio < 1  ? "faster than"
					     : "slower than");
			add_note((cJSON *)c, buf_str(&text));
			cJSON_AddItemToArray(findings, cJSON_CreateString(buf_str(&text)));
			buf_release(&text);
		}
	}
}

/* The largest of the durations KEYS of TABLE's measured cells. */
static double table_largest(const cJSON *table, const char *const *keys)
{
	const cJSON *row, *c;
	double largest = 0;

	cJSON_ArrayForEach(row, get(table, "variants"))
		cJSON_ArrayForEach(c, get(row, "cells"))
			for (int i = 0; keys[i]; i++)
				largest = fmax(largest, number(c, keys[i], 0));
	return largest;
}

void report_annotate(cJSON *report, const cJSON *spec)
{
	static const char *const warm_keys[] = {"min_us", "median_us", "ci_low_us", "ci_high_us", NULL};
	static const char *const cold_keys[] = {"median_us", "ci_low_us", "ci_high_us", "mean_us", NULL};
	cJSON *warm = cJSON_GetObjectItemCaseSensitive(report, "warm");
	cJSON *cold = cJSON_GetObjectItemCaseSensitive(report, "cold");
	cJSON *churn = cJSON_GetObjectItemCaseSensitive(report, "churn");
	cJSON *findings = cJSON_GetObjectItemCaseSensitive(report, "findings");
	const cJSON *cells = get(report, "cells");

	cJSON_AddStringToObject(warm, "unit", report_text_unit_of(table_largest(warm, warm_keys), "us").name);
	note_bind(warm, cells, spec, "warm", findings);
	if (cJSON_IsObject(cold)) {
		cJSON_AddStringToObject(cold, "unit",
					report_text_unit_of(table_largest(cold, cold_keys), "us").name);
		note_bind(cold, cells, spec, "cold start", findings);
		note_pagein(cold, spec, findings);
	}
	if (cJSON_IsObject(churn))
		note_churn(churn, cells, findings);
}
