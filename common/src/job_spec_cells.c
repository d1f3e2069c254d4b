/* A normalized job's cells and which agents they select (job_spec.h):
 * what the scheduler asks of a spec once job_spec.c has normalized it. */
#include "loadlab/job_spec.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <string.h>

int job_spec_expand_cells(const cJSON *normalized, cJSON **ret_cells)
{
	const cJSON *matrix = cJSON_GetObjectItemCaseSensitive(normalized, "matrix");
	const cJSON *cells = cJSON_GetObjectItemCaseSensitive(matrix, "cells");
	const cJSON *key;
	cJSON *out, *next;

	if (!cJSON_IsObject(cells))
		return err_set(LL_EINVAL, "The job's matrix has no cells.");
	out = cJSON_CreateArray();
	if (!out)
		return LL_ENOMEM;
	cJSON_AddItemToArray(out, cJSON_CreateObject());
	cJSON_ArrayForEach(key, cells) {
		const cJSON *cell, *value;
		next = cJSON_CreateArray();
		if (!next)
			goto nomem;
		cJSON_ArrayForEach(cell, out) {
			cJSON_ArrayForEach(value, key) {
				cJSON *c = cJSON_Duplicate(cell, true);
				if (!c || !cJSON_AddStringToObject(c, key->string, value->valuestring)) {
					cJSON_Delete(c);
					cJSON_Delete(next);
					goto nomem;
				}
				cJSON_AddItemToArray(next, c);
			}
		}
		cJSON_Delete(out);
		out = next;
	}
	*ret_cells = out;
	return 0;
nomem:
	cJSON_Delete(out);
	return LL_ENOMEM;
}

static bool value_matches(const cJSON *have, const char *want)
{
	char text[64];
	const cJSON *item;

	if (!have)
		return false;
	if (cJSON_IsString(have))
		return strcmp(have->valuestring, want) == 0;
	if (cJSON_IsBool(have))
		return strcmp(cJSON_IsTrue(have) ? "true" : "false", want) == 0;
	if (cJSON_IsNumber(have)) {
		snprintf(text, sizeof(text), "%.15g", have->valuedouble);
		return strcmp(text, want) == 0;
	}
	if (cJSON_IsArray(have)) {
		cJSON_ArrayForEach(item, have)
			if (!cJSON_IsArray(item) && value_matches(item, want))
				return true;
	}
	return false;
}

static bool agent_has(const cJSON *facts, const cJSON *labels, const char *key, const char *want)
{
	return value_matches(cJSON_GetObjectItemCaseSensitive(labels, key), want) ||
	       value_matches(cJSON_GetObjectItemCaseSensitive(facts, key), want);
}

bool job_spec_cell_matches(const cJSON *cell, const cJSON *facts, const cJSON *labels)
{
	const cJSON *key;

	cJSON_ArrayForEach(key, cell)
		if (!cJSON_IsString(key) || !agent_has(facts, labels, key->string, key->valuestring))
			return false;
	return true;
}

bool job_spec_selector_matches(const cJSON *selector, const cJSON *facts, const cJSON *labels)
{
	return job_spec_agent_selected(selector, NULL, facts, labels);
}

bool job_spec_agent_selected(const cJSON *selector, const char *name, const cJSON *facts, const cJSON *labels)
{
	const cJSON *key, *value;

	cJSON_ArrayForEach(key, selector) {
		bool any = false;
		cJSON_ArrayForEach(value, key)
			if (cJSON_IsString(value) &&
			    ((name && strcmp(key->string, "agent") == 0 &&
			      strcmp(value->valuestring, name) == 0) ||
			     agent_has(facts, labels, key->string, value->valuestring)))
				any = true;
		if (!any)
			return false;
	}
	return true;
}
