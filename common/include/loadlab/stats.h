/*
 * stats.h - the statistics behind every loadlab figure.
 *
 * Load times are skewed, with a hard floor and a long tail of
 * interference, so the reports lean on order statistics: the minimum (the
 * column's figure), the median, the median absolute deviation, and
 * bootstrap confidence intervals, which assume no distribution. Whether two
 * variants differ is decided by the Mann-Whitney U test.
 *
 * Conventions: samples are doubles in any unit; functions never modify
 * their input; LL_EINVAL for an empty sample or a bad argument; outputs are
 * untouched on failure. Pure C (libm only) so that the agent's Windows
 * builds carry the same code.
 */
#ifndef LOADLAB_STATS_H
#define LOADLAB_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATS_MAX_SAMPLES 100000

struct stats_summary {
	size_t n;
	double min, max, mean, median;
	double mad;      /* median absolute deviation from the median, unscaled */
	double stddev;   /* sample standard deviation (n - 1); 0 when n == 1 */
	double p10, p90; /* quantiles, as stats_quantile() */
};

/* Fills *RET with the summary of X[0..N). */
int stats_summarize(const double *x, size_t n, struct stats_summary *ret);

/* The Q-quantile (0 <= Q <= 1) of X by linear interpolation between order
 * statistics: h = (n - 1) Q (Hyndman & Fan type 7, R's default). */
int stats_quantile(const double *x, size_t n, double q, double *ret);

/* stats_quantile() of S[0..N), N > 0 values already in ascending order,
 * without checks or a copy. */
double stats_quantile_sorted(const double *s, size_t n, double q);

/* stats_summarize() for a sample already checked and sorted: X[0..N) in
 * the order measured, SORTED the same N > 0 values ascending. Fills every
 * field of *RET but mad, which it sets to 0: the caller that has the
 * absolute deviations in order adds it. */
void stats_summarize_sorted(const double *x, const double *sorted, size_t n, struct stats_summary *ret);

/* Median of X (the 0.5 quantile). */
int stats_median(const double *x, size_t n, double *ret);

enum stats_statistic { STATS_MEDIAN, STATS_MIN, STATS_MEAN };

/* The next word of splitmix64 (Steele, Lea and Flood) from *STATE
 * (advanced): small, fast, and good enough to draw resample indexes and
 * shuffle programs; seeded so that reports are reproducible. */
uint64_t stats_random_next(uint64_t *state);

/* A seed from TEXT: 64-bit FNV-1a's steps and prime, but from the offset
 * 1469598103934665603 (FNV publishes 14695981039346656037, a digit more).
 * Kept as every report and job so far was made with it: the same text
 * gives the same seed, so a report, or a job's shuffles, are the same every
 * time they are made (tests/integration/test_compare_pinned). */
uint64_t stats_seed_of(const char *text);

/* Percentile bootstrap confidence interval of STATISTIC of X at LEVEL (for
 * example 0.95) from RESAMPLES resamples (100..100000) drawn with a
 * generator seeded by SEED, so a report is reproducible. For the minimum
 * the interval says what the data can: no resample goes below the observed
 * minimum, so that is (almost always) the interval's lower end. */
int stats_bootstrap_ci(const double *x, size_t n, enum stats_statistic statistic, double level, int resamples,
		       uint64_t seed, double *ret_low, double *ret_high);

/* Bootstrap confidence interval of STATISTIC(Y) / STATISTIC(X), resampling
 * X and Y independently: the ratio of a candidate Y to a baseline X. */
int stats_bootstrap_ratio_ci(const double *x, size_t nx, const double *y, size_t ny,
			     enum stats_statistic statistic, double level, int resamples, uint64_t seed,
			     double *ret_low, double *ret_high);

/* A sample measured in rounds (runs separated in time, each its own
 * shuffled order): X[0..N) holds ROUNDS rounds concatenated in round
 * order, ROUND_SIZES[0..ROUNDS) their sizes (each > 0, summing to N).
 * ROUNDS 0 (ROUND_SIZES NULL): a sample without rounds. */
struct stats_sample {
	const double *x;
	size_t n;
	const uint32_t *round_sizes;
	size_t rounds;
};

/* Most rounds a sample may have. */
#define STATS_MAX_ROUNDS 1000

/*
 * Bootstrap confidence interval of the contrast
 *   (STATISTIC(Y) - STATISTIC(Y_FLOOR)) / (STATISTIC(X) - STATISTIC(X_FLOOR))
 * of a candidate Y and a baseline X, each over its floor (X_FLOOR and
 * Y_FLOOR both NULL: the ratio STATISTIC(Y) / STATISTIC(X)). Each sample is
 * resampled on its own. A sample with rounds is resampled hierarchically
 * (rounds are the unit that varies between runs): ROUNDS rounds drawn with
 * replacement, then, in each drawn round, as many samples as it holds drawn
 * with replacement from it, pooled; a sample without rounds draws N samples
 * with replacement. Per resample X, X_FLOOR, Y, Y_FLOOR are drawn in that
 * order from one stream seeded by SEED. Resamples whose denominator is not
 * above 0 are left out: LL_EINVAL when more than half are, or for a sample
 * whose rounds do not add up (sizes 0, a sum other than N, more than
 * STATS_MAX_ROUNDS). STATISTIC: median or minimum.
 */
int stats_bootstrap_contrast_ci(const struct stats_sample *x, const struct stats_sample *x_floor,
				const struct stats_sample *y, const struct stats_sample *y_floor,
				enum stats_statistic statistic, double level, int resamples, uint64_t seed,
				double *ret_low, double *ret_high);

/*
 * The same draws as stats_bootstrap_contrast_ci() (the same SEED gives the
 * same resamples), for the contrast of the two sides each divided by its
 * floor:
 *   (STATISTIC(Y) / STATISTIC(Y_FLOOR)) / (STATISTIC(X) / STATISTIC(X_FLOOR))
 * so a factor shared by a side's variant and its floor (a whole run made
 * slower) cancels. Both floors are required (LL_EINVAL otherwise).
 * Resamples where a floor's or the baseline's figure is not above 0 are
 * left out; LL_EINVAL when more than half are.
 */
int stats_bootstrap_floor_ratio_ci(const struct stats_sample *x, const struct stats_sample *x_floor,
				   const struct stats_sample *y, const struct stats_sample *y_floor,
				   enum stats_statistic statistic, double level, int resamples, uint64_t seed,
				   double *ret_low, double *ret_high);

/*
 * The ratios of two paired samples, RET[k] = A->x[k] / B->x[k] for k in
 * 0..A->n: A and B taken in the same passes (the agent's warm timer runs
 * every program once per pass and writes it into that pass's slot, so a
 * variant's sample k and its floor's sample k were taken moments apart).
 * Paired means the same count (> 0) and the same rounds (both without, or
 * the same sizes); LL_EINVAL when they are not, when a sample or its rounds
 * are bad (as stats_bootstrap_contrast_ci()), or when a value of B is not
 * above 0. RET (A->n values) is untouched on failure.
 */
int stats_paired_ratios(const struct stats_sample *a, const struct stats_sample *b, double *ret);

/* STATISTIC of each of S's rounds into RET[0..S->rounds) (S has rounds);
 * LL_EINVAL as stats_bootstrap_contrast_ci(). */
int stats_round_statistics(const struct stats_sample *s, enum stats_statistic statistic, double *ret);

/* Mann-Whitney U test, two-sided. *RET_U is U for X (the number of pairs
 * with x > y, ties counting one half); *RET_P the p-value by the normal
 * approximation with tie correction and continuity correction (as R's
 * wilcox.test(exact = FALSE, correct = TRUE)). When every value is tied,
 * p is 1. */
int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, double *ret_u, double *ret_p);

/* The last step of stats_mann_whitney(), for callers that rank the two
 * samples their own way (the daemon merges samples it keeps sorted): from
 * the sum of X's ranks (ties averaged) and sum(t^3 - t) over the runs of
 * ties, U for X and the p-value, as stats_mann_whitney() gives them. */
void stats_mann_whitney_from_ranks(size_t nx, size_t ny, double rank_sum_x, double tie_term, double *ret_u,
				   double *ret_p);

/* Flags outliers by the modified z-score M = 0.6745 (x - median) / MAD
 * (Iglewicz and Hoaglin): RET_FLAGS[i] is set when |M| > THRESHOLD (3.5 is
 * customary). With MAD == 0 nothing is flagged. *RET_COUNT counts flags. */
int stats_outliers(const double *x, size_t n, double threshold, bool *ret_flags, size_t *ret_count);

/*
 * Between jobs: what varies from one job of the same cell to the next
 * beyond what one job's own interval shows (docs/statistics.md, "Intervals
 * across jobs"). A random-effects model: job i's figure is y_i = mu_g +
 * u_i + e_i, u_i ~ (0, tau^2) its job's own shift, e_i ~ (0, v_i) the
 * within-job error that its bootstrap interval measures, mu_g the mean of
 * its group (jobs that measure the same thing: one spec, one series).
 */

/* One job's figure (on the scale the spread is estimated on: the log of a
 * ratio, microseconds of a cost), the variance of its within-job error
 * and its group. */
struct stats_job_estimate {
	double value;
	double variance; /* > 0; stats_variance_of_interval() */
	unsigned group;
};

/* z of a two-sided 95 % normal interval. */
#define STATS_Z95 1.959963984540054

/* The variance of a figure whose 95 % interval is LOW .. HIGH, read as a
 * normal interval: ((HIGH - LOW) / (2 z))^2, floored at FLOOR (so that a
 * degenerate interval, every resample alike, does not weigh infinitely).
 * LL_EINVAL when HIGH < LOW or a value is not finite. */
int stats_variance_of_interval(double low, double high, double floor, double *ret);

/*
 * The DerSimonian-Laird method-of-moments estimate of tau^2 from the K
 * jobs JOBS, each group with its own mean (a categorical moderator: Q is
 * summed within groups, df = K - G, C = sum over groups of
 * (sum w - sum w^2 / sum w), w = 1 / variance; tau^2 = max(0, (Q - df) / C)).
 * *RET_DF gets df. LL_EINVAL when df < 2 (fewer than 3 jobs in one group:
 * too few to tell anything), a variance is not above 0, or a value is not
 * finite.
 */
int stats_between_variance(const struct stats_job_estimate *jobs, size_t k, double *ret_tau2, size_t *ret_df);

/* A half-width H (of a normal-theory interval at Z) widened by COPIES
 * independent between-job shifts of variance TAU2: sqrt(H^2 + Z^2 COPIES
 * TAU2). A negative H (a percentile interval's end on the wrong side of
 * its figure) counts as 0. COPIES: 2 for the ratio of two jobs, 1 for one
 * job's figure. */
double stats_widen_half_width(double h, double tau2, double copies, double z);

#endif
