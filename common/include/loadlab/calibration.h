/*
 * calibration.h - the known-effect self-test's figures (issue 12), one
 * computation for `loadlab-agent calibrate` and the daemon's per-agent
 * calibration: from a result whose three variants waited 0, X and 2X µs in
 * the first library's entry point, how much of X the timer recovered, its
 * 95 % interval and the noise the runs saw.
 *
 * Paired by pass when it can be: the agent's warm timer takes samples in
 * passes, each running every program once in a fresh shuffle and writing it
 * into that pass's slot of its samples_us (a noise retake stays in the
 * slot), so sample k of the X variant and sample k of the 0 variant were
 * taken moments apart. Their difference d_k = x_k - z_k cancels any drift
 * slower than a pass; the recovered cost is median(d_k), its interval a
 * seeded percentile bootstrap of the d_k (rounds drawn, then passes within
 * them, when there are CALIBRATION_MIN_ROUNDS rounds or more; passes alone
 * otherwise). Samples pair when the three variants have the same count and
 * the same rounds. When they do not (another writer, runs "auto" stopping
 * each variant at its own count), the figure is the difference of the
 * medians, median(X) - median(0), its interval from resampling each
 * variant on its own (the same rule for rounds): "paired" says which.
 */
#ifndef LOADLAB_CALIBRATION_H
#define LOADLAB_CALIBRATION_H

#include <cjson/cJSON.h>

#include <stdbool.h>
#include <stddef.h>

/* Resamples behind each interval, and the generator's seed: the same
 * result always gives the same interval. */
#define CALIBRATION_RESAMPLES 2000
#define CALIBRATION_SEED 20261201u
/* Rounds from which the interval resamples rounds, then passes. */
#define CALIBRATION_MIN_ROUNDS 3

/* What one delayed variant recovered over the undelayed one. */
struct calibration_cost {
	double injected_us;     /* X, or 2X */
	double recovered_us;    /* median(d_k) paired, else median(v) - median(0) */
	double ratio;           /* recovered_us / injected_us */
	bool have_interval;     /* false when the bootstrap could not give one */
	double low_us, high_us; /* its 95 % interval */
};

struct calibration {
	double injected_us;              /* X */
	bool paired;                     /* both costs paired by pass */
	double median_us[3];             /* of the variants waiting 0, X, 2X */
	struct calibration_cost cost[2]; /* the X variant's, the 2X variant's (not halved) */
	size_t runs;                     /* warm samples of the 0 variant */
	size_t rounds;                   /* its rounds (0: none recorded or bad) */
	/* The noise: the largest of the three variants' warm.noise.
	 * max_other_cpu_pct (-1 when none is known), and the sums of their
	 * "flagged" and "retaken". */
	double max_other_cpu_pct;
	double flagged, retaken;
};

/*
 * Fills *RET from RESULT (a task's result body: "variants"[] with "name",
 * "valid" and "warm": {"samples_us", "round_sizes", "noise"}) for the
 * variants named VARIANTS[0], [1], [2], which waited 0, INJECTED_US and
 * twice that. Round sizes that are missing or do not add up to the samples
 * count as no rounds. LL_EINVAL when INJECTED_US is not in
 * 1..JOB_SPEC_MAX_CALIBRATION_DELAY_US (job_spec.h) or a name is NULL; LL_EFORMAT (the message
 * names the variant) when a variant is missing, invalid, or has no warm
 * samples or one that is no finite number; LL_ENOMEM. *RET is untouched on
 * failure.
 */
int calibration_from_result(const cJSON *result, const char *const variants[3], double injected_us,
			    struct calibration *ret);

/*
 * C as the JSON the daemon keeps per agent (docs/rest-bodies.md, AGENT's
 * CALIBRATION, without "family", "runner" and the ids, which the caller
 * adds): {"injected_us", "recovered_us", "ratio", "ci_us": [low, high] |
 * null, "recovered_2x_us" (the 2X variant's cost halved), "ratio_2x",
 * "ci_2x_us" (its interval halved) | null, "baseline_us" (median of the 0
 * variant), "runs", "paired", "interval_scope": "within-job",
 * "interval_us" and "interval_2x_us" (ci_us and ci_2x_us again: the
 * interval of that scope, which the daemon widens by what varies between
 * an agent's calibrations, server/calibration.h), "noise":
 * {"max_other_cpu_pct" | null, "flagged", "retaken"}}. LL_ENOMEM; the
 * caller deletes *RET.
 */
int calibration_json(const struct calibration *c, cJSON **ret);

#endif
