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

#endif
