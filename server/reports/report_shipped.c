/*
 * report_shipped.c - what a shared build's cells ran (docs/builds.md): per
 * variant, whether every cell ran identical files, and which files differ
 * where a local transform (pe: bind) wrote them.
 */
#include "report_int.h"

#include <string.h>

#include "loadlab/json.h"

void report_shipped_summary(const cJSON *v, cJSON *s)
{
	cJSON *digests = cJSON_AddObjectToObject(s, "digests");
	cJSON *local = cJSON_AddArrayToObject(s, "local_files");
	const cJSON *f;

	cJSON_ArrayForEach(f, get(v, "files"))
		if (string(f, "name") && string(f, "sha256") && !get(digests, string(f, "name")))
			cJSON_AddStringToObject(digests, string(f, "name"), string(f, "sha256"));
	cJSON_ArrayForEach(f, get(get(v, "shipped"), "local_files"))
		if (string(f, "name"))
			cJSON_AddItemToArray(local, cJSON_CreateString(string(f, "name")));
}

/* Adds NAME to the string array LIST unless it holds it. */
static void add_once(cJSON *list, const char *name)
{
	if (!json_array_has_string(list, name))
		cJSON_AddItemToArray(list, cJSON_CreateString(name));
}

/* The row of variant NAME over TASKS. */
static cJSON *variant_row(const cJSON *tasks, const char *name)
{
	cJSON *row = cJSON_CreateObject(), *differ = cJSON_CreateArray(), *local = cJSON_CreateArray();
	const cJSON *t, *first = NULL, *f;
	int cells = 0;

	cJSON_ArrayForEach(t, tasks) {
		const cJSON *s = get(get(get(t, "summary"), "variants"), name);
		if (!get(s, "digests"))
			continue;
		cells++;
		cJSON_ArrayForEach(f, get(s, "local_files"))
			if (cJSON_IsString(f))
				add_once(local, f->valuestring);
		if (!first) {
			first = get(s, "digests");
			continue;
		}
		/* A file whose digest is not the first cell's, or that only one has. */
		cJSON_ArrayForEach(f, get(s, "digests"))
			if (!string(first, f->string) ||
			    strcmp(string(first, f->string), f->valuestring) != 0)
				add_once(differ, f->string);
		cJSON_ArrayForEach(f, first)
			if (!get(get(s, "digests"), f->string))
				add_once(differ, f->string);
	}
	cJSON_AddStringToObject(row, "variant", name);
	cJSON_AddNumberToObject(row, "cells", cells);
	/* Identical: the same bytes in every cell, as the build shipped them. */
	cJSON_AddBoolToObject(row, "identical",
			      cells > 0 && cJSON_GetArraySize(differ) == 0 && cJSON_GetArraySize(local) == 0);
	cJSON_AddItemToObject(row, "differing_files", differ);
	cJSON_AddItemToObject(row, "local_files", local);
	return row;
}

cJSON *report_shipped(const cJSON *tasks, const cJSON *names)
{
	const cJSON *t, *name;
	bool shared = false;
	cJSON *rows;

	cJSON_ArrayForEach(t, tasks)
		shared |= get(get(t, "summary"), "build_task") != NULL;
	if (!shared || !(rows = cJSON_CreateArray()))
		return NULL;
	cJSON_ArrayForEach(name, names)
		if (cJSON_IsString(name))
			cJSON_AddItemToArray(rows, variant_row(tasks, name->valuestring));
	return rows;
}
