#include "calibration.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/log.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int calibration_compute(const cJSON *spec, const cJSON *result, cJSON **ret)
{
	const cJSON *calibration = cJSON_GetObjectItemCaseSensitive(spec, "calibration");
	const cJSON *delay = cJSON_GetObjectItemCaseSensitive(calibration, "delay_us");
	const char *runner = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(result, "runner"));
	const char *family = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "family"));
	const char *names[3];
	struct calibration c;
	cJSON *out = NULL;
	int rc;

	if (!cJSON_IsNumber(delay) || delay->valuedouble < 1)
		return err_set(LL_EINVAL, "The job is no calibration job.");
	for (int k = 0; k < 3; k++)
		if (!(names[k] = job_spec_calibration_variant(spec, k)))
			return err_set(LL_EINVAL, "The calibration job has no variant waiting %g us.",
				       delay->valuedouble * k);
	if ((rc = calibration_from_result(result, names, delay->valuedouble, &c)) < 0 ||
	    (rc = calibration_json(&c, &out)) < 0)
		return rc;
	if (!cJSON_AddStringToObject(out, "family", family ? family : "") ||
	    !(runner ? cJSON_AddStringToObject(out, "runner", runner)
		     : cJSON_AddNullToObject(out, "runner"))) {
		cJSON_Delete(out);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	*ret = out;
	return 0;
}

/* Variance floor of a calibration's figure (us^2): a degenerate interval
 * (every resample alike) weighs as a standard error of 0.1 us. */
#define VARIANCE_FLOOR_US2 0.01

/* The figure KEY and its interval CI_KEY of C as a job estimate; false
 * when C has no such interval. */
static bool estimate_of(const cJSON *c, const char *key, const char *ci_key, struct stats_job_estimate *ret)
{
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(c, key);
	const cJSON *ci = cJSON_GetObjectItemCaseSensitive(c, ci_key);
	const cJSON *lo = cJSON_GetArrayItem(ci, 0), *hi = cJSON_GetArrayItem(ci, 1);

	if (!cJSON_IsNumber(value) || !cJSON_IsArray(ci) || !cJSON_IsNumber(lo) || !cJSON_IsNumber(hi))
		return false;
	ret->value = value->valuedouble;
	ret->group = 0;
	return stats_variance_of_interval(lo->valuedouble, hi->valuedouble, VARIANCE_FLOOR_US2,
					  &ret->variance) == 0;
}

/* CALIBRATION's KEY figure's interval widened by the between-job tau^2 of
 * HISTORY's: *RET_TAU2 and *RET_K (the usable jobs); INTERVAL_KEY replaced
 * when tau^2 could be estimated. -1: not estimated, LL_ENOMEM. */
static int widen(cJSON *calibration, const cJSON *history, const char *key, const char *ci_key,
		 const char *interval_key, double *ret_tau2, size_t *ret_k)
{
	struct stats_job_estimate jobs[CALIBRATION_HISTORY_JOBS], own;
	const cJSON *c, *ci = cJSON_GetObjectItemCaseSensitive(calibration, ci_key);
	size_t k = 0, df;
	double tau2, lo, hi;
	cJSON *interval;

	cJSON_ArrayForEach(c, history) {
		if (k < CALIBRATION_HISTORY_JOBS && estimate_of(c, key, ci_key, &jobs[k]))
			k++;
	}
	*ret_k = k;
	if (k < CALIBRATION_MIN_HISTORY || !estimate_of(calibration, key, ci_key, &own) ||
	    stats_between_variance(jobs, k, &tau2, &df) < 0)
		return -1;
	lo = own.value -
	     stats_widen_half_width(own.value - cJSON_GetArrayItem(ci, 0)->valuedouble, tau2, 1, STATS_Z95);
	hi = own.value +
	     stats_widen_half_width(cJSON_GetArrayItem(ci, 1)->valuedouble - own.value, tau2, 1, STATS_Z95);
	if (!(interval = cJSON_CreateDoubleArray((double[]){lo, hi}, 2)))
		return LL_ENOMEM;
	if (cJSON_GetObjectItemCaseSensitive(calibration, interval_key))
		cJSON_ReplaceItemInObjectCaseSensitive(calibration, interval_key, interval);
	else
		cJSON_AddItemToObject(calibration, interval_key, interval);
	*ret_tau2 = tau2;
	return 0;
}

int calibration_across_jobs(cJSON *calibration, const cJSON *history)
{
	double tau2 = 0, tau2_2x = 0;
	size_t k = 0, k_2x = 0;
	int rc = widen(calibration, history, "recovered_us", "ci_us", "interval_us", &tau2, &k);
	int rc_2x = rc < -1 ? rc
			    : widen(calibration, history, "recovered_2x_us", "ci_2x_us", "interval_2x_us",
				    &tau2_2x, &k_2x);
	cJSON *between, *scope;

	if (rc < -1 || rc_2x < -1)
		return err_set(LL_ENOMEM, "Out of memory.");
	cJSON_DeleteItemFromObjectCaseSensitive(calibration, "between_jobs");
	if (!(scope = cJSON_CreateString(rc == 0 ? "within-and-between-jobs" : "within-job")) ||
	    !(between = cJSON_AddObjectToObject(calibration, "between_jobs"))) {
		cJSON_Delete(scope);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	if (cJSON_GetObjectItemCaseSensitive(calibration, "interval_scope"))
		cJSON_ReplaceItemInObjectCaseSensitive(calibration, "interval_scope", scope);
	else
		cJSON_AddItemToObject(calibration, "interval_scope", scope);
	if (!cJSON_AddNumberToObject(between, "jobs", (double)k) ||
	    (rc == 0 && !cJSON_AddNumberToObject(between, "sd_us", sqrt(tau2))) ||
	    (rc_2x == 0 && !cJSON_AddNumberToObject(between, "sd_2x_us", sqrt(tau2_2x))))
		return err_set(LL_ENOMEM, "Out of memory.");
	return 0;
}

/* calibration_across_jobs()'s HISTORY from the store, one at a time. */
static void history_add(void *context, const cJSON *calibration)
{
	cJSON_AddItemToArray(context, cJSON_Duplicate(calibration, true));
}

/* CALIBRATION (of agent AGENT_ID's result RESULT_ID) kept within-job, then
 * widened by the agent's earlier ones. */
static int across_jobs(struct store *store, long long agent_id, long long result_id, cJSON *calibration)
{
	const char *family = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(calibration, "family"));
	const char *runner = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(calibration, "runner"));
	const cJSON *injected = cJSON_GetObjectItemCaseSensitive(calibration, "injected_us");
	cJSON *history = cJSON_CreateArray();
	int rc;

	if (!history)
		return err_set(LL_ENOMEM, "Out of memory.");
	if ((rc = store_calibration_add(store, agent_id, result_id, calibration)) == 0 &&
	    (rc = store_calibration_history(store, agent_id, result_id, injected->valuedouble,
					    family ? family : "", runner, CALIBRATION_HISTORY_JOBS,
					    history_add, history)) == 0)
		rc = calibration_across_jobs(calibration, history);
	cJSON_Delete(history);
	return rc;
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
		rc = across_jobs(store, agent_id, result_id, calibration);
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
