/*
 * report_stats.c - the bootstraps of reports and comparisons
 * (report_int.h): stats_bootstrap_ci() and stats_bootstrap_ratio_ci() of
 * loadlab/stats.h for the median and the minimum, drawing the same indexes
 * from the same seed and giving the same figures bit for bit, faster:
 * - the sample is sorted once; a resample is its counts by position, and
 *   its median or minimum is read by walking the sorted sample (stats.c
 *   copies every resample and selects in it);
 * - the draws depend on the seed and the sample sizes only, so the draws
 *   of seeds that repeat (a summary's, compare's minimum) are kept and
 *   serve every result (profiled, callgrind on bench_reports: the draws
 *   were most of a summary's and of a compare's instructions);
 * - the draws vectorize where the CPU can (draw_indexes);
 * - the interval's two order statistics are selected, not sorted for.
 */
#include "report_int.h"

#include "loadlab/err.h"
#include "loadlab/stats.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64 and Lemire's multiply-shift: exactly stats.c's next_random()
 * and random_index(), so the draws are its draws. Draw K (from 0) of a
 * stream seeded SEED is mix(SEED + (K + 1) * golden): any block of a stream
 * can be drawn without the draws before it. */
#define GOLDEN 0x9e3779b97f4a7c15ULL

/* Draws K .. K+N-1 of the stream SEED as indexes in [0, N) into OUT (N <
 * 2^32). The high half of the 128-bit product r * N, from 32-bit halves
 * (r_hi * N + (r_lo * N >> 32) >> 32 cannot overflow), so that the loop
 * vectorizes where the CPU has 64-bit vector multiplies. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v4", "default"), optimize("O3")))
#endif
static void draw_indexes(uint64_t seed, uint64_t k, uint32_t n, uint32_t *out)
{
	uint64_t base = seed + k * GOLDEN;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t z = base + (uint64_t)(i + 1) * GOLDEN;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		out[i] = (uint32_t)(((z >> 32) * n + ((z & 0xffffffffu) * n >> 32)) >> 32);
	}
}

/* How often each position of a sample of N was drawn by draws K .. K+N-1
 * of the stream SEED, into COUNT[0..N); SCRATCH holds N indexes. */
static void draw_counts(uint64_t seed, uint64_t k, uint32_t n, uint32_t *scratch, uint32_t *count)
{
	draw_indexes(seed, k, n, scratch);
	memset(count, 0, n * sizeof(*count));
	for (uint32_t i = 0; i < n; i++)
		count[scratch[i]]++;
}

/*
 * The draws of a bootstrap: RESAMPLES resamples of a sample of N1 (and,
 * for a ratio, each followed by one of a sample of N2), as counts by
 * position. They depend on the seed and the sizes only, not on the
 * samples: a summary's seeds are the variants' names and compare's
 * minimum-ratio seed is the variant's, so the same draws serve every
 * result. Such draws are kept (KEEP), up to DRAWS_KEPT sets and
 * DRAWS_KEPT_COUNTS counts in all, never freed; the others are drawn per
 * resample.
 */
#define DRAWS_KEPT 64
#define DRAWS_KEPT_COUNTS (1u << 20) /* 4 MiB */
#define DRAWS_KEPT_MAX_N 4096

struct draws {
	uint64_t seed;
	uint32_t n1, n2;
	int resamples;
	uint32_t *counts; /* resample r: n1 counts then n2, at r * (n1 + n2); NULL: not kept */
};

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct draws kept[DRAWS_KEPT];
static size_t kept_count, kept_total;

/* The kept draws for SEED, N1, N2 and RESAMPLES, made and kept when there
 * is room; NULL when they are not kept (then drawn per resample). */
static const uint32_t *kept_draws(uint64_t seed, uint32_t n1, uint32_t n2, int resamples)
{
	size_t size = (size_t)resamples * (n1 + n2);
	const uint32_t *found = NULL;
	uint32_t *counts, *scratch;

	pthread_mutex_lock(&kept_lock);
	for (size_t i = 0; i < kept_count && !found; i++)
		if (kept[i].seed == seed && kept[i].n1 == n1 && kept[i].n2 == n2 &&
		    kept[i].resamples == resamples)
			found = kept[i].counts;
	if (found || kept_count == DRAWS_KEPT || kept_total + size > DRAWS_KEPT_COUNTS ||
	    n1 > DRAWS_KEPT_MAX_N || n2 > DRAWS_KEPT_MAX_N)
		goto done;
	counts = malloc(size * sizeof(*counts));
	scratch = malloc((n1 > n2 ? n1 : n2) * sizeof(*scratch));
	if (!counts || !scratch) {
		free(counts);
		free(scratch);
		goto done;
	}
	for (int r = 0; r < resamples; r++) {
		uint64_t k = (uint64_t)r * (n1 + n2);
		draw_counts(seed, k, n1, scratch, counts + k);
		if (n2)
			draw_counts(seed, k + n1, n2, scratch, counts + k + n1);
	}
	free(scratch);
	kept[kept_count++] = (struct draws){seed, n1, n2, resamples, counts};
	kept_total += size;
	found = counts;
done:
	pthread_mutex_unlock(&kept_lock);
	return found;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct valued {
	double value;
	uint32_t index;
};

static int compare_valued(const void *a, const void *b)
{
	return compare_doubles(&((const struct valued *)a)->value, &((const struct valued *)b)->value);
}

/* A sample sorted, the original position of each sorted value, and room
 * to draw a resample's counts. */
struct ranked {
	uint32_t n;
	double *sorted;
	uint32_t *order;
	uint32_t *count, *scratch;
};

static void ranked_free(struct ranked *r)
{
	free(r->sorted);
	free(r->order);
	free(r->count);
	free(r->scratch);
}

static int ranked_of(const double *x, size_t n, struct ranked *ret)
{
	struct valued *v = malloc(n * sizeof(*v));
	struct ranked r = {(uint32_t)n, malloc(n * sizeof(double)), malloc(n * sizeof(uint32_t)),
			   malloc(n * sizeof(uint32_t)), malloc(n * sizeof(uint32_t))};

	if (!v || !r.sorted || !r.order || !r.count || !r.scratch) {
		free(v);
		ranked_free(&r);
		return LL_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = (struct valued){x[i], (uint32_t)i};
	qsort(v, n, sizeof(*v), compare_valued);
	for (size_t k = 0; k < n; k++) {
		r.sorted[k] = v[k].value;
		r.order[k] = v[k].index;
	}
	free(v);
	*ret = r;
	return 0;
}

/* STATISTIC (median or minimum) of the resample of S whose counts by
 * position are COUNT, as stats.c computes it on the resample: the type-7
 * median is the middle value, or the mean of the two middle values, of the
 * resample sorted. Walks S in sorted order. */
static double resampled(const struct ranked *s, enum stats_statistic statistic, const uint32_t *count)
{
	const uint32_t *order = s->order;
	size_t n = s->n, lo = (n - 1) / 2, k = 0, next, seen = 0;

	if (statistic == STATS_MIN) {
		while (!count[order[k]])
			k++;
		return s->sorted[k];
	}
	while (seen + count[order[k]] <= lo)
		seen += count[order[k++]];
	if (n % 2)
		return s->sorted[k];
	next = k;
	if (seen + count[order[k]] <= lo + 1)
		for (next = k + 1; !count[order[next]]; next++)
			;
	return (s->sorted[k] + s->sorted[next]) / 2;
}

/* The K-th smallest of V[0..N) moved to V[K], none larger before it and
 * none smaller after (Wirth's selection; V holds no NaN). */
static void select_kth(double *v, size_t n, size_t k)
{
	long left = 0, right = (long)n - 1, kk = (long)k;

	while (left < right) {
		double pivot = v[kk];
		long i = left, j = right;
		do {
			while (v[i] < pivot)
				i++;
			while (pivot < v[j])
				j--;
			if (i <= j) {
				double t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		} while (i <= j);
		if (j < kk)
			left = i;
		if (kk < i)
			right = j;
	}
}

/* The value that would be at position K (and K+1) if V were sorted. */
static double sorted_at(double *v, size_t n, size_t k)
{
	select_kth(v, n, k);
	return v[k];
}

/* stats.c's percentile interval of VALUES (reordered here): the sorted
 * values it reads are found by selection. */
static void percentile_interval(double *values, size_t count, double level, double *ret_low,
				double *ret_high)
{
	double q[2] = {(1 - level) / 2, 1 - (1 - level) / 2}, *ret[2] = {ret_low, ret_high};

	for (int i = 0; i < 2; i++) {
		double h = (double)(count - 1) * q[i];
		size_t lo = (size_t)floor(h);
		if (lo + 1 >= count) {
			*ret[i] = sorted_at(values, count, count - 1);
		} else {
			double a = sorted_at(values, count, lo), b = values[lo + 1];
			for (size_t j = lo + 2; j < count; j++)
				if (values[j] < b)
					b = values[j];
			*ret[i] = a + (h - (double)lo) * (b - a);
		}
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

/* The counts of resample R of the side at OFFSET (0 or N1) of the draws
 * for SEED: kept ones, or drawn into S's room. */
static const uint32_t *counts_of(const uint32_t *kept_counts, uint64_t seed, int r, uint32_t n1,
				 uint32_t n2, uint32_t offset, struct ranked *s)
{
	uint64_t k = (uint64_t)r * (n1 + n2) + offset;

	if (kept_counts)
		return kept_counts + k;
	draw_counts(seed, k, s->n, s->scratch, s->count);
	return s->count;
}

int report_bootstrap_ci(const double *x, size_t n, enum stats_statistic statistic, double level,
			int resamples, uint64_t seed, bool keep, double *ret_low, double *ret_high)
{
	struct ranked s;
	const uint32_t *counts;
	double *values;
	int rc;

	if ((rc = check(n, 0, false, statistic, level, resamples)) < 0 || (rc = ranked_of(x, n, &s)) < 0)
		return rc;
	if (!(values = malloc((size_t)resamples * sizeof(*values)))) {
		ranked_free(&s);
		return LL_ENOMEM;
	}
	counts = keep ? kept_draws(seed, s.n, 0, resamples) : NULL;
	for (int r = 0; r < resamples; r++)
		values[r] = resampled(&s, statistic, counts_of(counts, seed, r, s.n, 0, 0, &s));
	percentile_interval(values, (size_t)resamples, level, ret_low, ret_high);
	free(values);
	ranked_free(&s);
	return 0;
}

int report_bootstrap_ratio_ci(const double *x, size_t nx, const double *y, size_t ny,
			      enum stats_statistic statistic, double level, int resamples,
			      uint64_t seed, bool keep, double *ret_low, double *ret_high)
{
	struct ranked sx = {0}, sy = {0};
	const uint32_t *counts;
	double *values = NULL;
	int rc, kept = 0;

	if ((rc = check(nx, ny, true, statistic, level, resamples)) < 0)
		return rc;
	if ((rc = ranked_of(x, nx, &sx)) < 0 || (rc = ranked_of(y, ny, &sy)) < 0 ||
	    !(values = malloc((size_t)resamples * sizeof(*values)))) {
		rc = rc < 0 ? rc : LL_ENOMEM;
		goto done;
	}
	counts = keep ? kept_draws(seed, sx.n, sy.n, resamples) : NULL;
	for (int r = 0; r < resamples; r++) {
		double base = resampled(&sx, statistic, counts_of(counts, seed, r, sx.n, sy.n, 0, &sx));
		double cand = resampled(&sy, statistic, counts_of(counts, seed, r, sx.n, sy.n, sx.n, &sy));
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
