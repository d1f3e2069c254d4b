/* The job report's loader-work table: see report_loader_work.h. */
#include "report_loader_work.h"

#include "report_int.h"

#include <stdio.h>
#include <string.h>

/* The loader's figures a row copies, as the agent names them. */
static const char *const copied[] = {
	"source",          "relocations",        "relative_relocations", "final_relocations",
	"imports_by_name", "imports_by_ordinal", "imports_bound",        "startup_time",
	"time_unit",       "not_counted",        "cannot_show",
};

void report_loader_work_summary(const cJSON *variant, cJSON *out)
{
	const cJSON *loader = get(variant, "loader");
	cJSON *copy;

	if (!cJSON_IsObject(loader) || !(copy = cJSON_Duplicate(loader, true)))
		return;
	if (cJSON_IsObject(get(variant, "knobs")))
		cJSON_AddItemToObject(copy, "knobs", cJSON_Duplicate(get(variant, "knobs"), true));
	cJSON_AddItemToObject(out, "loader", copy);
}

/* Whether KEY of O is a number (a count the agent recorded). */
static bool has(const cJSON *o, const char *key)
{
	return cJSON_IsNumber(get(o, key));
}

/* Whether KNOBS' KEY is the string VALUE. */
static bool knob_is(const cJSON *knobs, const char *key, const char *value)
{
	const char *s = string(knobs, key);
	return s && strcmp(s, value) == 0;
}

bool report_loader_work_flag(const cJSON *knobs, const cJSON *loader, char *reason, size_t size)
{
	const cJSON *stat = get(loader, "static");
	/* Under Wine the probe's bound count is 0 whatever the files hold:
	 * the binding's validity is the static count's. */
	const cJSON *binding = has(stat, "imports_bound") ? stat : loader;
	bool bind = cJSON_IsTrue(get(knobs, "bind"));

	if (!cJSON_IsObject(loader) || get(loader, "not_counted"))
		return false;
	if (knob_is(knobs, "bases", "unique") && number(loader, "relocations", 0) > 0) {
		snprintf(reason, size,
			 "rebased to unique bases, yet the loader applied %.0f relocations (%.0f of its "
			 "images moved)",
			 number(loader, "relocations", 0), number(loader, "images_relocated", 0));
		return true;
	}
	if (knob_is(knobs, "bases", "same") && number(loader, "images", 0) >= 3 &&
	    has(loader, "images_relocated") && number(loader, "images_relocated", 0) == 0) {
		snprintf(reason, size, "bases 'same', yet none of its %.0f images was relocated",
			 number(loader, "images", 0));
		return true;
	}
	if (bind && has(binding, "imports_bound") && number(binding, "imports_bound", 0) == 0) {
		snprintf(reason, size, "bound, yet no import has a valid binding");
		return true;
	}
	if (knob_is(knobs, "imports", "ordinal") && !bind && has(loader, "imports_by_ordinal") &&
	    number(loader, "imports_by_ordinal", 0) == 0) {
		snprintf(reason, size, "imports by ordinal, yet none is resolved by ordinal");
		return true;
	}
	if ((knob_is(knobs, "bind", "now") || cJSON_IsTrue(get(knobs, "bind_now"))) &&
	    has(loader, "relocations") && has(loader, "final_relocations") &&
	    number(loader, "final_relocations", 0) > number(loader, "relocations", 0)) {
		snprintf(reason, size, "bound now, yet %.0f symbols were bound lazily after the start",
			 number(loader, "final_relocations", 0) - number(loader, "relocations", 0));
		return true;
	}
	if (has(stat, "relocations") && has(loader, "relocations") &&
	    number(stat, "relocations", 0) != number(loader, "relocations", 0)) {
		snprintf(reason, size, "the probe saw %.0f relocations applied, the files predict %.0f",
			 number(loader, "relocations", 0), number(stat, "relocations", 0));
		return true;
	}
	return false;
}

/* The row of variant NAME's LOADER in the cell KEY (VALID false: a
 * variant its verification refused, not timed). */
static cJSON *row_of(const char *name, const char *key, const cJSON *loader, bool valid)
{
	cJSON *row = cJSON_CreateObject();
	const cJSON *stat = get(loader, "static");
	char reason[REPORT_LOADER_WORK_MAX_REASON];
	bool flagged;

	cJSON_AddStringToObject(row, "variant", name);
	cJSON_AddStringToObject(row, "cell", key);
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++)
		if (get(loader, copied[i]))
			cJSON_AddItemToObject(row, copied[i], cJSON_Duplicate(get(loader, copied[i]), true));
	if (has(loader, "relocations") && has(loader, "final_relocations"))
		cJSON_AddNumberToObject(row, "lazy_after_start",
					number(loader, "final_relocations", 0) -
						number(loader, "relocations", 0));
	if (has(stat, "relocations"))
		cJSON_AddNumberToObject(row, "static_relocations", number(stat, "relocations", 0));
	if (has(stat, "imports_bound"))
		cJSON_AddNumberToObject(row, "static_imports_bound", number(stat, "imports_bound", 0));
	if (!valid)
		cJSON_AddBoolToObject(row, "valid", false);
	flagged = report_loader_work_flag(get(loader, "knobs"), loader, reason, sizeof(reason));
	cJSON_AddBoolToObject(row, "flagged", flagged);
	if (flagged)
		cJSON_AddStringToObject(row, "flag", reason);
	return row;
}

cJSON *report_loader_work_table(const cJSON *tasks, const cJSON *variant_names)
{
	cJSON *out = NULL, *rows;
	const cJSON *name, *t;
	int flagged = 0;

	cJSON_ArrayForEach(name, variant_names) {
		cJSON_ArrayForEach(t, tasks) {
			const cJSON *v = get(get(get(t, "summary"), "variants"), name->valuestring);
			cJSON *row;
			if (!cJSON_IsObject(get(v, "loader")) || !cJSON_IsString(name))
				continue;
			if (!out &&
			    (!(out = cJSON_CreateObject()) || !(rows = cJSON_AddArrayToObject(out, "rows"))))
				return cJSON_Delete(out), NULL;
			row = row_of(name->valuestring, string(t, "key") ? string(t, "key") : "",
				     get(v, "loader"), !cJSON_IsFalse(get(v, "valid")));
			flagged += cJSON_IsTrue(get(row, "flagged"));
			cJSON_AddItemToArray(rows, row);
		}
	}
	if (out)
		cJSON_AddNumberToObject(out, "flagged", flagged);
	return out;
}

void report_loader_work_findings(const cJSON *table, cJSON *findings)
{
	const cJSON *row;
	char text[REPORT_LOADER_WORK_MAX_REASON + 256];

	cJSON_ArrayForEach(row, get(table, "rows")) {
		if (!cJSON_IsTrue(get(row, "flagged")))
			continue;
		snprintf(text, sizeof(text), "%s on %s: the loader's work contradicts its transform: %s.",
			 string(row, "variant"), string(row, "cell"), string(row, "flag"));
		cJSON_AddItemToArray(findings, cJSON_CreateString(text));
	}
}
