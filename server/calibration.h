/*
 * calibration.h - an agent's calibration, from its result of a calibration
 * job (a job whose spec has "calibration": {"delay_us": X} and variants
 * waiting 0, X and 2X µs in the first library's entry point:
 * docs/rest-bodies.md, job_spec.h). The daemon keeps each agent's last
 * one and shows it as "last_calibration" in GET /api/v1/agents.
 */
#ifndef LOADLAB_SERVER_CALIBRATION_H
#define LOADLAB_SERVER_CALIBRATION_H

#include "store.h"

#include <cjson/cJSON.h>

/* Resamples behind the interval of the recovered cost. */
#define CALIBRATION_RESAMPLES 2000

/*
 * What RESULT (a task's result body) recovers of the cost injected by the
 * calibration job SPEC (normalized). From the warm samples of the variants
 * waiting 0, X and 2X µs:
 *   {"injected_us": X,
 *    "recovered_us": median(X) - median(0),
 *    "ratio": recovered_us / X,
 *    "ci_us": [LOW, HIGH] | null   95 % bootstrap interval of recovered_us
 *                                  (rounds resampled, then runs within them;
 *                                  stats_bootstrap_contrast_ci()), null when
 *                                  it cannot be had,
 *    "recovered_2x_us": (median(2X) - median(0)) / 2,
 *    "ratio_2x": recovered_2x_us / X,
 *    "baseline_us": median(0),
 *    "runs": warm runs of the 0 variant,
 *    "noise": {"max_other_cpu_pct": the largest of the three variants'
 *              warm.noise.max_other_cpu_pct (null when none is known),
 *              "flagged", "retaken": their sums},
 *    "family", "runner": the result's "runner" (native, wine; or null)}
 * LL_EINVAL when SPEC is no calibration job, LL_EFORMAT (with a message)
 * when a variant is missing, invalid or has no warm samples. The caller
 * deletes *RET, untouched on failure.
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
