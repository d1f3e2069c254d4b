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

/* Earlier calibrations that widen one's interval: at most this many, the
 * newest (docs/statistics.md, "Intervals across jobs"), and at least
 * CALIBRATION_MIN_HISTORY. */
#define CALIBRATION_HISTORY_JOBS 20
#define CALIBRATION_MIN_HISTORY 3

/*
 * Says the scope of CALIBRATION's interval (calibration_compute()'s
 * object, within-job) from HISTORY, an array of the same agent's earlier
 * calibrations of the same injected cost, family and runner (each
 * within-job, as calibration_compute() gave it): with at least
 * CALIBRATION_MIN_HISTORY of them whose "ci_us" is an interval, the
 * DerSimonian-Laird tau^2 of their "recovered_us" (microseconds, each
 * weighed by the variance its own 95 % interval implies:
 * stats_between_variance()) widens each half of the interval around
 * recovered_us to sqrt(h^2 + z^2 tau^2) (stats_widen_half_width(), one
 * job's shift): "interval_us" becomes that, "interval_scope"
 * "within-and-between-jobs", and "between_jobs" {"jobs": k, "sd_us": tau}
 * is added; the same for the 2X cost from "recovered_2x_us" and
 * "ci_2x_us" ("interval_2x_us", "between_jobs"."sd_2x_us"). "ci_us" and
 * "ci_2x_us" stay the within-job intervals. Otherwise "interval_scope"
 * stays "within-job" and "between_jobs" is {"jobs": k} (k < 3 usable).
 * LL_ENOMEM.
 */
int calibration_across_jobs(cJSON *calibration, const cJSON *history);

/*
 * Called once a task's result is stored: when the task belongs to a
 * calibration job, records calibration_compute() of RESULT, with "job_id",
 * "task_id", "result_id" and "at" (NOW_MS, RFC 3339), as agent AGENT_ID's
 * last calibration, its interval widened by calibration_across_jobs() of
 * the agent's earlier ones (kept within-job in the store). Anything else
 * is left alone. A failure is logged, not
 * returned: the result itself is stored either way.
 */
void calibration_note(struct store *store, long long agent_id, long long task_id, long long result_id,
		      const cJSON *result, long long now_ms);

#endif
