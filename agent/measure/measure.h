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
 * exits non-zero is run again (o->reruns times at most, each listed in
 * "reruns"), then fails the measurement (LL_EIO, naming it, the run and
 * the code); one still running at the timeout is killed and fails it
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
/* Rounds: the runs are taken in 1..MEASURE_MAX_ROUNDS rounds, split as
 * evenly as possible (the first rounds take one more), a pause of
 * MEASURE_ROUND_GAP_MS between two rounds and, when there are warm-ups,
 * one untimed pass of every program at the start of each later round. */
#define MEASURE_MAX_ROUNDS 20
#define MEASURE_ROUND_GAP_MS 500
#define MEASURE_MAX_ROUND_GAP_MS 10000
/* Noise (plat_noise.h): a run's "other CPU" is the machine's busy CPU time
 * minus ours, over a window ending with the run and at least
 * MEASURE_NOISE_WINDOW_MS long (the OS counts in 10 ms ticks), as a
 * percentage of one CPU. Above MEASURE_NOISE_THRESHOLD_PCT the run is
 * flagged and taken again after a pause of one window, at most
 * MEASURE_NOISE_MAX_RETAKES times per program and measurement (a job may
 * ask for fewer: measure_options.max_retakes); a flagged run past that is
 * kept (and stays counted as flagged). */
#define MEASURE_NOISE_WINDOW_MS 200
#define MEASURE_NOISE_THRESHOLD_PCT 25.0
#define MEASURE_NOISE_MAX_RETAKES 10
#define MEASURE_NO_RETAKES (-1) /* measure_options.max_retakes: flag, never retake */
/* runs "auto" (warm): sweeps of `rounds` rounds, MEASURE_AUTO_STEP runs
 * per program per sweep (split across its rounds, at least one each),
 * until every program's median has a 95 % interval narrower than
 * precision * median, or the cap (o->runs) is reached. */
#define MEASURE_AUTO_STEP 10
/* paired_precision's rule stops no earlier than this many passes (unless
 * the cap is lower): it stops when the interval looks narrow, and at a
 * few sweeps the width is so noisy that the intervals it stops on cover
 * 88-90 % instead of 95 %; from 30 passes on they cover what the same
 * count fixed in advance does (docs/statistics.md, "Runs that stop when
 * they know enough"). */
#define MEASURE_PRECISION_MIN_PASSES 30

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
	int reruns;           /* 0..MEASURE_MAX_RERUNS: a run whose program exits non-zero
				  * is run again up to this many times before the
				  * measurement fails (a cold run evicts again first);
				  * every rerun is listed in the result's "reruns"
				  * ({"program", "run", "phase", "exit_code"}) */
	bool (*progress)(void *ctx, int percent); /* may be NULL; true cancels, as in pipeline.h */
	void *progress_ctx;
	int rounds;       /* 1..MEASURE_MAX_ROUNDS and <= runs (0: 1) */
	int round_gap_ms; /* the pause between two rounds, 1..MEASURE_MAX_ROUND_GAP_MS
				  * (0: MEASURE_ROUND_GAP_MS) */
	int max_retakes;  /* retakes of noisy runs per program, 1..MEASURE_NOISE_MAX_RETAKES,
				  * MEASURE_NO_RETAKES for none (0: MEASURE_NOISE_MAX_RETAKES) */
	bool auto_runs;   /* warm only: runs is the cap; stop at PRECISION (MEASURE_AUTO_STEP) */
	double precision; /* > 0 with auto_runs: the median's 95 % interval width / median */
	/* Runs until a precision (job's warm.precision_pct, issue 40): with
	 * auto_runs, stop once every variant's paired 95 % interval against
	 * the baseline is within +-paired_precision (a share: 0.01 is 1 %),
	 * or max_seconds of timed passes are spent (checked after each sweep
	 * of MEASURE_AUTO_STEP passes, the precision from
	 * MEASURE_PRECISION_MIN_PASSES on), or the runs (the cap); the precision
	 * rule then replaces the median's. Programs [0, paired_count) are the
	 * variants, program 0 the baseline; those after (the floor) are timed
	 * but not judged. The paired interval: per timed pass k, the ratio
	 * x_ik / x_0k (the same pass ran both); the 95 % percentile-bootstrap
	 * interval of the ratios' median (MEASURE_BOOTSTRAP_RESAMPLES); its
	 * half-width is (hi - lo) / 2. */
	double paired_precision;
	double max_seconds;
	size_t paired_count;
	long long companion_pid; /* a process the programs wait on while they run (Wine's
				  * wineserver), measured beside them on the agent's CPU
				  * (plat_measure_companion); 0: none */
};

/* Warm: all PROGRAMS (the floor, the empty program, is one of them) in a
 * shuffled round-robin: every pass a new shuffle of the programs (seeded),
 * each run once; W untimed passes, then the timed ones, in o->rounds
 * rounds (MEASURE_ROUND_GAP_MS apart); runs during which other processes
 * were busy are flagged and taken again (MEASURE_NOISE_*). Result:
 *   {"method": {"kind": "warm", "clock", "timer_resolution_ns", "priority",
 *               "priority_read_back", "realtime", "cpu", "cpus_available",
 *               "spawn", "runs", "warmup", "seed", "timeout_ms",
 *               "bootstrap_resamples", "confidence": 0.95, "rounds",
 *               "auto": bool, "companion": {"pid", "pinned", "nice"} | null,
 *               "run_counters": <measure_counters_method_json's>},
 *    "programs": {NAME: {"runs", "samples_us": [...rounds in order, each in run order...],
 *                        "round_sizes": [n1, ...] (sum: samples_us' length),
 *                        "noise": <measure_sample_json's>,
 *                        "auto": {...} (runs "auto" only),
 *                        "run_counters": <measure_counters_json's>,
 *                        "summary": <measure_summary_json>}},
 *    "noise": <measure_noise_method_json>,
 *    "order": [[names of timed pass 0], ...],   (untimed passes not listed)
 *    "reruns": [{"program", "run", "phase": "timed"|"warm-up", "exit_code"}...]} */
int measure_warm(const struct measure_program *programs, size_t count, const struct measure_options *o,
		 cJSON **ret);

/* Cold: R passes, each over the programs in a new seeded shuffle, in
 * o->rounds rounds and with noise as warm (o->auto_runs refused); for each
 * program: evict its files (plat_measure_evict) and record whether that
 * worked and how many pages stayed, run it with counters, record the
 * pages of each file resident afterwards, then run it once more right
 * away (the warm check, same counters: a cold run should read from
 * storage, the warm one after it should not). Result:
 *   {"method": {...as warm, "kind": "cold", "eviction", "eviction_verified",
 *               "counters", "counters_reliable", "cold": all runs cold,
 *               "run_counters"},
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
 *                       "page_faults", "hard_faults", "soft_faults"},
 *        "run_counters": <measure_counters_json's>, of the cold runs}},
 *    "noise", "order": [[names of pass 0], ...],
 *    "reruns": [{"program", "run", "phase": "cold"|"warm check", "exit_code"}...]}
 * A cold run retaken after a non-zero exit evicts the files again first;
 * a warm check is retaken as it is. "cold" is never claimed where the
 * eviction was unavailable or left pages resident. o->warmup is not used. */
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
/* O's pause between two rounds in ms: its round_gap_ms, else MEASURE_ROUND_GAP_MS. */
int measure_round_gap_ms(const struct measure_options *o);

/* The "method" object common to both kinds. */
int measure_method_json(const struct plat_measure_conditions *c, const struct measure_options *o,
			const char *kind, cJSON **ret);

/* A new random permutation of 0..N-1 into ORDER, from *STATE (advanced). */
void measure_shuffle(size_t *order, size_t n, uint64_t *state);

/* Adds an array of N numbers named NAME to OBJ; false when out of memory. */
bool measure_add_numbers(cJSON *obj, const char *name, const double *values, size_t n);

/* What measure_sample() took: per program, CAPACITY slots of which TAKEN
 * are filled, in round order; the noise of each. */
struct measure_sampled {
	size_t count, capacity, taken;
	double *samples_us;     /* [program][capacity] */
	double *other_cpu_pct;  /* [program][capacity]; -1 unknown */
	double *disk_ios;       /* [program][capacity]; -1 unknown */
	int *flagged, *retaken; /* [program] */
	int max_retakes;        /* what o->max_retakes came to: 0..MEASURE_NOISE_MAX_RETAKES */
	size_t *round_sizes;    /* [rounds] */
	size_t rounds;
	bool reached;        /* auto: the precision was reached */
	const char *stopped; /* paired: "precision", "max_seconds" or "max_runs" */
	double seconds;      /* paired: the timed passes' wall time */
	double *paired_ci;   /* paired: [program][2], the ratio's interval; NAN where not judged */
	bool noise_ok;
	char noise_source[200];
};

/* The timed runs both timers share: between plat_measure_begin(C) and
 * plat_measure_end(C), untimed passes (o->warmup, warm only: WITH_WARMUP),
 * then the rounds and their passes as described above (MEASURE_ROUND_GAP_MS,
 * MEASURE_NOISE_*, MEASURE_AUTO_STEP); every pass a new shuffle of the
 * programs (from o->seed), RUN(CTX, program, slot, &us) for each, SLOT
 * the sample's index (a retake runs the same slot again) or -1 for an
 * untimed run. Progress before each pass (true cancels: LL_ESTATE) and
 * 100 at the end. Timed passes are listed in ORDER_JSON (an array) as
 * arrays of names. Fills *RET (release with measure_sampled_release, also
 * on failure); stops at RUN's first failure and returns it. */
int measure_sample(const struct measure_program *programs, size_t count, const struct measure_options *o,
		   bool with_warmup, struct plat_measure_conditions *c, cJSON *order_json,
		   int (*run)(void *ctx, size_t program, long slot, double *ret_us), void *ctx,
		   struct measure_sampled *ret);

void measure_sampled_release(struct measure_sampled *s);

/* Adds to the program object OBJ "runs", "round_sizes", "noise":
 * {"other_cpu_pct": median over the kept runs (null unknown),
 *  "max_other_cpu_pct", "disk_ios": sum over them (null unknown),
 *  "flagged", "retaken"} and, with o->auto_runs, "auto": {"precision",
 * "max_runs", "runs_taken", "reached"} and, with o->paired_precision,
 * in it "precision_pct", "max_seconds", "seconds", "stopped" and, for a
 * variant other than the baseline, "paired_ratio_ci": [lo, hi] and
 * "paired_half_width_pct". */
int measure_sampled_json(const struct measure_sampled *s, size_t program, const struct measure_options *o,
			 cJSON *obj);

/* Adds to RESULT "noise": {"source", "threshold_other_cpu_pct",
 * "max_retakes", "window_ms"}, or {"source": "unavailable: <why>"}. */
int measure_noise_method_json(const struct measure_sampled *s, cJSON *result);

/* measure_method_json() added to RESULT as "method"; *RET_METHOD borrows it. */
int measure_add_method(cJSON *result, const struct plat_measure_conditions *c,
		       const struct measure_options *o, const char *kind, cJSON **ret_method);

struct plat_measure_counters;

/* The run counters (plat_measure.h, PLAT_COUNTER_*) of every program and
 * timed run, beside samples_us: -1 where a run did not count one. */
struct measure_counters {
	size_t programs, capacity;
	double *values; /* [program][counter][capacity] */
};

int measure_counters_init(struct measure_counters *c, size_t programs, size_t capacity);
void measure_counters_release(struct measure_counters *c);
/* Program PROGRAM's run in SLOT counted K (a retake overwrites it). */
void measure_counters_put(struct measure_counters *c, size_t program, size_t slot,
			  const struct plat_measure_counters *k);
/* Adds to the program object OBJ "run_counters": {"counters": [names
 * counted in all TAKEN runs], "not_counted": {name: why}, and per counted
 * name its TAKEN values in samples_us' order}. A counter not counted has
 * no series: never a zero for what was not counted. */
int measure_counters_json(const struct measure_counters *c, size_t program, size_t taken, cJSON *obj);
/* Adds to METHOD "run_counters": {"source", "counters": [counted for
 * every program], "not_counted": {name: why}}. */
int measure_counters_method_json(const struct measure_counters *c, size_t taken, cJSON *method);

/* One run of P, as both timers take it: PREPARE(CTX) first when not NULL
 * (the cold timer evicts there), then plat_measure_run(WITH_COUNTERS) into
 * *RET. While the program exits non-zero the run is taken again, PREPARE
 * included, up to o->reruns times, each listed in RERUNS (an array) as
 * {"program", "run": RUN + 1, "phase": PHASE, "exit_code"}; past that a
 * non-zero exit fails: LL_EIO, naming the program, the code, PHASE
 * ("timed", "warm-up", "cold", "warm check") and the run. A start that
 * failed (plat_measure_run()'s LL_EIO; Wine's CreateProcess now and then
 * fails with its internal error 1359) is taken again the same way, listed
 * with "start_error" (the message) instead of "exit_code", and past
 * o->reruns returned as it is. PREPARE's failures and plat_measure_run()'s
 * others (a timeout: LL_ERANGE) are returned as they are, never rerun. */
int measure_run_rerunning(const struct measure_program *p, const struct measure_options *o, int run,
			  const char *phase, bool with_counters, int (*prepare)(void *ctx), void *ctx,
			  cJSON *reruns, struct plat_measure_counters *ret);

#endif
