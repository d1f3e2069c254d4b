/* The readers of a stored result that a result's summary (summary.c), a
 * job's report (report_job.c) and compare's data (report_compare_data.c)
 * share: its samples, its variants by name, its cell's key. Below the
 * three, calling none of them (report_int.h declares these). */
#include "report_int.h"

#include "loadlab/err.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int report_samples_of(const cJSON *array, double **ret, size_t *ret_n)
{
	const cJSON *item;
	size_t n = 0, count = cJSON_IsArray(array) ? (size_t)cJSON_GetArraySize(array) : 0;
	double *x;

	if (count == 0 || count > STATS_MAX_SAMPLES)
		return LL_EINVAL;
	x = malloc(count * sizeof(*x));
	if (!x)
		return LL_ENOMEM;
	cJSON_ArrayForEach(item, array) {
		if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || item->valuedouble < 0) {
			free(x);
			return LL_EINVAL;
		}
		x[n++] = item->valuedouble;
	}
	*ret = x;
	*ret_n = n;
	return 0;
}

const cJSON *report_find_variant(const cJSON *variants, const char *name)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, variants)
		if (string(v, "name") && strcmp(string(v, "name"), name) == 0)
			return v;
	return NULL;
}

void report_cell_key(const cJSON *cell, char *out, size_t size)
{
	const cJSON *item;
	size_t len = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(item, cell) {
		int n = snprintf(out + len, size - len, "%s%s=%s", len ? " " : "", item->string,
				 cJSON_IsString(item) ? item->valuestring : "?");
		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
	}
	if (!out[0])
		snprintf(out, size, "any");
}
