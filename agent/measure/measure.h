/*
 * measure.h - the load timer: warm runs (the column's figure: the fastest
 * of R runs at the highest priority the OS grants) and cold runs (the
 * office study's figures: wall time, page faults and reads after the
 * program's files were evicted from the OS cache). The pipeline and
 * `loadlab-agent time` call it; the OS specifics are in
 * measure/plat_measure.h, which says exactly how each number is taken.
 *
 *	const char *argv[] = {"/usr/lib/wine/wine64", "C:\\w\\main.exe", NULL};
 *	const char *files[] = {"/w/main.exe", "/w/lt0.dll", NULL};
 *	struct measure_program p[] = {{"default", {.argv = argv}, files}, ...};
 *	struct measure_options o = {.runs = 30, .warmup = 3, .seed = 1, .timeout_ms = 60000};
 *	cJSON *result;
 *	if (measure_warm(p, n, &o, &result) < 0) ... err_message() ...
 *
 * Both return 0 or a negative LL_E* code with a message (err.h); *RET is
 * untouched on failure, and the caller owns it on success. A program that
 * exits non-zero fails the measurement (LL_EIO, naming it, the run and the
 * code); one still running at the timeout is killed and fails it
 * (LL_ERANGE); a progress callback returning true cancels it
 * (LL_ESTATE). Whatever happens, the agent's own priority and CPUs are
 * restored before returning.
 *
 * Times are microseconds (doubles, nanosecond precision where the clock
 * has it) throughout the result.
 */
#ifndef LOADLAB_AGENT_MEASURE_H
#define LOADLAB_AGENT_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "loadlab/plat.h"

/* Most programs in one measurement, and most runs of each. */
#define MEASURE_MAX_PROGRAMS 64
#define MEASURE_MAX_RUNS 10000
#define MEASURE_MAX_WARMUP 1000
#define MEASURE_MAX_RERUNS 10
/* Bootstrap resamples behind every confidence interval (95 %). */
#define MEASURE_BOOTSTRAP_RESAMPLES 2000
/* Modified z-score beyond which a sample is flagged an outlier. */
#define MEASURE_OUTLIER_THRESHOLD 3.5

struct measure_program {                 /* one thing to time; everything borrowed */
	const char *name;                /* unique in a measurement: "default", "(floor)" */
	struct plat_spawn_options spawn; /* argv[0] a path (for a Windows program under Wine,
					   * {"/usr/lib/wine/wine64", "C:\\...\\main.exe", NULL}),
					   * env_add, cwd, stdout/stderr files (NULL: discarded) */
	const char *const *files;        /* NULL-terminated: the files it loads (exe + DLLs), evicted
					   * before a cold run and checked for residency; may be NULL
					   * for warm runs */
};

struct measure_options {
	int runs;             /* timed runs per program, 1..MEASURE_MAX_RUNS */
	int warmup;           /* untimed runs per program first, 0..MEASURE_MAX_WARMUP (warm only) */
	uint64_t seed;        /* the shuffles and the bootstrap: same seed, same order */
	long long timeout_ms; /* per run, > 0: a program still running is killed */
	int reruns;           /* warm only, 0..MEASURE_MAX_RERUNS: a run whose program
				  * exits non-zero is run again up to this many times before
				  * the measurement fails; every rerun is listed in the
				  * result's "reruns" ({"program", "run", "exit_code"}) */
	bool (*progress)(void *ctx, int percent); /* may be NULL; true cancels, as in pipeline.h */
	void *progress_ctx;
};

/* Warm: all PROGRAMS (the floor, the empty program, is one of them) in a
 * shuffled round-robin: every round a new shuffle of the programs (seeded),
 * each run once; W untimed rounds, then R timed ones. Result:
 *   {"method": {"kind": "warm", "clock", "timer_resolution_ns", "priority",
 *               "priority_read_back", "realtime", "cpu", "cpus_available",
 *               "spawn", "runs", "warmup", "seed", "timeout_ms",
 *               "bootstrap_resamples", "confidence": 0.95},
 *    "programs": {NAME: {"samples_us": [...in run order...],
 *                        "summary": <measure_summary_json>}},
 *    "order": [[names of timed round 0], ...],   (warm-up rounds not listed)
 *    "reruns": [{"program", "run", "exit_code"}...]} */
int measure_warm(const struct measure_program *programs, size_t count, const struct measure_options *o,
		 cJSON **ret);

/* Cold: R rounds, each over the programs in a new seeded shuffle; for each
 * program: evict its files (plat_measure_evict) and record whether that
 * worked and how many pages stayed, run it with counters, record the
 * pages of each file resident afterwards, then run it once more right
 * away (the warm check, same counters: a cold run should read from
 * storage, the warm one after it should not). Result:
 *   {"method": {...as warm, "kind": "cold", "eviction", "eviction_verified",
 *               "counters", "counters_reliable", "cold": all runs cold},
 *    "programs": {NAME: {"samples_us", "page_faults", "hard_faults",
 *        "soft_faults", "read_bytes", "read_ops", "read_chars" (one per run;
 *        -1 where the OS does not say), "resident_before_pages" (per run,
 *        all files; -1 unchecked), "cold_runs" (per run: evicted and, where
 *        checkable, nothing left resident), "cold": every run cold,
 *        "method": the eviction method, "note": why not cold (or ""),
 *        "summary": <measure_summary_json of samples_us>,
 *        "modules": [{"name": path, "pages", "resident_pages": [per run,
 *                     after it; -1 unknown]}],
 *        "warm_check": {"samples_us", "read_bytes", "read_ops",
 *                       "page_faults", "hard_faults", "soft_faults"}}},
 *    "order": [[names of round 0], ...]}
 * "cold" is never claimed where the eviction was unavailable or left
 * pages resident. o->warmup is not used. */
int measure_cold(const struct measure_program *programs, size_t count, const struct measure_options *o,
		 cJSON **ret);

/* The summary of SAMPLES_US[0..N) (N >= 1):
 *   {"n", "min_us", "median_us", "mean_us", "mad_us", "p90_us",
 *    "ci_median_us": [lo, hi], "ci_min_us": [lo, hi], "outliers": [indexes]}
 * with stats.h's definitions (median and p90 by type-7 interpolation, MAD
 * unscaled, 95 % percentile-bootstrap intervals from SEED, outliers by
 * modified z-score above MEASURE_OUTLIER_THRESHOLD). */
int measure_summary_json(const double *samples_us, size_t n, uint64_t seed, cJSON **ret);

/* ---- Internal to measure_warm.c and measure_cold.c (measure_common.c) ---- */

struct plat_measure_conditions;

/* Checks the programs (1..MEASURE_MAX_PROGRAMS, unique non-empty names,
 * an argv each) and options (bounds above); LL_EINVAL with a message. */
int measure_check(const struct measure_program *programs, size_t count, const struct measure_options *o);

/* The "method" object common to both kinds. */
int measure_method_json(const struct plat_measure_conditions *c, const struct measure_options *o,
			const char *kind, cJSON **ret);

/* A new random permutation of 0..N-1 into ORDER, from *STATE (advanced). */
void measure_shuffle(size_t *order, size_t n, uint64_t *state);

/* Adds an array of N numbers named NAME to OBJ; false when out of memory. */
bool measure_add_numbers(cJSON *obj, const char *name, const double *values, size_t n);

/* The rounds both timers share: between plat_measure_begin(C) and
 * plat_measure_end(C), ROUNDS rounds, each first reporting progress
 * (100 * round / ROUNDS; true cancels: LL_ESTATE), then drawing a new
 * shuffle of the programs (from o->seed) and calling RUN(CTX, program
 * index, round) for each in that order. Rounds from FIRST_LISTED on are
 * listed in ORDER_JSON (an array) as arrays of program names. After the
 * last round, progress 100 (cancellable too). Stops at RUN's first
 * failure and returns it. */
int measure_rounds(const struct measure_program *programs, size_t count, const struct measure_options *o,
		   size_t rounds, size_t first_listed, struct plat_measure_conditions *c, cJSON *order_json,
		   int (*run)(void *ctx, size_t program, size_t round), void *ctx);

/* measure_method_json() added to RESULT as "method"; *RET_METHOD borrows it. */
int measure_add_method(cJSON *result, const struct plat_measure_conditions *c,
		       const struct measure_options *o, const char *kind, cJSON **ret_method);

#endif
