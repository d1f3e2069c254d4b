/* The warm load timer and the pieces both timers share (measure.h). */
#include "measure.h"

#include "loadlab/err.h"
#include "measure/plat_measure.h"
#include "loadlab/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIDENCE 0.95

int measure_check(const struct measure_program *programs, size_t count, const struct measure_options *o)
{
	if (!programs || count == 0 || count > MEASURE_MAX_PROGRAMS)
		return err_set(LL_EINVAL, "A measurement needs 1..%d programs.", MEASURE_MAX_PROGRAMS);
	if (!o || o->runs < 1 || o->runs > MEASURE_MAX_RUNS)
		return err_set(LL_EINVAL, "Runs must be 1..%d.", MEASURE_MAX_RUNS);
	if (o->warmup < 0 || o->warmup > MEASURE_MAX_WARMUP)
		return err_set(LL_EINVAL, "Warm-up runs must be 0..%d.", MEASURE_MAX_WARMUP);
	if (o->reruns < 0 || o->reruns > MEASURE_MAX_RERUNS)
		return err_set(LL_EINVAL, "Reruns must be 0..%d.", MEASURE_MAX_RERUNS);
	if (o->timeout_ms <= 0)
		return err_set(LL_EINVAL, "A measurement needs a timeout per run.");
	for (size_t i = 0; i < count; i++) {
		if (!programs[i].name || !*programs[i].name)
			return err_set(LL_EINVAL, "Program %zu has no name.", i);
		if (!programs[i].spawn.argv || !programs[i].spawn.argv[0])
			return err_set(LL_EINVAL, "Program %s has no argv.", programs[i].name);
		for (size_t j = 0; j < i; j++)
			if (strcmp(programs[i].name, programs[j].name) == 0)
				return err_set(LL_EINVAL, "Two programs are named %s.", programs[i].name);
	}
	return 0;
}

int measure_method_json(const struct plat_measure_conditions *c, const struct measure_options *o,
			const char *kind, cJSON **ret)
{
	cJSON *m = cJSON_CreateObject();
	char seed[24];

	/* The seed as text: a uint64 does not fit a JSON number exactly. */
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)o->seed);
	if (!m || !cJSON_AddStringToObject(m, "kind", kind) || !cJSON_AddStringToObject(m, "clock", c->clock) ||
	    !cJSON_AddNumberToObject(m, "timer_resolution_ns", c->timer_resolution_ns) ||
	    !cJSON_AddStringToObject(m, "priority", c->priority) ||
	    !cJSON_AddStringToObject(m, "priority_read_back", c->priority_read_back) ||
	    !cJSON_AddBoolToObject(m, "realtime", c->realtime) ||
	    !(c->cpu >= 0 ? cJSON_AddNumberToObject(m, "cpu", c->cpu) : cJSON_AddNullToObject(m, "cpu")) ||
	    !cJSON_AddNumberToObject(m, "cpus_available", c->cpus_available) ||
	    !cJSON_AddStringToObject(m, "spawn", c->spawn) || !cJSON_AddNumberToObject(m, "runs", o->runs) ||
	    !cJSON_AddNumberToObject(m, "warmup", o->warmup) || !cJSON_AddStringToObject(m, "seed", seed) ||
	    !cJSON_AddNumberToObject(m, "timeout_ms", (double)o->timeout_ms) ||
	    !cJSON_AddNumberToObject(m, "bootstrap_resamples", MEASURE_BOOTSTRAP_RESAMPLES) ||
	    !cJSON_AddNumberToObject(m, "confidence", CONFIDENCE)) {
		cJSON_Delete(m);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	*ret = m;
	return 0;
}

/* splitmix64 (Steele, Lea, Flood 2014): small, seedable, good enough to
 * shuffle a handful of programs. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void measure_shuffle(size_t *order, size_t n, uint64_t *state)
{
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	/* Fisher-Yates; the modulo bias is nil for n this small. */
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(next_random(state) % i);
		size_t t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
}

bool measure_add_numbers(cJSON *obj, const char *name, const double *values, size_t n)
{
	cJSON *arr = cJSON_AddArrayToObject(obj, name);

	if (!arr)
		return false;
	for (size_t i = 0; i < n; i++) {
		cJSON *v = cJSON_CreateNumber(values[i]);
		if (!v || !cJSON_AddItemToArray(arr, v)) {
			cJSON_Delete(v);
			return false;
		}
	}
	return true;
}

static bool add_pair(cJSON *obj, const char *name, double low, double high)
{
	double pair[2] = {low, high};
	return measure_add_numbers(obj, name, pair, 2);
}

int measure_summary_json(const double *x, size_t n, uint64_t seed, cJSON **ret)
{
	struct stats_summary s;
	double med_lo, med_hi, min_lo, min_hi;
	bool *flags = NULL;
	size_t outliers;
	cJSON *o = NULL, *arr;
	int rc;

	if (!x || n == 0)
		return err_set(LL_EINVAL, "No samples to summarize.");
	if ((rc = stats_summarize(x, n, &s)) < 0 ||
	    (rc = stats_bootstrap_ci(x, n, STATS_MEDIAN, CONFIDENCE, MEASURE_BOOTSTRAP_RESAMPLES, seed, &med_lo,
				     &med_hi)) < 0 ||
	    (rc = stats_bootstrap_ci(x, n, STATS_MIN, CONFIDENCE, MEASURE_BOOTSTRAP_RESAMPLES, seed + 1, &min_lo,
				     &min_hi)) < 0)
		return rc;
	if (!(flags = calloc(n, sizeof(*flags)))) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	if ((rc = stats_outliers(x, n, MEASURE_OUTLIER_THRESHOLD, flags, &outliers)) < 0)
		goto out;
	rc = err_set(LL_ENOMEM, "Out of memory.");
	if (!(o = cJSON_CreateObject()) || !cJSON_AddNumberToObject(o, "n", (double)n) ||
	    !cJSON_AddNumberToObject(o, "min_us", s.min) || !cJSON_AddNumberToObject(o, "median_us", s.median) ||
	    !cJSON_AddNumberToObject(o, "mean_us", s.mean) || !cJSON_AddNumberToObject(o, "mad_us", s.mad) ||
	    !cJSON_AddNumberToObject(o, "p90_us", s.p90) || !add_pair(o, "ci_median_us", med_lo, med_hi) ||
	    !add_pair(o, "ci_min_us", min_lo, min_hi) || !(arr = cJSON_AddArrayToObject(o, "outliers")))
		goto out;
	for (size_t i = 0; i < n; i++) {
		cJSON *v;
		if (!flags[i])
			continue;
		if (!(v = cJSON_CreateNumber((double)i)) || !cJSON_AddItemToArray(arr, v)) {
			cJSON_Delete(v);
			goto out;
		}
	}
	*ret = o;
	o = NULL;
	rc = 0;
out:
	cJSON_Delete(o);
	free(flags);
	return rc;
}

/* One run of P: run again (up to o->reruns times, each listed in RERUNS)
 * while it exits non-zero, then a non-zero exit fails the measurement. */
static int run_once(const struct measure_program *p, const struct measure_options *o, int run,
		    cJSON *reruns, double *ret_us)
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
			return err_set(LL_EIO, "%s exited with %d in run %d while timed%s.", p->name, k.exit_code,
				       run + 1, attempt ? " (after reruns)" : "");
		if (!(entry = cJSON_CreateObject()) || !cJSON_AddItemToArray(reruns, entry) ||
		    !cJSON_AddStringToObject(entry, "program", p->name) ||
		    !cJSON_AddNumberToObject(entry, "run", run + 1) ||
		    !cJSON_AddNumberToObject(entry, "exit_code", k.exit_code))
			return err_set(LL_ENOMEM, "Out of memory.");
	}
	*ret_us = (double)k.wall_ns / 1000.0;
	return 0;
}

int measure_warm(const struct measure_program *programs, size_t count, const struct measure_options *o,
		 cJSON **ret)
{
	struct plat_measure_conditions conditions;
	double *samples = NULL; /* [program][run] */
	size_t *order = NULL, rounds;
	cJSON *result = NULL, *method = NULL, *progs, *order_json, *reruns;
	uint64_t state;
	int rc;

	if ((rc = measure_check(programs, count, o)) < 0)
		return rc;
	rounds = (size_t)o->warmup + (size_t)o->runs;
	samples = calloc(count * (size_t)o->runs, sizeof(*samples));
	order = calloc(count, sizeof(*order));
	result = cJSON_CreateObject();
	if (!samples || !order || !result || !(order_json = cJSON_AddArrayToObject(result, "order")) ||
	    !(reruns = cJSON_AddArrayToObject(result, "reruns"))) {
		free(samples);
		free(order);
		cJSON_Delete(result);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	state = o->seed;
	plat_measure_begin(&conditions);
	for (size_t r = 0; r < rounds; r++) {
		bool timed = r >= (size_t)o->warmup;
		cJSON *names = NULL;
		if (o->progress && o->progress(o->progress_ctx, (int)(100 * r / rounds))) {
			rc = err_set(LL_ESTATE, "The measurement was cancelled.");
			goto out;
		}
		measure_shuffle(order, count, &state);
		if (timed && (!(names = cJSON_CreateArray()) || !cJSON_AddItemToArray(order_json, names))) {
			cJSON_Delete(names);
			rc = err_set(LL_ENOMEM, "Out of memory.");
			goto out;
		}
		for (size_t k = 0; k < count; k++) {
			const struct measure_program *p = &programs[order[k]];
			size_t run = r - (size_t)o->warmup;
			double us = 0;
			cJSON *name;
			if ((rc = run_once(p, o, (int)r, reruns, &us)) < 0)
				goto out;
			if (!timed)
				continue;
			samples[order[k] * (size_t)o->runs + run] = us;
			if (!(name = cJSON_CreateString(p->name)) || !cJSON_AddItemToArray(names, name)) {
				cJSON_Delete(name);
				rc = err_set(LL_ENOMEM, "Out of memory.");
				goto out;
			}
		}
	}
	/* Statistics after the agent's normal scheduling is back. */
	plat_measure_end(&conditions);
	if (o->progress && o->progress(o->progress_ctx, 100)) {
		rc = err_set(LL_ESTATE, "The measurement was cancelled.");
		goto out;
	}
	if ((rc = measure_method_json(&conditions, o, "warm", &method)) < 0)
		goto out;
	if (!cJSON_AddItemToObject(result, "method", method)) {
		cJSON_Delete(method);
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	if (!(progs = cJSON_AddObjectToObject(result, "programs"))) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		const double *x = samples + i * (size_t)o->runs;
		cJSON *p = cJSON_AddObjectToObject(progs, programs[i].name), *summary;
		if (!p || !measure_add_numbers(p, "samples_us", x, (size_t)o->runs)) {
			rc = err_set(LL_ENOMEM, "Out of memory.");
			goto out;
		}
		if ((rc = measure_summary_json(x, (size_t)o->runs, o->seed + i, &summary)) < 0)
			goto out;
		if (!cJSON_AddItemToObject(p, "summary", summary)) {
			cJSON_Delete(summary);
			rc = err_set(LL_ENOMEM, "Out of memory.");
			goto out;
		}
	}
	*ret = result;
	result = NULL;
	rc = 0;
out:
	plat_measure_end(&conditions);
	cJSON_Delete(result);
	free(samples);
	free(order);
	return rc;
}
