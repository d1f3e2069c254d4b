/*
 * report_compare_program.c - what two program jobs measured, side by side,
 * for the comparison (report_compare.c): their manifests
 * (spec.program.files, path -> "sha256:HEX") merged in path order into the
 * files added, removed and changed, and the run settings (exe, args,
 * until, timeout_s) that differ. The same merge names what changed between
 * the builds of one A/B job (report_ab.c), PE or ELF. See report_int.h.
 */
#include "report_int.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <stdlib.h>
#include <string.h>

bool report_same_generator(const cJSON *base_spec, const cJSON *cand_spec)
{
	const cJSON *a = get(base_spec, "generator"), *b = get(cand_spec, "generator");

	/* cJSON_Compare() calls two missing items different. */
	return (!a && !b) || (a && b && cJSON_Compare(a, b, true));
}

static int by_path(const void *a, const void *b)
{
	return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* The files of MANIFEST (an object) sorted by path into *RET (*RET_N of
 * them); an empty list for anything else. */
static int sorted_files(const cJSON *manifest, const cJSON ***ret, size_t *ret_n)
{
	const cJSON *item;
	size_t n = 0;

	*ret = NULL;
	*ret_n = 0;
	if (!cJSON_IsObject(manifest))
		return 0;
	cJSON_ArrayForEach(item, manifest)
		n++;
	if (n == 0)
		return 0;
	if (!(*ret = calloc(n, sizeof(**ret))))
		return LL_ENOMEM;
	n = 0;
	cJSON_ArrayForEach(item, manifest)
		if (item->string && cJSON_IsString(item))
			(*ret)[n++] = item;
	qsort(*ret, n, sizeof(**ret), by_path);
	*ret_n = n;
	return 0;
}

/* {"path", KEY: hash} into LIST. */
static bool add_file(cJSON *list, const cJSON *file, const char *key)
{
	cJSON *o = json_array_add_object(list);

	return o && cJSON_AddStringToObject(o, "path", file->string) &&
	       cJSON_AddStringToObject(o, key, file->valuestring);
}

int report_program_files_diff(const cJSON *a_manifest, const cJSON *b_manifest, cJSON *files, bool *ret_same)
{
	const cJSON **a = NULL, **b = NULL;
	cJSON *added, *removed, *changed;
	size_t na = 0, nb = 0, i = 0, k = 0, unchanged = 0;
	int rc;

	if ((rc = sorted_files(a_manifest, &a, &na)) < 0 || (rc = sorted_files(b_manifest, &b, &nb)) < 0)
		goto out;
	rc = LL_ENOMEM;
	if (!(added = cJSON_AddArrayToObject(files, "added")) ||
	    !(removed = cJSON_AddArrayToObject(files, "removed")) ||
	    !(changed = cJSON_AddArrayToObject(files, "changed")))
		goto out;
	while (i < na || k < nb) {
		int order = i == na ? 1 : k == nb ? -1 : strcmp(a[i]->string, b[k]->string);
		bool ok = true;

		if (order < 0) {
			ok = add_file(removed, a[i++], "sha256");
		} else if (order > 0) {
			ok = add_file(added, b[k++], "sha256");
		} else if (strcmp(a[i]->valuestring, b[k]->valuestring) != 0) {
			ok = add_file(changed, a[i], "baseline_sha256") &&
			     cJSON_AddStringToObject(
				     cJSON_GetArrayItem(changed, cJSON_GetArraySize(changed) - 1),
				     "candidate_sha256", b[k]->valuestring);
			i++, k++;
		} else {
			unchanged++;
			i++, k++;
		}
		if (!ok)
			goto out;
	}
	if (!cJSON_AddNumberToObject(files, "unchanged", (double)unchanged))
		goto out;
	*ret_same =
		cJSON_GetArraySize(added) + cJSON_GetArraySize(removed) + cJSON_GetArraySize(changed) == 0;
	rc = 0;
out:
	free(a);
	free(b);
	return rc;
}

int report_compare_program(const cJSON *base_job, const cJSON *cand_job, cJSON *out)
{
	static const char *const settings[] = {"exe", "args", "until", "timeout_s"};
	const cJSON *a = get(get(base_job, "spec"), "program"), *b = get(get(cand_job, "spec"), "program");
	cJSON *program, *files, *differ;
	bool same_files = false;
	int rc;

	if (!cJSON_IsObject(a) || !cJSON_IsObject(b))
		return 0;
	if (!(program = cJSON_AddObjectToObject(out, "program")) ||
	    !(files = cJSON_AddObjectToObject(program, "files")) ||
	    !(differ = cJSON_AddArrayToObject(program, "settings_changed")))
		return LL_ENOMEM;
	if ((rc = report_program_files_diff(get(a, "files"), get(b, "files"), files, &same_files)) < 0)
		return rc;
	for (size_t s = 0; s < sizeof(settings) / sizeof(settings[0]); s++) {
		const cJSON *x = get(a, settings[s]), *y = get(b, settings[s]);
		if (((x || y) && !(x && y && cJSON_Compare(x, y, true))) &&
		    !cJSON_AddItemToArray(differ, cJSON_CreateString(settings[s])))
			return LL_ENOMEM;
	}
	if (!cJSON_AddBoolToObject(program, "same_program", same_files && cJSON_GetArraySize(differ) == 0))
		return LL_ENOMEM;
	return 0;
}
