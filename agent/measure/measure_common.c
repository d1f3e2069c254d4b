/* measure_common.c - what the warm and the cold timer share (measure.h). */
#include "measure/measure.h"

#include "loadlab/err.h"
#include "loadlab/stats.h"
#include "measure/plat_measure.h"

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
	if (o->rounds < 0 || o->rounds > MEASURE_MAX_ROUNDS || (!o->auto_runs && o->rounds > o->runs))
		return err_set(LL_EINVAL, "Rounds must be 1..%d and no more than the runs.",
			       MEASURE_MAX_ROUNDS);
	if (o->max_retakes < MEASURE_NO_RETAKES || o->max_retakes > MEASURE_NOISE_MAX_RETAKES)
		return err_set(LL_EINVAL,
			       "Retakes of noisy runs must be %d (none), 0 (the default) or 1 to %d.",
			       MEASURE_NO_RETAKES, MEASURE_NOISE_MAX_RETAKES);
	if (o->round_gap_ms < 0 || o->round_gap_ms > MEASURE_MAX_ROUND_GAP_MS)
		return err_set(LL_EINVAL, "The pause between rounds must be 0 (the default) to %d ms.",
			       MEASURE_MAX_ROUND_GAP_MS);
	if (o->auto_runs && !(o->precision > 0 && o->precision < 1))
		return err_set(LL_EINVAL, "Adaptive runs need a precision between 0 and 1.");
	if (o->paired_precision != 0 &&
	    (!o->auto_runs || !(o->paired_precision > 0 && o->paired_precision < 1) ||
	     !(o->max_seconds > 0) || o->paired_count < 1 || o->paired_count > count))
		return err_set(LL_EINVAL,
			       "Runs until a paired precision need adaptive runs, a precision "
			       "between 0 and 1, a time limit and 1..%zu variants.",
			       count);
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

int measure_round_gap_ms(const struct measure_options *o)
{
	return o->round_gap_ms > 0 ? o->round_gap_ms : MEASURE_ROUND_GAP_MS;
}

/* "companion": {"pid", "pinned", "nice"} (plat_measure_companion), or null. */
static bool add_companion(const struct plat_measure_conditions *c, cJSON *m)
{
	cJSON *o;

	if (c->companion_pid <= 0)
		return cJSON_AddNullToObject(m, "companion") != NULL;
	return (o = cJSON_AddObjectToObject(m, "companion")) &&
	       cJSON_AddNumberToObject(o, "pid", (double)c->companion_pid) &&
	       cJSON_AddBoolToObject(o, "pinned", c->companion_pinned) &&
	       cJSON_AddNumberToObject(o, "nice", c->companion_nice);
}

int measure_method_json(const struct plat_measure_conditions *c, const struct measure_options *o,
			const char *kind, cJSON **ret)
{
	cJSON *m = cJSON_CreateObject();
	char seed[24];

	/* The seed as text: a uint64 does not fit a JSON number exactly. */
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)o->seed);
	if (!m || !cJSON_AddStringToObject(m, "kind", kind) ||
	    !cJSON_AddStringToObject(m, "clock", c->clock) ||
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
	    !cJSON_AddNumberToObject(m, "confidence", CONFIDENCE) ||
	    !cJSON_AddNumberToObject(m, "rounds", o->rounds > 0 ? o->rounds : 1) ||
	    !cJSON_AddNumberToObject(m, "round_gap_ms", measure_round_gap_ms(o)) ||
	    !cJSON_AddBoolToObject(m, "auto", o->auto_runs) || !add_companion(c, m) ||
	    (o->paired_precision > 0 &&
	     (!cJSON_AddNumberToObject(m, "precision_pct", o->paired_precision * 100) ||
	      !cJSON_AddNumberToObject(m, "max_seconds", o->max_seconds)))) {
		cJSON_Delete(m);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	*ret = m;
	return 0;
}

void measure_shuffle(size_t *order, size_t n, uint64_t *state)
{
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	/* Fisher-Yates; the modulo bias is nil for n this small. */
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(stats_random_next(state) % i);
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
	    (rc = stats_bootstrap_ci(x, n, STATS_MEDIAN, CONFIDENCE, MEASURE_BOOTSTRAP_RESAMPLES, seed,
				     &med_lo, &med_hi)) < 0 ||
	    (rc = stats_bootstrap_ci(x, n, STATS_MIN, CONFIDENCE, MEASURE_BOOTSTRAP_RESAMPLES, seed + 1,
				     &min_lo, &min_hi)) < 0)
		return rc;
	if (!(flags = calloc(n, sizeof(*flags)))) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	if ((rc = stats_outliers(x, n, MEASURE_OUTLIER_THRESHOLD, flags, &outliers)) < 0)
		goto out;
	rc = err_set(LL_ENOMEM, "Out of memory.");
	if (!(o = cJSON_CreateObject()) || !cJSON_AddNumberToObject(o, "n", (double)n) ||
	    !cJSON_AddNumberToObject(o, "min_us", s.min) ||
	    !cJSON_AddNumberToObject(o, "median_us", s.median) ||
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

int measure_add_method(cJSON *result, const struct plat_measure_conditions *c,
		       const struct measure_options *o, const char *kind, cJSON **ret_method)
{
	cJSON *method;
	int rc;

	if ((rc = measure_method_json(c, o, kind, &method)) < 0)
		return rc;
	if (!cJSON_AddItemToObject(result, "method", method)) {
		cJSON_Delete(method);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	*ret_method = method;
	return 0;
}

int measure_run_rerunning(const struct measure_program *p, const struct measure_options *o, int run,
			  const char *phase, bool with_counters, int (*prepare)(void *ctx), void *ctx,
			  cJSON *reruns, struct plat_measure_counters *ret)
{
	struct plat_measure_counters k;
	int rc;

	for (int attempt = 0;; attempt++) {
		char start_error[256] = "";
		cJSON *entry;
		if (prepare && (rc = prepare(ctx)) < 0)
			return rc;
		rc = plat_measure_run(&p->spawn, o->timeout_ms, with_counters, &k);
		/* A start that failed (LL_EIO: under Wine, now and then,
		 * CreateProcess's internal error 1359) is taken again as a
		 * non-zero exit is; a timeout (LL_ERANGE) or no memory never. */
		if (rc < 0 && (rc != LL_EIO || attempt >= o->reruns))
			return rc;
		if (rc < 0)
			snprintf(start_error, sizeof(start_error), "%s", err_message(rc));
		else if (k.exit_code == 0)
			break;
		else if (attempt >= o->reruns)
			return err_set(LL_EIO, "%s exited with %d in %s run %d%s.", p->name, k.exit_code,
				       phase, run + 1, attempt ? " (after reruns)" : "");
		if (!(entry = cJSON_CreateObject()) || !cJSON_AddItemToArray(reruns, entry)) {
			cJSON_Delete(entry);
			return err_set(LL_ENOMEM, "Out of memory.");
		}
		if (!cJSON_AddStringToObject(entry, "program", p->name) ||
		    !cJSON_AddNumberToObject(entry, "run", run + 1) ||
		    !cJSON_AddStringToObject(entry, "phase", phase) ||
		    !(start_error[0] ? cJSON_AddStringToObject(entry, "start_error", start_error)
				     : cJSON_AddNumberToObject(entry, "exit_code", k.exit_code)))
			return err_set(LL_ENOMEM, "Out of memory.");
	}
	*ret = k;
	return 0;
}
