/* A job's matrix as submitted (job_spec.h): its cells or its each_agent
 * selector checked against the limits and copied, and the os an ELF
 * program's matrix is given. job_spec.c calls these while it normalizes a
 * job; job_spec_cells.c reads what they made. */
#include "loadlab/job_spec.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <string.h>

/* Checks {KEY: [VALUE...]} and copies it; returns the product of the
 * list lengths in *RET_CELLS. */
static int normalize_selector(const cJSON *sel, const char *where, cJSON *out, long long *ret_cells)
{
	const cJSON *key, *value;
	long long cells = 1;
	int keys = 0;

	if (!cJSON_IsObject(sel))
		return err_set(LL_EINVAL, "Field 'matrix.%s' must be an object of lists.", where);
	cJSON_ArrayForEach(key, sel) {
		cJSON *list;
		int n;
		if (++keys > JOB_SPEC_MAX_MATRIX_KEYS)
			return err_set(LL_ERANGE, "A matrix has at most %d keys.", JOB_SPEC_MAX_MATRIX_KEYS);
		if (!job_spec_key_valid(key->string))
			return err_set(LL_EINVAL, "Matrix key '%s' must match [a-z][a-z0-9_]{0,31}.",
				       key->string);
		n = cJSON_IsArray(key) ? cJSON_GetArraySize(key) : 0;
		if (n < 1 || n > JOB_SPEC_MAX_MATRIX_VALUES)
			return err_set(LL_EINVAL, "Matrix key '%s' needs a list of 1 to %d strings.",
				       key->string, JOB_SPEC_MAX_MATRIX_VALUES);
		list = cJSON_AddArrayToObject(out, key->string);
		if (!list)
			return LL_ENOMEM;
		cJSON_ArrayForEach(value, key) {
			size_t len = cJSON_IsString(value) ? strlen(value->valuestring) : 0;
			if (len < 1 || len > 64 || !job_spec_text_valid(value->valuestring))
				return err_set(LL_EINVAL,
					       "Values of matrix key '%s' must be strings of 1 to 64 bytes.",
					       key->string);
			for (const cJSON *p = key->child; p != value; p = p->next)
				if (strcmp(p->valuestring, value->valuestring) == 0)
					return err_set(LL_EINVAL, "Matrix key '%s' lists '%s' twice.",
						       key->string, value->valuestring);
			cJSON_AddItemToArray(list, cJSON_CreateString(value->valuestring));
		}
		cells *= n;
		if (cells > JOB_SPEC_MAX_CELLS)
			return err_set(LL_ERANGE, "The matrix has more than %d cells.", JOB_SPEC_MAX_CELLS);
	}
	*ret_cells = cells;
	return 0;
}

int job_spec_normalize_matrix(const cJSON *matrix, cJSON *out)
{
	static const char *const keys[] = {"cells", "each_agent", NULL};
	const cJSON *cells, *each;
	long long n;

	if (!matrix)
		return cJSON_AddObjectToObject(out, "cells") ? 0 : LL_ENOMEM;
	int rc = json_check_object(matrix, keys, "matrix");
	if (rc < 0)
		return rc;
	cells = cJSON_GetObjectItemCaseSensitive(matrix, "cells");
	each = cJSON_GetObjectItemCaseSensitive(matrix, "each_agent");
	if (cells && each)
		return err_set(LL_EINVAL, "Field 'matrix' takes either 'cells' or 'each_agent', not both.");
	if (!cells && !each)
		return cJSON_AddObjectToObject(out, "cells") ? 0 : LL_ENOMEM;
	cJSON *o = cJSON_AddObjectToObject(out, cells ? "cells" : "each_agent");
	if (!o)
		return LL_ENOMEM;
	return normalize_selector(cells ? cells : each, cells ? "cells" : "each_agent", o, &n);
}

/* An ELF program runs natively on Linux only (docs/program-elf.md, "Which
 * agents run it"): a normalized MATRIX that names no "os" gets "os":
 * ["linux"] (in its cells or its each_agent selector), so the queue
 * leases its tasks only to agents whose facts (or a label) say os linux.
 * A matrix that names "os" is the user's choice and stays. */
int job_spec_matrix_linux_only(cJSON *matrix)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(matrix, "cells"), *list;

	if (!o)
		o = cJSON_GetObjectItemCaseSensitive(matrix, "each_agent");
	if (!cJSON_IsObject(o) || cJSON_GetObjectItemCaseSensitive(o, "os"))
		return 0;
	if (cJSON_GetArraySize(o) >= JOB_SPEC_MAX_MATRIX_KEYS)
		return err_set(LL_ERANGE,
			       "An ELF program job's matrix without 'os' has at most %d keys: the daemon "
			       "adds os [\"linux\"] (docs/program-elf.md).",
			       JOB_SPEC_MAX_MATRIX_KEYS - 1);
	if (!(list = cJSON_AddArrayToObject(o, "os")) ||
	    !cJSON_AddItemToArray(list, cJSON_CreateString("linux")))
		return LL_ENOMEM;
	return 0;
}
