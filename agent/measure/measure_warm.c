/* The warm load timer (measure.h). */
#include "measure.h"

#include "loadlab/err.h"
#include "measure/plat_measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct warm_run {
	const struct measure_program *programs;
	const struct measure_options *o;
	cJSON *reruns;
	struct measure_counters counters;
};

/* measure_sample()'s run: program I, timed into SLOT or untimed (-1). */
static int warm_one(void *ctx, size_t i, long slot, double *ret_us)
{
	struct warm_run *w = ctx;
	struct plat_measure_counters k;
	const char *phase = slot < 0 ? "warm-up" : "timed";
	int run = slot < 0 ? 0 : (int)slot, rc;

	rc = measure_run_rerunning(&w->programs[i], w->o, run, phase, false, NULL, NULL, w->reruns, &k);
	if (rc < 0)
		return rc;
	*ret_us = (double)k.wall_ns / 1000.0;
	if (slot >= 0)
		measure_counters_put(&w->counters, i, (size_t)slot, &k);
	return 0;
}

/* RESULT's "programs": {NAME: {"samples_us", "round_sizes", "noise",
 * "summary", ...}} from S. */
static int programs_json(const struct measure_program *programs, size_t count,
			 const struct measure_options *o, const struct measure_sampled *s,
			 const struct measure_counters *counters, cJSON *result)
{
	cJSON *progs = cJSON_AddObjectToObject(result, "programs");
	int rc;

	if (!progs)
		return err_set(LL_ENOMEM, "Out of memory.");
	for (size_t i = 0; i < count; i++) {
		const double *x = s->samples_us + i * s->capacity;
		cJSON *p = cJSON_AddObjectToObject(progs, programs[i].name), *summary;
		if (!p || !measure_add_numbers(p, "samples_us", x, s->taken))
			return err_set(LL_ENOMEM, "Out of memory.");
		if ((rc = measure_sampled_json(s, i, o, p)) < 0 ||
		    (rc = measure_counters_json(counters, i, s->taken, p)) < 0 ||
		    (rc = measure_summary_json(x, s->taken, o->seed + i, &summary)) < 0)
			return rc;
		if (!cJSON_AddItemToObject(p, "summary", summary)) {
			cJSON_Delete(summary);
			return err_set(LL_ENOMEM, "Out of memory.");
		}
	}
	return 0;
}

int measure_warm(const struct measure_program *programs, size_t count, const struct measure_options *o,
		 cJSON **ret)
{
	struct plat_measure_conditions conditions;
	struct warm_run w = {programs, o, NULL, {0}};
	struct measure_sampled sampled = {0};
	cJSON *result = NULL, *method, *order_json;
	int rc;

	if ((rc = measure_check(programs, count, o)) < 0)
		return rc;
	if ((rc = measure_counters_init(&w.counters, count, (size_t)o->runs)) < 0)
		return rc;
	result = cJSON_CreateObject();
	if (!result || !(order_json = cJSON_AddArrayToObject(result, "order")) ||
	    !(w.reruns = cJSON_AddArrayToObject(result, "reruns"))) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	if ((rc = measure_sample(programs, count, o, true, &conditions, order_json, warm_one, &w, &sampled)) <
		    0 ||
	    (rc = measure_add_method(result, &conditions, o, "warm", &method)) < 0 ||
	    (rc = measure_noise_method_json(&sampled, result)) < 0 ||
	    (rc = measure_counters_method_json(&w.counters, sampled.taken, method)) < 0)
		goto out;
	/* The runs taken, which "auto" decides. */
	cJSON_ReplaceItemInObject(method, "runs", cJSON_CreateNumber((double)sampled.taken));
	if ((rc = programs_json(programs, count, o, &sampled, &w.counters, result)) < 0)
		goto out;
	*ret = result;
	result = NULL;
out:
	measure_sampled_release(&sampled);
	measure_counters_release(&w.counters);
	cJSON_Delete(result);
	return rc;
}
