/* The warm load timer (measure.h). */
#include "measure.h"

#include "loadlab/err.h"
#include "measure/plat_measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One run of P: run again (up to o->reruns times, each listed in RERUNS)
 * while it exits non-zero, then a non-zero exit fails the measurement. */
static int run_once(const struct measure_program *p, const struct measure_options *o, int run, cJSON *reruns,
		    double *ret_us)
{
	struct plat_measure_counters k;
	int rc;

	for (int attempt = 0;; attempt++) {
		cJSON *entry;
		if ((rc = plat_measure_run(&p->spawn, o->timeout_ms, false, &k)) < 0)
			return rc;
		if (k.exit_code == 0)
			break;
		if (attempt >= o->reruns)
			return err_set(LL_EIO, "%s exited with %d in run %d while timed%s.", p->name,
				       k.exit_code, run + 1, attempt ? " (after reruns)" : "");
		if (!(entry = cJSON_CreateObject()) || !cJSON_AddItemToArray(reruns, entry) ||
		    !cJSON_AddStringToObject(entry, "program", p->name) ||
		    !cJSON_AddNumberToObject(entry, "run", run + 1) ||
		    !cJSON_AddNumberToObject(entry, "exit_code", k.exit_code))
			return err_set(LL_ENOMEM, "Out of memory.");
	}
	*ret_us = (double)k.wall_ns / 1000.0;
	return 0;
}

struct warm_run {
	const struct measure_program *programs;
	const struct measure_options *o;
	double *samples; /* [program][run] */
	cJSON *reruns;
};

/* measure_rounds()'s run: round R of program I, its sample kept once the
 * warm-up rounds are over. */
static int warm_one(void *ctx, size_t i, size_t r)
{
	struct warm_run *w = ctx;
	double us = 0;
	int rc;

	if ((rc = run_once(&w->programs[i], w->o, (int)r, w->reruns, &us)) < 0)
		return rc;
	if (r >= (size_t)w->o->warmup)
		w->samples[i * (size_t)w->o->runs + (r - (size_t)w->o->warmup)] = us;
	return 0;
}

/* RESULT's "programs": {NAME: {"samples_us", "summary"}} from SAMPLES
 * ([program][run]). */
static int programs_json(const struct measure_program *programs, size_t count,
			 const struct measure_options *o, const double *samples, cJSON *result)
{
	cJSON *progs = cJSON_AddObjectToObject(result, "programs");
	int rc;

	if (!progs)
		return err_set(LL_ENOMEM, "Out of memory.");
	for (size_t i = 0; i < count; i++) {
		const double *x = samples + i * (size_t)o->runs;
		cJSON *p = cJSON_AddObjectToObject(progs, programs[i].name), *summary;
		if (!p || !measure_add_numbers(p, "samples_us", x, (size_t)o->runs))
			return err_set(LL_ENOMEM, "Out of memory.");
		if ((rc = measure_summary_json(x, (size_t)o->runs, o->seed + i, &summary)) < 0)
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
	struct warm_run w = {programs, o, NULL, NULL};
	cJSON *result = NULL, *method, *order_json;
	int rc;

	if ((rc = measure_check(programs, count, o)) < 0)
		return rc;
	w.samples = calloc(count * (size_t)o->runs, sizeof(*w.samples));
	result = cJSON_CreateObject();
	if (!w.samples || !result || !(order_json = cJSON_AddArrayToObject(result, "order")) ||
	    !(w.reruns = cJSON_AddArrayToObject(result, "reruns"))) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	if ((rc = measure_rounds(programs, count, o, (size_t)o->warmup + (size_t)o->runs, (size_t)o->warmup,
				 &conditions, order_json, warm_one, &w)) < 0 ||
	    (rc = measure_add_method(result, &conditions, o, "warm", &method)) < 0)
		goto out;
	if ((rc = programs_json(programs, count, o, w.samples, result)) < 0)
		goto out;
	*ret = result;
	result = NULL;
out:
	free(w.samples);
	cJSON_Delete(result);
	return rc;
}
