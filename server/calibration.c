#include "calibration.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/log.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The interval's generator seed: the same result gives the same interval. */
#define CALIBRATION_SEED 20261201u

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

	memset(ret, 0, sizeof(*ret));
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
	if (!cJSON_IsArray(samples) || n == 0)
		return err_set(LL_EFORMAT, "The calibration variant '%s' has no warm samples.", name);
	if (!(ret->x = malloc(n * sizeof(double))) ||
	    (rounds && !(ret->round_sizes = malloc(rounds * sizeof(uint32_t)))))
		return err_set(LL_ENOMEM, "Out of memory.");
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
	/* Rounds that do not add up count as none: the interval then draws
	 * runs from the whole sample. */
	if (k != rounds || sum != n || rounds > STATS_MAX_ROUNDS)
		rounds = 0;
	ret->sample = (struct stats_sample){ret->x, n, rounds ? ret->round_sizes : NULL, rounds};
	return stats_median(ret->x, n, &ret->median);
}

/* Adds to OUT "noise": the worst of the three variants' warm.noise. */
static int add_noise(cJSON *out, const struct warm_sample w[3])
{
	double worst = -1, flagged = 0, retaken = 0;
	cJSON *noise = cJSON_AddObjectToObject(out, "noise");

	if (!noise)
		return LL_ENOMEM;
	for (int k = 0; k < 3; k++) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(w[k].warm, "noise");
		const cJSON *max = cJSON_GetObjectItemCaseSensitive(n, "max_other_cpu_pct");
		if (cJSON_IsNumber(max) && max->valuedouble > worst)
			worst = max->valuedouble;
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(n, "flagged");
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(n, "retaken");
		flagged += cJSON_IsNumber(f) && f->valuedouble > 0 ? f->valuedouble : 0;
		retaken += cJSON_IsNumber(r) && r->valuedouble > 0 ? r->valuedouble : 0;
	}
	if (!(worst >= 0 ? cJSON_AddNumberToObject(noise, "max_other_cpu_pct", worst)
			 : cJSON_AddNullToObject(noise, "max_other_cpu_pct")) ||
	    !cJSON_AddNumberToObject(noise, "flagged", flagged) ||
	    !cJSON_AddNumberToObject(noise, "retaken", retaken))
		return LL_ENOMEM;
	return 0;
}

int calibration_compute(const cJSON *spec, const cJSON *result, cJSON **ret)
{
	const cJSON *calibration = cJSON_GetObjectItemCaseSensitive(spec, "calibration");
	const cJSON *delay = cJSON_GetObjectItemCaseSensitive(calibration, "delay_us");
	const char *runner = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(result, "runner"));
	const char *family = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "family"));
	struct warm_sample w[3];
	double injected, recovered, recovered_2x, low = 0, high = 0;
	double injected_value = 0, zero_value = 0;
	cJSON *out = NULL;
	int rc = 0;

	memset(w, 0, sizeof(w));
	if (!cJSON_IsNumber(delay) || delay->valuedouble < 1)
		return err_set(LL_EINVAL, "The job is no calibration job.");
	injected = delay->valuedouble;
	for (int k = 0; k < 3 && rc == 0; k++) {
		const char *name = job_spec_calibration_variant(spec, k);
		rc = name ? warm_sample_of(result, name, &w[k])
			  : err_set(LL_EINVAL, "The calibration job has no variant waiting %g us.",
				    injected * k);
	}
	if (rc < 0)
		goto out;
	recovered = w[1].median - w[0].median;
	recovered_2x = (w[2].median - w[0].median) / 2;
	/* The interval of (median(X) - median(0)) / (injected - 0), the
	 * denominator two constant one-run samples. */
	injected_value = injected;
	struct stats_sample x = {&injected_value, 1, NULL, 0}, x_floor = {&zero_value, 1, NULL, 0};
	bool have_ci =
		stats_bootstrap_contrast_ci(&x, &x_floor, &w[1].sample, &w[0].sample, STATS_MEDIAN, 0.95,
					    CALIBRATION_RESAMPLES, CALIBRATION_SEED, &low, &high) == 0;
	rc = LL_ENOMEM;
	if (!(out = cJSON_CreateObject()) || !cJSON_AddNumberToObject(out, "injected_us", injected) ||
	    !cJSON_AddNumberToObject(out, "recovered_us", recovered) ||
	    !cJSON_AddNumberToObject(out, "ratio", recovered / injected) ||
	    !cJSON_AddItemToObject(
		    out, "ci_us",
		    have_ci ? cJSON_CreateDoubleArray((double[]){low * injected, high * injected}, 2)
			    : cJSON_CreateNull()) ||
	    !cJSON_AddNumberToObject(out, "recovered_2x_us", recovered_2x) ||
	    !cJSON_AddNumberToObject(out, "ratio_2x", recovered_2x / injected) ||
	    !cJSON_AddNumberToObject(out, "baseline_us", w[0].median) ||
	    !cJSON_AddNumberToObject(out, "runs", (double)w[0].sample.n) || add_noise(out, w) < 0 ||
	    !cJSON_AddStringToObject(out, "family", family ? family : "") ||
	    !(runner ? cJSON_AddStringToObject(out, "runner", runner) : cJSON_AddNullToObject(out, "runner")))
		goto out;
	rc = 0;
out:
	for (int k = 0; k < 3; k++)
		warm_sample_release(&w[k]);
	if (rc < 0) {
		cJSON_Delete(out);
		return rc == LL_ENOMEM ? err_set(LL_ENOMEM, "Out of memory.") : rc;
	}
	*ret = out;
	return 0;
}

void calibration_note(struct store *store, long long agent_id, long long task_id, long long result_id,
		      const cJSON *result, long long now_ms)
{
	cJSON *spec = NULL, *calibration = NULL;
	long long job_id = 0;
	char at[32], text[32];
	int rc = store_task_calibration_spec(store, task_id, &job_id, &spec);

	if (rc == 0 && !spec)
		return;
	if (rc == 0)
		rc = calibration_compute(spec, result, &calibration);
	if (rc == 0 && (!cJSON_AddNumberToObject(calibration, "job_id", (double)job_id) ||
			!cJSON_AddNumberToObject(calibration, "task_id", (double)task_id) ||
			!cJSON_AddNumberToObject(calibration, "result_id", (double)result_id) ||
			!cJSON_AddStringToObject(calibration, "at", clock_format_rfc3339(now_ms, at))))
		rc = err_set(LL_ENOMEM, "Out of memory.");
	if (rc == 0)
		rc = store_agent_calibration_put(store, agent_id, calibration);
	if (rc < 0) {
		snprintf(text, sizeof(text), "%lld", task_id);
		log_event(LOG_WARN, "calibration_not_recorded", "task_id", text, "reason", err_message(rc),
			  NULL);
	}
	cJSON_Delete(calibration);
	cJSON_Delete(spec);
}
