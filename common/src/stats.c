#include "loadlab/stats.h"

#include "loadlab/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int check_sample(const double *x, size_t n)
{
	if (!x || n == 0)
		return err_set(LL_EINVAL, "A statistic needs at least one sample.");
	if (n > STATS_MAX_SAMPLES)
		return err_set(LL_ERANGE, "At most %d samples.", STATS_MAX_SAMPLES);
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return err_set(LL_EINVAL, "Sample %zu is not a finite number.", i);
	return 0;
}

static double *sorted_copy(const double *x, size_t n)
{
	double *s = malloc(n * sizeof(*s));

	if (s) {
		memcpy(s, x, n * sizeof(*s));
		qsort(s, n, sizeof(*s), compare_doubles);
	}
	return s;
}

double stats_quantile_sorted(const double *s, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return s[n - 1];
	return s[lo] + (h - (double)lo) * (s[lo + 1] - s[lo]);
}

int stats_quantile(const double *x, size_t n, double q, double *ret)
{
	double *s;
	int rc = check_sample(x, n);

	if (rc < 0)
		return rc;
	if (!(q >= 0 && q <= 1))
		return err_set(LL_EINVAL, "A quantile must be between 0 and 1.");
	if (!(s = sorted_copy(x, n)))
		return LL_ENOMEM;
	*ret = stats_quantile_sorted(s, n, q);
	free(s);
	return 0;
}

int stats_median(const double *x, size_t n, double *ret)
{
	return stats_quantile(x, n, 0.5, ret);
}

void stats_summarize_sorted(const double *x, const double *sorted, size_t n, struct stats_summary *ret)
{
	struct stats_summary out = {0};
	double sum = 0, squares = 0;

	out.n = n;
	out.min = sorted[0];
	out.max = sorted[n - 1];
	out.median = stats_quantile_sorted(sorted, n, 0.5);
	out.p10 = stats_quantile_sorted(sorted, n, 0.10);
	out.p90 = stats_quantile_sorted(sorted, n, 0.90);
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	out.mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		squares += (x[i] - out.mean) * (x[i] - out.mean);
	out.stddev = n > 1 ? sqrt(squares / (double)(n - 1)) : 0;
	*ret = out;
}

int stats_summarize(const double *x, size_t n, struct stats_summary *ret)
{
	struct stats_summary out;
	double *s, *dev;
	int rc = check_sample(x, n);

	if (rc < 0)
		return rc;
	if (!(s = sorted_copy(x, n)))
		return LL_ENOMEM;
	if (!(dev = malloc(n * sizeof(*dev)))) {
		free(s);
		return LL_ENOMEM;
	}
	stats_summarize_sorted(x, s, n, &out);
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(x[i] - out.median);
	qsort(dev, n, sizeof(*dev), compare_doubles);
	out.mad = stats_quantile_sorted(dev, n, 0.5);
	free(s);
	free(dev);
	*ret = out;
	return 0;
}

uint64_t stats_random_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t stats_seed_of(const char *text)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *text; text++)
		h = (h ^ (unsigned char)*text) * 1099511628211ULL;
	return h;
}

/* An index in [0, n): the high 64 bits of the 128-bit product of a random
 * word and N (Lemire's multiply-shift; biased by at most n / 2^64,
 * negligible for n <= STATS_MAX_SAMPLES). Computed from 32-bit halves so
 * that 32-bit targets, which have no 128-bit integers, give the same
 * draws. */
static size_t random_index(uint64_t *state, size_t n)
{
	uint64_t r = stats_random_next(state), m = (uint64_t)n;
	uint64_t r_lo = r & 0xffffffffu, r_hi = r >> 32, m_lo = m & 0xffffffffu, m_hi = m >> 32;
	uint64_t cross = (r_lo * m_lo >> 32) + (r_hi * m_lo & 0xffffffffu) + r_lo * m_hi;

	return (size_t)(r_hi * m_lo >> 32) + (size_t)(r_hi * m_hi) + (size_t)(cross >> 32);
}

/* Moves the K-th smallest of A[0..N) to A[K] (Hoare's selection, expected
 * linear time): smaller values before it, larger after. */
static void select_kth(double *a, size_t n, size_t k)
{
	size_t left = 0, right = n - 1;

	while (left < right) {
		double pivot = a[left + (right - left) / 2];
		size_t i = left, j = right;
		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				double t = a[i];
				a[i] = a[j];
				a[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			right = j;
		else if (k >= i)
			left = i;
		else
			return;
	}
}

/* The type-7 median of A (reordered), without a full sort. */
static double median_in_place(double *a, size_t n)
{
	size_t lo = (n - 1) / 2;
	double next;

	select_kth(a, n, lo);
	if (n % 2)
		return a[lo];
	next = a[lo + 1];
	for (size_t i = lo + 2; i < n; i++)
		if (a[i] < next)
			next = a[i];
	return (a[lo] + next) / 2;
}

static double statistic_of(double *scratch, size_t n, enum stats_statistic statistic)
{
	double v = 0;

	switch (statistic) {
	case STATS_MIN:
		v = scratch[0];
		for (size_t i = 1; i < n; i++)
			if (scratch[i] < v)
				v = scratch[i];
		return v;
	case STATS_MEAN:
		for (size_t i = 0; i < n; i++)
			v += scratch[i];
		return v / (double)n;
	case STATS_MEDIAN:
	default:
		return median_in_place(scratch, n);
	}
}

static double resampled(const double *x, size_t n, double *scratch, enum stats_statistic statistic,
			uint64_t *state)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = x[random_index(state, n)];
	return statistic_of(scratch, n, statistic);
}

static int check_bootstrap(double level, int resamples)
{
	if (!(level > 0 && level < 1))
		return err_set(LL_EINVAL, "A confidence level must be between 0 and 1.");
	if (resamples < 100 || resamples > 100000)
		return err_set(LL_ERANGE, "Resamples must be 100 to 100000.");
	return 0;
}

static int percentile_interval(double *values, int count, double level, double *ret_low, double *ret_high)
{
	qsort(values, (size_t)count, sizeof(*values), compare_doubles);
	*ret_low = stats_quantile_sorted(values, (size_t)count, (1 - level) / 2);
	*ret_high = stats_quantile_sorted(values, (size_t)count, 1 - (1 - level) / 2);
	return 0;
}

int stats_bootstrap_ci(const double *x, size_t n, enum stats_statistic statistic, double level, int resamples,
		       uint64_t seed, double *ret_low, double *ret_high)
{
	double *scratch, *values;
	uint64_t state = seed;
	int rc;

	if ((rc = check_sample(x, n)) < 0 || (rc = check_bootstrap(level, resamples)) < 0)
		return rc;
	scratch = malloc(n * sizeof(*scratch));
	values = malloc((size_t)resamples * sizeof(*values));
	if (!scratch || !values) {
		free(scratch);
		free(values);
		return LL_ENOMEM;
	}
	for (int r = 0; r < resamples; r++)
		values[r] = resampled(x, n, scratch, statistic, &state);
	rc = percentile_interval(values, resamples, level, ret_low, ret_high);
	free(scratch);
	free(values);
	return rc;
}

int stats_bootstrap_ratio_ci(const double *x, size_t nx, const double *y, size_t ny,
			     enum stats_statistic statistic, double level, int resamples, uint64_t seed,
			     double *ret_low, double *ret_high)
{
	double *scratch, *values;
	uint64_t state = seed;
	int rc, kept = 0;

	if ((rc = check_sample(x, nx)) < 0 || (rc = check_sample(y, ny)) < 0 ||
	    (rc = check_bootstrap(level, resamples)) < 0)
		return rc;
	scratch = malloc((nx > ny ? nx : ny) * sizeof(*scratch));
	values = malloc((size_t)resamples * sizeof(*values));
	if (!scratch || !values) {
		free(scratch);
		free(values);
		return LL_ENOMEM;
	}
	for (int r = 0; r < resamples; r++) {
		double base = resampled(x, nx, scratch, statistic, &state);
		double cand = resampled(y, ny, scratch, statistic, &state);
		if (base != 0)
			values[kept++] = cand / base;
	}
	if (kept < resamples / 2)
		rc = err_set(LL_EINVAL, "The baseline's statistic is zero; a ratio has no meaning.");
	else
		rc = percentile_interval(values, kept, level, ret_low, ret_high);
	free(scratch);
	free(values);
	return rc;
}

static int check_rounds(const struct stats_sample *s)
{
	size_t sum = 0;
	int rc;

	if (!s)
		return err_set(LL_EINVAL, "A sample is missing.");
	if ((rc = check_sample(s->x, s->n)) < 0)
		return rc;
	if (s->rounds == 0)
		return 0;
	if (!s->round_sizes || s->rounds > STATS_MAX_ROUNDS)
		return err_set(LL_EINVAL, "A sample has 1 to %d rounds.", STATS_MAX_ROUNDS);
	for (size_t r = 0; r < s->rounds; r++) {
		if (s->round_sizes[r] == 0)
			return err_set(LL_EINVAL, "Round %zu of a sample is empty.", r);
		sum += s->round_sizes[r];
	}
	if (sum != s->n)
		return err_set(LL_EINVAL, "A sample's rounds hold %zu samples, not %zu.", sum, s->n);
	return 0;
}

/* Where each of S's rounds starts, into START[0..S->rounds). */
static void round_starts(const struct stats_sample *s, size_t *start)
{
	size_t at = 0;

	for (size_t r = 0; r < s->rounds; r++) {
		start[r] = at;
		at += s->round_sizes[r];
	}
}

/* Room a resample of S needs: N, or ROUNDS times its largest round. */
static size_t resample_room(const struct stats_sample *s)
{
	size_t largest = 0;

	if (s->rounds == 0)
		return s->n;
	for (size_t r = 0; r < s->rounds; r++)
		if (s->round_sizes[r] > largest)
			largest = s->round_sizes[r];
	return largest * s->rounds;
}

/* STATISTIC of one resample of S (see stats_bootstrap_contrast_ci());
 * START from round_starts(), SCRATCH resample_room(S) values. */
static double resampled_rounds(const struct stats_sample *s, const size_t *start, double *scratch,
			       enum stats_statistic statistic, uint64_t *state)
{
	size_t k = 0;

	if (s->rounds == 0)
		return resampled(s->x, s->n, scratch, statistic, state);
	for (size_t i = 0; i < s->rounds; i++) {
		size_t r = random_index(state, s->rounds), size = s->round_sizes[r];
		for (size_t j = 0; j < size; j++)
			scratch[k++] = s->x[start[r] + random_index(state, size)];
	}
	return statistic_of(scratch, k, statistic);
}

/* stats_bootstrap_contrast_ci() (DIVIDE false) and
 * stats_bootstrap_floor_ratio_ci() (DIVIDE true): the same draws. */
static int contrast_ci(const struct stats_sample *x, const struct stats_sample *x_floor,
		       const struct stats_sample *y, const struct stats_sample *y_floor, bool divide,
		       enum stats_statistic statistic, double level, int resamples, uint64_t seed,
		       double *ret_low, double *ret_high)
{
	const struct stats_sample *side[4] = {x, y, x_floor, y_floor};
	size_t *start[4] = {NULL}, room = 0;
	double *scratch = NULL, *values = NULL;
	uint64_t state = seed;
	int rc = 0, kept = 0, sides = x_floor ? 4 : 2;

	if (statistic != STATS_MEDIAN && statistic != STATS_MIN)
		return err_set(LL_EINVAL, "This bootstrap knows the median and the minimum only.");
	if (!x_floor != !y_floor)
		return err_set(LL_EINVAL, "Both sides have a floor, or neither.");
	if ((rc = check_bootstrap(level, resamples)) < 0)
		return rc;
	if (sides == 4) { /* drawn in the order X, X_FLOOR, Y, Y_FLOOR */
		side[1] = x_floor;
		side[2] = y;
	}
	for (int i = 0; i < sides; i++) {
		if ((rc = check_rounds(side[i])) < 0)
			return rc;
		if (resample_room(side[i]) > room)
			room = resample_room(side[i]);
	}
	scratch = malloc(room * sizeof(*scratch));
	values = malloc((size_t)resamples * sizeof(*values));
	if (!scratch || !values)
		rc = LL_ENOMEM;
	for (int i = 0; i < sides && rc == 0; i++) {
		if (side[i]->rounds && !(start[i] = malloc(side[i]->rounds * sizeof(size_t))))
			rc = LL_ENOMEM;
		else if (side[i]->rounds)
			round_starts(side[i], start[i]);
	}
	for (int r = 0; r < resamples && rc == 0; r++) {
		double v[4] = {0, 0, 0, 0}, base, cand;
		for (int i = 0; i < sides; i++)
			v[i] = resampled_rounds(side[i], start[i], scratch, statistic, &state);
		if (sides == 4 && divide) {
			base = v[1] > 0 && v[3] > 0 ? v[0] / v[1] : 0;
			cand = v[3] > 0 ? v[2] / v[3] : 0;
		} else {
			base = sides == 4 ? v[0] - v[1] : v[0];
			cand = sides == 4 ? v[2] - v[3] : v[1];
		}
		if (base > 0)
			values[kept++] = cand / base;
	}
	if (rc == 0 && kept < resamples / 2)
		rc = err_set(LL_EINVAL, "The baseline's figure is not above zero; a ratio has no meaning.");
	if (rc == 0)
		rc = percentile_interval(values, kept, level, ret_low, ret_high);
	for (int i = 0; i < 4; i++)
		free(start[i]);
	free(scratch);
	free(values);
	return rc;
}

int stats_bootstrap_contrast_ci(const struct stats_sample *x, const struct stats_sample *x_floor,
				const struct stats_sample *y, const struct stats_sample *y_floor,
				enum stats_statistic statistic, double level, int resamples, uint64_t seed,
				double *ret_low, double *ret_high)
{
	return contrast_ci(x, x_floor, y, y_floor, false, statistic, level, resamples, seed, ret_low,
			   ret_high);
}

int stats_bootstrap_floor_ratio_ci(const struct stats_sample *x, const struct stats_sample *x_floor,
				   const struct stats_sample *y, const struct stats_sample *y_floor,
				   enum stats_statistic statistic, double level, int resamples, uint64_t seed,
				   double *ret_low, double *ret_high)
{
	if (!x_floor || !y_floor)
		return err_set(LL_EINVAL, "Both sides need a floor to be divided by.");
	return contrast_ci(x, x_floor, y, y_floor, true, statistic, level, resamples, seed, ret_low,
			   ret_high);
}

int stats_paired_ratios(const struct stats_sample *a, const struct stats_sample *b, double *ret)
{
	int rc;

	if ((rc = check_rounds(a)) < 0 || (rc = check_rounds(b)) < 0)
		return rc;
	if (a->n != b->n || a->rounds != b->rounds ||
	    (a->rounds && memcmp(a->round_sizes, b->round_sizes, a->rounds * sizeof(*a->round_sizes)) != 0))
		return err_set(LL_EINVAL, "The samples are not paired: their counts or rounds differ.");
	for (size_t k = 0; k < b->n; k++)
		if (!(b->x[k] > 0))
			return err_set(LL_EINVAL, "A divisor (sample %zu) is not above 0.", k);
	for (size_t k = 0; k < a->n; k++)
		ret[k] = a->x[k] / b->x[k];
	return 0;
}

int stats_round_statistics(const struct stats_sample *s, enum stats_statistic statistic, double *ret)
{
	double *scratch;
	size_t at = 0;
	int rc = check_rounds(s);

	if (rc == 0 && s->rounds == 0)
		rc = err_set(LL_EINVAL, "The sample has no rounds.");
	if (rc < 0)
		return rc;
	if (!(scratch = malloc(resample_room(s) * sizeof(*scratch))))
		return LL_ENOMEM;
	for (size_t r = 0; r < s->rounds; r++) {
		memcpy(scratch, s->x + at, s->round_sizes[r] * sizeof(*scratch));
		ret[r] = statistic_of(scratch, s->round_sizes[r], statistic);
		at += s->round_sizes[r];
	}
	free(scratch);
	return 0;
}

struct ranked {
	double value;
	int group;
};

static int compare_ranked(const void *a, const void *b)
{
	return compare_doubles(&((const struct ranked *)a)->value, &((const struct ranked *)b)->value);
}

int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, double *ret_u, double *ret_p)
{
	size_t n = nx + ny, i = 0;
	struct ranked *all;
	double rank_sum_x = 0, tie_term = 0;
	int rc;

	if ((rc = check_sample(x, nx)) < 0 || (rc = check_sample(y, ny)) < 0)
		return rc;
	all = malloc(n * sizeof(*all));
	if (!all)
		return LL_ENOMEM;
	for (size_t k = 0; k < nx; k++)
		all[k] = (struct ranked){x[k], 0};
	for (size_t k = 0; k < ny; k++)
		all[nx + k] = (struct ranked){y[k], 1};
	qsort(all, n, sizeof(*all), compare_ranked);
	/* Average ranks over runs of ties; collect sum(t^3 - t) for the
	 * variance's tie correction. */
	while (i < n) {
		size_t j = i;
		double t, rank;
		while (j + 1 < n && all[j + 1].value == all[i].value)
			j++;
		t = (double)(j - i + 1);
		rank = ((double)i + (double)j) / 2 + 1;
		for (size_t k = i; k <= j; k++)
			if (all[k].group == 0)
				rank_sum_x += rank;
		tie_term += t * t * t - t;
		i = j + 1;
	}
	free(all);
	stats_mann_whitney_from_ranks(nx, ny, rank_sum_x, tie_term, ret_u, ret_p);
	return 0;
}

void stats_mann_whitney_from_ranks(size_t nx, size_t ny, double rank_sum_x, double tie_term, double *ret_u,
				   double *ret_p)
{
	size_t n = nx + ny;
	double u = rank_sum_x - (double)nx * ((double)nx + 1) / 2, mean = (double)nx * (double)ny / 2;
	double variance =
		(double)nx * (double)ny / 12 * (((double)n + 1) - tie_term / ((double)n * ((double)n - 1)));
	double p;

	if (n < 2 || variance <= 0) {
		p = 1;
	} else {
		double d = fabs(u - mean) - 0.5;
		double z = (d > 0 ? d : 0) / sqrt(variance);
		p = erfc(z / sqrt(2.0)); /* two-sided: 2 (1 - Phi(z)) */
		if (p > 1)
			p = 1;
	}
	*ret_u = u;
	*ret_p = p;
}

int stats_outliers(const double *x, size_t n, double threshold, bool *ret_flags, size_t *ret_count)
{
	struct stats_summary s;
	size_t count = 0;
	int rc = stats_summarize(x, n, &s);

	if (rc < 0)
		return rc;
	if (!(threshold > 0))
		return err_set(LL_EINVAL, "An outlier threshold must be positive.");
	for (size_t i = 0; i < n; i++) {
		bool flag = s.mad > 0 && fabs(0.6745 * (x[i] - s.median) / s.mad) > threshold;
		ret_flags[i] = flag;
		count += flag;
	}
	*ret_count = count;
	return 0;
}

int stats_variance_of_interval(double low, double high, double floor, double *ret)
{
	double s;

	if (!isfinite(low) || !isfinite(high) || !isfinite(floor) || high < low)
		return err_set(LL_EINVAL, "An interval must have finite ends, low below high.");
	s = (high - low) / (2 * STATS_Z95);
	*ret = s * s > floor ? s * s : floor;
	return 0;
}

/* The groups of JOBS are few (a compare has at most three: the two specs
 * and a series), so each is summed in its own pass. */
int stats_between_variance(const struct stats_job_estimate *jobs, size_t k, double *ret_tau2, size_t *ret_df)
{
	double q = 0, c = 0;
	size_t groups = 0;

	for (size_t i = 0; i < k; i++)
		if (!isfinite(jobs[i].value) || !(jobs[i].variance > 0) || !isfinite(jobs[i].variance))
			return err_set(LL_EINVAL, "A job's figure or variance is not usable.");
	for (size_t i = 0; i < k; i++) {
		double w_sum = 0, w2_sum = 0, wy_sum = 0, mean;
		bool first = true;
		for (size_t j = 0; j < i && first; j++)
			first = jobs[j].group != jobs[i].group;
		if (!first)
			continue; /* its group was summed */
		groups++;
		for (size_t j = i; j < k; j++)
			if (jobs[j].group == jobs[i].group) {
				double w = 1 / jobs[j].variance;
				w_sum += w;
				w2_sum += w * w;
				wy_sum += w * jobs[j].value;
			}
		mean = wy_sum / w_sum;
		for (size_t j = i; j < k; j++)
			if (jobs[j].group == jobs[i].group) {
				double d = jobs[j].value - mean;
				q += d * d / jobs[j].variance;
			}
		c += w_sum - w2_sum / w_sum;
	}
	if (k < groups + 2)
		return err_set(LL_EINVAL, "Too few jobs to estimate what varies between them.");
	if (!(c > 0))
		return err_set(LL_EINVAL, "The jobs' weights leave nothing to estimate.");
	*ret_tau2 = q > (double)(k - groups) ? (q - (double)(k - groups)) / c : 0;
	*ret_df = k - groups;
	return 0;
}

double stats_widen_half_width(double h, double tau2, double copies, double z)
{
	double base = h > 0 ? h : 0;

	return sqrt(base * base + z * z * copies * (tau2 > 0 ? tau2 : 0));
}
