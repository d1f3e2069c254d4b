/*
 * report_stats.c - the bootstraps of reports and comparisons
 * (report_int.h): stats_bootstrap_ci() and stats_bootstrap_ratio_ci() of
 * loadlab/stats.h for the median and the minimum, drawing the same indexes
 * from the same seed and giving the same figures bit for bit, but on
 * ranks. The sample is sorted once; a resample's draws then only count
 * ranks, and its median or minimum is read from the sorted sample, where
 * stats.c copies every resample and selects in it. Profiled (perf,
 * bench_reports): the selection and the copies were most of a compare's
 * and of the summarizer's time.
 */
#include "report_int.h"

#include "loadlab/err.h"
#include "loadlab/stats.h"

#include <stdlib.h>
#include <string.h>

/* splitmix64 and Lemire's multiply-shift from 32-bit halves: exactly
 * stats.c's next_random() and random_index(), so the draws are its draws. */
static inline uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline size_t random_index(uint64_t *state, size_t n)
{
	uint64_t r = next_random(state), m = (uint64_t)n;
	uint64_t r_lo = r & 0xffffffffu, r_hi = r >> 32, m_lo = m & 0xffffffffu, m_hi = m >> 32;
	uint64_t cross = (r_lo * m_lo >> 32) + (r_hi * m_lo & 0xffffffffu) + r_lo * m_hi;

	return (size_t)(r_hi * m_lo >> 32) + (size_t)(r_hi * m_hi) + (size_t)(cross >> 32);
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct valued {
	double value;
	size_t index;
};

static int compare_valued(const void *a, const void *b)
{
	return compare_doubles(&((const struct valued *)a)->value, &((const struct valued *)b)->value);
}

/* A sample sorted, each original position's rank in it, and room to
 * count a resample's ranks. */
struct ranked {
	size_t n;
	double *sorted;
	size_t *rank;
	size_t *count;
};

static void ranked_free(struct ranked *r)
{
	free(r->sorted);
	free(r->rank);
	free(r->count);
}

static int ranked_of(const double *x, size_t n, struct ranked *ret)
{
	struct valued *v = malloc(n * sizeof(*v));
	struct ranked r = {n, malloc(n * sizeof(double)), malloc(n * sizeof(size_t)),
			   malloc(n * sizeof(size_t))};

	if (!v || !r.sorted || !r.rank || !r.count) {
		free(v);
		ranked_free(&r);
		return LL_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = (struct valued){x[i], i};
	qsort(v, n, sizeof(*v), compare_valued);
	for (size_t k = 0; k < n; k++) {
		r.sorted[k] = v[k].value;
		r.rank[v[k].index] = k;
	}
	free(v);
	*ret = r;
	return 0;
}

/* STATISTIC (median or minimum) of one resample of S, drawn from STATE
 * as stats.c draws it: the type-7 median is the middle value, or the mean
 * of the two middle values, of the resample sorted. */
static double resampled(struct ranked *s, enum stats_statistic statistic, uint64_t *state)
{
	size_t n = s->n, lo = (n - 1) / 2, k = 0, next, seen = 0;

	if (statistic == STATS_MIN) {
		size_t least = n;
		for (size_t i = 0; i < n; i++) {
			size_t r = s->rank[random_index(state, n)];
			if (r < least)
				least = r;
		}
		return s->sorted[least];
	}
	memset(s->count, 0, n * sizeof(*s->count));
	for (size_t i = 0; i < n; i++)
		s->count[s->rank[random_index(state, n)]]++;
	while (seen + s->count[k] <= lo)
		seen += s->count[k++];
	if (n % 2)
		return s->sorted[k];
	next = k;
	if (seen + s->count[k] <= lo + 1)
		for (next = k + 1; !s->count[next]; next++)
			;
	return (s->sorted[k] + s->sorted[next]) / 2;
}

/* stats.c's percentile interval of VALUES (sorted here). */
static void percentile_interval(double *values, size_t count, double level, double *ret_low,
				double *ret_high)
{
	double q[2] = {(1 - level) / 2, 1 - (1 - level) / 2}, *ret[2] = {ret_low, ret_high};

	qsort(values, count, sizeof(*values), compare_doubles);
	for (int i = 0; i < 2; i++) {
		double h = (double)(count - 1) * q[i];
		size_t lo = (size_t)floor(h);
		*ret[i] = lo + 1 >= count ? values[count - 1]
					  : values[lo] + (h - (double)lo) * (values[lo + 1] - values[lo]);
	}
}

static int check(size_t nx, size_t ny, bool two, enum stats_statistic statistic, double level,
		 int resamples)
{
	if (nx == 0 || nx > STATS_MAX_SAMPLES || (two && (ny == 0 || ny > STATS_MAX_SAMPLES)))
		return err_set(LL_EINVAL, "A bootstrap needs 1 to %d samples.", STATS_MAX_SAMPLES);
	if (statistic != STATS_MEDIAN && statistic != STATS_MIN)
		return err_set(LL_EINVAL, "This bootstrap knows the median and the minimum only.");
	if (!(level > 0 && level < 1) || resamples < 100 || resamples > 100000)
		return err_set(LL_ERANGE, "A level in (0, 1) and 100 to 100000 resamples.");
	return 0;
}

int report_bootstrap_ci(const double *x, size_t n, enum stats_statistic statistic, double level,
			int resamples, uint64_t seed, double *ret_low, double *ret_high)
{
	struct ranked s;
	double *values;
	uint64_t state = seed;
	int rc;

	if ((rc = check(n, 0, false, statistic, level, resamples)) < 0 || (rc = ranked_of(x, n, &s)) < 0)
		return rc;
	if (!(values = malloc((size_t)resamples * sizeof(*values)))) {
		ranked_free(&s);
		return LL_ENOMEM;
	}
	for (int r = 0; r < resamples; r++)
		values[r] = resampled(&s, statistic, &state);
	percentile_interval(values, (size_t)resamples, level, ret_low, ret_high);
	free(values);
	ranked_free(&s);
	return 0;
}

int report_bootstrap_ratio_ci(const double *x, size_t nx, const double *y, size_t ny,
			      enum stats_statistic statistic, double level, int resamples,
			      uint64_t seed, double *ret_low, double *ret_high)
{
	struct ranked sx = {0}, sy = {0};
	double *values = NULL;
	uint64_t state = seed;
	int rc, kept = 0;

	if ((rc = check(nx, ny, true, statistic, level, resamples)) < 0)
		return rc;
	if ((rc = ranked_of(x, nx, &sx)) < 0 || (rc = ranked_of(y, ny, &sy)) < 0 ||
	    !(values = malloc((size_t)resamples * sizeof(*values)))) {
		rc = rc < 0 ? rc : LL_ENOMEM;
		goto done;
	}
	for (int r = 0; r < resamples; r++) {
		double base = resampled(&sx, statistic, &state);
		double cand = resampled(&sy, statistic, &state);
		if (base != 0)
			values[kept++] = cand / base;
	}
	if (kept < resamples / 2)
		rc = err_set(LL_EINVAL, "The baseline's statistic is zero; a ratio has no meaning.");
	else
		percentile_interval(values, (size_t)kept, level, ret_low, ret_high);
done:
	free(values);
	ranked_free(&sx);
	ranked_free(&sy);
	return rc;
}
