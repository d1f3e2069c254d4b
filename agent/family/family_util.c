/* family_util.c - the helpers of family_util.h. */
#include "family/family_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/plat.h"

int family_path(char *out, const char *a, const char *b)
{
	int n = snprintf(out, PLAT_MAX_PATH + 1, "%s/%s", a, b);
	if (n < 0 || n > (int)PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "Path %s/%s is too long.", a, b);
	return 0;
}

int family_progress(const struct pipeline_task *t, const char *phase, int percent)
{
	if (t->progress && t->progress(t->progress_context, phase, percent))
		return err_set(LL_ESTATE, "The task was cancelled during %s.", phase);
	return 0;
}

int family_phase_done(struct family_run *run, const char *phase)
{
	long long now = clock_monotonic_us();
	if (!cJSON_AddNumberToObject(run->phases, phase, (double)((now - run->phase_start) / 1000)))
		return LL_ENOMEM;
	run->phase_start = now;
	return 0;
}

int family_read_file(const char *path, size_t limit, char **ret_text, size_t *ret_len)
{
	return plat_read_file(path, limit, ret_text, ret_len);
}

int family_write_file(const char *path, const char *text, size_t len)
{
	return plat_write_file(path, text, len);
}

int family_add_measured(cJSON *o, const char *key, const cJSON *measured, const char *name)
{
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(measured, "method");
	const cJSON *program = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(measured, "programs"), name);
	cJSON *copy;

	if (!program)
		return 0;
	copy = cJSON_Duplicate(program, true);
	if (!copy || !cJSON_AddItemToObject(o, key, copy)) {
		cJSON_Delete(copy);
		return LL_ENOMEM;
	}
	if (!cJSON_GetObjectItemCaseSensitive(copy, "runs"))
		cJSON_AddItemToObject(copy, "runs", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(method, "runs"), true));
	if (strcmp(key, "warm") == 0 && !cJSON_GetObjectItemCaseSensitive(copy, "warmup"))
		cJSON_AddItemToObject(copy, "warmup", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(method, "warmup"), true));
	/* The column's figure and the median, at hand beside the samples. */
	for (const char *const *k = (const char *const[]){"min_us", "median_us", NULL}; *k; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(copy, "summary"), *k);
		if (v && !cJSON_GetObjectItemCaseSensitive(copy, *k))
			cJSON_AddItemToObject(copy, *k, cJSON_Duplicate(v, true));
	}
	return 0;
}

/* Adds to M, as KEY, a copy of FROM's member NAME. */
static bool add_copy(cJSON *m, const char *key, const cJSON *from, const char *name)
{
	cJSON *item = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(from, name), true);
	if (!item || !cJSON_AddItemToObject(m, key, item)) {
		cJSON_Delete(item);
		return false;
	}
	return true;
}

int family_add_measurement(cJSON *result, const struct family_measured *measured)
{
	cJSON *m = cJSON_AddObjectToObject(result, "measurement");

	if (!m)
		return LL_ENOMEM;
	if (measured->warm && (!add_copy(m, "warm", measured->warm, "method") ||
			       !add_copy(m, "warm_order", measured->warm, "order") ||
			       !add_copy(m, "warm_reruns", measured->warm, "reruns")))
		return LL_ENOMEM;
	if (measured->cold && !add_copy(m, "cold", measured->cold, "method"))
		return LL_ENOMEM;
	return 0;
}
