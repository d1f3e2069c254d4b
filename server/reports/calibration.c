#include "calibration.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/log.h"

#include <stdio.h>

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
