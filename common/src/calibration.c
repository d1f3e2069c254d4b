/* The known-effect self-test's figures: see calibration.h. */
#include "loadlab/calibration.h"

#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One variant's warm samples, in rounds. */
struct warm_sample {
	const cJSON *warm;
	double *x;
	uint32_t *round_sizes;
	struct stats_sample sample;
	double median;
};

static void warm_sample_release(struct warm_sample *w)
{
	free(w->x);
	free(w->round_sizes);
}

/* The warm samples of RESULT's variant NAME into *RET. */
static int warm_sample_of(const cJSON *result, const char *name, struct warm_sample *ret)
{
	const cJSON *v, *variant = NULL, *samples, *sizes, *item;
	size_t n, rounds, k = 0, sum = 0;

	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(result, "variants")) {
		const char *have = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "name"));
		if (have && strcmp(have, name) == 0)
			variant = v;
	}
	if (!variant)
		return err_set(LL_EFORMAT, "The calibration result has no variant '%s'.", name);
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(variant, "valid")))
		return err_set(LL_EFORMAT, "The calibration variant '%s' is invalid.", name);
	ret->warm = cJSON_GetObjectItemCaseSensitive(variant, "warm");
	samples = cJSON_GetObjectItemCaseSensitive(ret->warm, "samples_us");
	sizes = cJSON_GetObjectItemCaseSensitive(ret->warm, "round_sizes");
	n = (size_t)cJSON_GetArraySize(samples);
	rounds = cJSON_IsArray(sizes) ? (size_t)cJSON_GetArraySize(sizes) : 0;
	if (!cJSON_IsArray(samples) || n == 0 || n > STATS_MAX_SAMPLES)
		return err_set(LL_EFORMAT, "The calibration variant '%s' has no warm samples (or over %d).",
			       name, STATS_MAX_SAMPLES);
	if (!(ret->x = malloc(n * sizeof(double))) ||
	    (rounds && !(ret->round_sizes = malloc(rounds * sizeof(uint32_t)))))
		return LL_ENOMEM;
	cJSON_ArrayForEach(item, samples) {
		if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble))
			return err_set(LL_EFORMAT,
				       "The calibration variant '%s' has a sample that is no number.", name);
		ret->x[k++] = item->valuedouble;
	}
	k = 0;
	cJSON_ArrayForEach(item, sizes) {
		if (!cJSON_IsNumber(item) || item->valuedouble < 1 || item->valuedouble > (double)n)
			break;
		ret->round_sizes[k++] = (uint32_t)item->valuedouble;
		sum += (size_t)item->valuedouble;
	}
	/* Rounds that do not add up count as none. */
	if (k != rounds || sum != n || rounds > STATS_MAX_ROUNDS)
		rounds = 0;
	ret->sample = (struct stats_sample){ret->x, n, rounds ? ret->round_sizes : NULL, rounds};
	return stats_median(ret->x, n, &ret->median);
}

/* Whether A and B were taken in the same passes: the same count and the
 * same rounds. */
static bool paired(const struct stats_sample *a, const struct stats_sample *b)
{
	return a->n == b->n && a->rounds == b->rounds &&
	       (a->rounds == 0 || memcmp(a->round_sizes, b->round_sizes, a->rounds * sizeof(uint32_t)) == 0);
}

/* S with its rounds only when there are enough to resample. */
static struct stats_sample resampled_as(const struct stats_sample *s)
{
	struct stats_sample r = *s;

	if (r.rounds < CALIBRATION_MIN_ROUNDS) {
		r.rounds = 0;
		r.round_sizes = NULL;
	}
	return r;
}

/* *RET's recovered cost and interval of variant V over the 0 variant Z,
 * paired (D: V->sample.n values of scratch) or not. */
static int cost_of(const struct warm_sample *z, const struct warm_sample *v, bool pair, double *d,
		   struct calibration_cost *ret)
{
	/* Contrasts over a constant one-sample denominator of 1 (and floor 0):
	 * stats_bootstrap_contrast_ci() then gives the interval of the
	 * numerator itself, resampled as it resamples everything else. */
	static const double one = 1, zero = 0;
	struct stats_sample unit = {&one, 1, NULL, 0}, unit_floor = {&zero, 1, NULL, 0};
	double low = 0, high = 0;
	int rc;

	if (pair) {
		for (size_t k = 0; k < v->sample.n; k++)
			d[k] = v->sample.x[k] - z->sample.x[k];
		struct stats_sample ds = v->sample;
		ds.x = d;
		ds = resampled_as(&ds);
		if ((rc = stats_median(d, ds.n, &ret->recovered_us)) < 0)
			return rc;
		rc = stats_bootstrap_contrast_ci(&unit, NULL, &ds, NULL, STATS_MEDIAN, 0.95,
						 CALIBRATION_RESAMPLES, CALIBRATION_SEED, &low, &high);
	} else {
		struct stats_sample vs = resampled_as(&v->sample), zs = resampled_as(&z->sample);
		ret->recovered_us = v->median - z->median;
		rc = stats_bootstrap_contrast_ci(&unit, &unit_floor, &vs, &zs, STATS_MEDIAN, 0.95,
						 CALIBRATION_RESAMPLES, CALIBRATION_SEED, &low, &high);
	}
	if (rc == LL_ENOMEM)
		return rc;
	ret->have_interval = rc == 0;
	ret->low_us = rc == 0 ? low : 0;
	ret->high_us = rc == 0 ? high : 0;
	ret->ratio = ret->recovered_us / ret->injected_us;
	return 0;
}

/* C's noise from the three variants' warm.noise. */
static void noise_of(const struct warm_sample w[3], struct calibration *c)
{
	c->max_other_cpu_pct = -1;
	c->flagged = c->retaken = 0;
	for (int k = 0; k < 3; k++) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(w[k].warm, "noise");
		const cJSON *max = cJSON_GetObjectItemCaseSensitive(n, "max_other_cpu_pct");
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(n, "flagged");
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(n, "retaken");
		if (cJSON_IsNumber(max) && max->valuedouble > c->max_other_cpu_pct)
			c->max_other_cpu_pct = max->valuedouble;
		c->flagged += cJSON_IsNumber(f) && f->valuedouble > 0 ? f->valuedouble : 0;
		c->retaken += cJSON_IsNumber(r) && r->valuedouble > 0 ? r->valuedouble : 0;
	}
}

int calibration_from_result(const cJSON *result, const char *const variants[3], double injected_us,
			    struct calibration *ret)
{
	struct warm_sample w[3];
	struct calibration c;
	double *d = NULL;
	int rc = 0;

	memset(w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	if (!(injected_us >= 1 && injected_us <= JOB_SPEC_MAX_CALIBRATION_DELAY_US) || !variants ||
	    !variants[0] || !variants[1] || !variants[2])
		return err_set(LL_EINVAL,
			       "A calibration needs an injected cost of 1..%d us and three variants.",
			       JOB_SPEC_MAX_CALIBRATION_DELAY_US);
	for (int k = 0; k < 3 && rc == 0; k++)
		rc = warm_sample_of(result, variants[k], &w[k]);
	if (rc < 0)
		goto out;
	c.injected_us = injected_us;
	c.paired = paired(&w[0].sample, &w[1].sample) && paired(&w[0].sample, &w[2].sample);
	if (c.paired && !(d = malloc(w[0].sample.n * sizeof(double)))) {
		rc = LL_ENOMEM;
		goto out;
	}
	for (int k = 0; k < 3; k++)
		c.median_us[k] = w[k].median;
	for (int k = 0; k < 2 && rc == 0; k++) {
		c.cost[k].injected_us = injected_us * (k + 1);
		rc = cost_of(&w[0], &w[k + 1], c.paired, d, &c.cost[k]);
	}
	if (rc < 0)
		goto out;
	c.runs = w[0].sample.n;
	c.rounds = w[0].sample.rounds;
	noise_of(w, &c);
	*ret = c;
out:
	free(d);
	for (int k = 0; k < 3; k++)
		warm_sample_release(&w[k]);
	return rc == LL_ENOMEM ? err_set(LL_ENOMEM, "Out of memory.") : rc;
}

/* A [low, high] array of COST's interval times SCALE, or null. */
static cJSON *interval_json(const struct calibration_cost *cost, double scale)
{
	if (!cost->have_interval)
		return cJSON_CreateNull();
	return cJSON_CreateDoubleArray((double[]){cost->low_us * scale, cost->high_us * scale}, 2);
}

int calibration_json(const struct calibration *c, cJSON **ret)
{
	cJSON *out = cJSON_CreateObject(), *noise;

	if (!out || !cJSON_AddNumberToObject(out, "injected_us", c->injected_us) ||
	    !cJSON_AddNumberToObject(out, "recovered_us", c->cost[0].recovered_us) ||
	    !cJSON_AddNumberToObject(out, "ratio", c->cost[0].ratio) ||
	    !cJSON_AddItemToObject(out, "ci_us", interval_json(&c->cost[0], 1)) ||
	    !cJSON_AddNumberToObject(out, "recovered_2x_us", c->cost[1].recovered_us / 2) ||
	    !cJSON_AddNumberToObject(out, "ratio_2x", c->cost[1].ratio) ||
	    !cJSON_AddItemToObject(out, "ci_2x_us", interval_json(&c->cost[1], 0.5)) ||
	    !cJSON_AddNumberToObject(out, "baseline_us", c->median_us[0]) ||
	    !cJSON_AddNumberToObject(out, "runs", (double)c->runs) ||
	    !cJSON_AddBoolToObject(out, "paired", c->paired) ||
	    /* one job's interval: the daemon widens it by what varies between
	     * the agent's calibrations (server/calibration.h) */
	    !cJSON_AddStringToObject(out, "interval_scope", "within-job") ||
	    !cJSON_AddItemToObject(out, "interval_us", interval_json(&c->cost[0], 1)) ||
	    !cJSON_AddItemToObject(out, "interval_2x_us", interval_json(&c->cost[1], 0.5)) ||
	    !(noise = cJSON_AddObjectToObject(out, "noise")) ||
	    !(c->max_other_cpu_pct >= 0
		      ? cJSON_AddNumberToObject(noise, "max_other_cpu_pct", c->max_other_cpu_pct)
		      : cJSON_AddNullToObject(noise, "max_other_cpu_pct")) ||
	    !cJSON_AddNumberToObject(noise, "flagged", c->flagged) ||
	    !cJSON_AddNumberToObject(noise, "retaken", c->retaken)) {
		cJSON_Delete(out);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	*ret = out;
	return 0;
}
