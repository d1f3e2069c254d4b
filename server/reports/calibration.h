/*
 * calibration.h - an agent's calibration, from its result of a calibration
 * job (a job whose spec has "calibration": {"delay_us": X} and variants
 * waiting 0, X and 2X µs in the first library's entry point:
 * docs/rest-bodies.md, job_spec.h). The daemon keeps each agent's last
 * one and shows it as "last_calibration" in GET /api/v1/agents.
 */
#ifndef LOADLAB_SERVER_CALIBRATION_H
#define LOADLAB_SERVER_CALIBRATION_H

#include "store/store.h"

#include "loadlab/calibration.h"

#include <cjson/cJSON.h>

/*
 * What RESULT (a task's result body) recovers of the cost injected by the
 * calibration job SPEC (normalized): calibration_from_result() of the
 * variants waiting 0, X and 2X µs (job_spec_calibration_variant()) as
 * calibration_json() gives it (loadlab/calibration.h: "recovered_us",
 * "ratio", "ci_us", "paired", the 2X figures, "baseline_us", "runs",
 * "noise"), with "family" (SPEC's) and "runner" (the result's: native,
 * wine; or null). LL_EINVAL when SPEC is no calibration job, LL_EFORMAT
 * (with a message) when a variant is missing, invalid or has no warm
 * samples. The caller deletes *RET, untouched on failure.
 */
int calibration_compute(const cJSON *spec, const cJSON *result, cJSON **ret);

/*
 * Called once a task's result is stored: when the task belongs to a
 * calibration job, records calibration_compute() of RESULT, with "job_id",
 * "task_id", "result_id" and "at" (NOW_MS, RFC 3339), as agent AGENT_ID's
 * last calibration. Anything else is left alone. A failure is logged, not
 * returned: the result itself is stored either way.
 */
void calibration_note(struct store *store, long long agent_id, long long task_id, long long result_id,
		      const cJSON *result, long long now_ms);

#endif
