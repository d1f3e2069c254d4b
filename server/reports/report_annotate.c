/* What a job's report says beside its figures (report.h): each table's
 * unit, and what the runner that took a figure cannot show, where the
 * figure is. */
#include "report_int.h"

#include "loadlab/buf.h"
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
	}
	if (cJSON_IsObject(churn))
		note_churn(churn, cells, findings);
}
