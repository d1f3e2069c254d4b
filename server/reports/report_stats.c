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
 * - the draws vectorize where the CPU can (report_draw_indexes);
 * - the interval's two order statistics are selected, not sorted for.
 */
#include "report_draws.h"
#include "report_int.h"

#include "loadlab/err.h"
#include "loadlab/stats.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

void report_sample_release(struct report_sample *s)
{
	free(s->sorted);
	free(s->dev);
	free(s->order);
	free(s->count);
	free(s->scratch);
	free(s->batch);
	free(s->table);
	*s = (struct report_sample){0};
}

/* Room for N samples in S's buffers; LL_ENOMEM. */
static int sample_reserve(struct report_sample *s, uint32_t n)
{
	struct report_sample r = {0};

	if (n <= s->capacity)
		return 0;
	r.capacity = n < 64 ? 64 : n;
	r.sorted = malloc(r.capacity * sizeof(double));
	r.dev = malloc(r.capacity * sizeof(double));
	r.order = malloc(r.capacity * sizeof(uint32_t));
	r.count = malloc(r.capacity * sizeof(uint32_t));
	r.scratch = malloc(r.capacity * sizeof(uint32_t));
	if (!r.sorted || !r.dev || !r.order || !r.count || !r.scratch) {
		report_sample_release(&r);
		return LL_ENOMEM;
	}
	r.batch = s->batch;
	r.batch_room = s->batch_room;
	r.table = s->table;
	r.table_room = s->table_room;
	r.table_seed = s->table_seed;
	r.table_n1 = s->table_n1;
	r.table_n2 = s->table_n2;
	r.table_resamples = s->table_resamples;
	s->batch = NULL;
	s->table = NULL;
	report_sample_release(s);
	*s = r;
	return 0;
}

/* Small samples (a result's 30) by insertion; ties may end in any order:
 * every figure read from the sorted sample depends on its values only. */
#define SORT_BY_INSERTION 64

int report_sample_set(struct report_sample *s, const double *x, size_t n)
{
	int rc;

	s->n = 0;
	if (n == 0 || n > STATS_MAX_SAMPLES)
		return err_set(LL_EINVAL, "A statistic needs 1 to %d samples.", STATS_MAX_SAMPLES);
	if ((rc = sample_reserve(s, (uint32_t)n)) < 0)
		return rc;
	if (n <= SORT_BY_INSERTION) {
		for (uint32_t i = 0; i < n; i++) {
			double v = x[i];
			uint32_t k = i;
			for (; k > 0 && s->sorted[k - 1] > v; k--) {
				s->sorted[k] = s->sorted[k - 1];
				s->order[k] = s->order[k - 1];
			}
			s->sorted[k] = v;
			s->order[k] = i;
		}
	} else {
		struct valued *v = malloc(n * sizeof(*v));
		if (!v)
			return LL_ENOMEM;
		for (size_t i = 0; i < n; i++)
			v[i] = (struct valued){x[i], (uint32_t)i};
		qsort(v, n, sizeof(*v), compare_valued);
		for (size_t k = 0; k < n; k++) {
			s->sorted[k] = v[k].value;
			s->order[k] = v[k].index;
		}
		free(v);
	}
	s->x = x;
	s->n = (uint32_t)n;
	return 0;
}

void report_sample_summary(struct report_sample *s, struct stats_summary *ret)
{
	struct stats_summary out;
	const double *v = s->sorted;
	size_t n = s->n, below, above, k = 0;

	stats_summarize_sorted(s->x, v, n, &out);
	/* The absolute deviations in order: they fall from the sorted
	 * sample's start to the median and rise after it; merged. */
	for (above = 0; above < n && v[above] <= out.median; above++)
		;
	below = above;
	while (below > 0 || above < n) {
		double lo = below > 0 ? fabs(v[below - 1] - out.median) : INFINITY;
		double hi = above < n ? fabs(v[above] - out.median) : INFINITY;
		if (below > 0 && (above == n || lo <= hi)) {
			s->dev[k++] = lo;
			below--;
		} else {
			s->dev[k++] = hi;
			above++;
		}
	}
	out.mad = stats_quantile_sorted(s->dev, n, 0.5);
	*ret = out;
}

size_t report_sample_outliers(const struct report_sample *s, const struct stats_summary *summary,
			      double threshold)
{
	size_t count = 0;

	for (size_t i = 0; i < s->n; i++)
		count += summary->mad > 0 &&
			 fabs(0.6745 * (s->x[i] - summary->median) / summary->mad) > threshold;
	return count;
}

/* stats.c's stats_mann_whitney(): ranks averaged over runs of ties, U of
 * X, the normal approximation with continuity and tie corrections. Its
 * sums are taken run by run in value order, as here. */
void report_mann_whitney(const struct report_sample *x, const struct report_sample *y, double *ret_u,
			 double *ret_p)
{
	size_t nx = x->n, ny = y->n, n = nx + ny, i = 0, ix = 0, iy = 0;
	double rank_sum_x = 0, tie_term = 0;

	while (i < n) {
		double value = iy == ny || (ix < nx && x->sorted[ix] <= y->sorted[iy]) ? x->sorted[ix]
										       : y->sorted[iy];
		size_t in_x = 0, j = i;
		double t, rank;
		while (ix < nx && x->sorted[ix] == value) {
			ix++;
			in_x++;
			j++;
		}
		while (iy < ny && y->sorted[iy] == value) {
			iy++;
			j++;
		}
		j--; /* the run is i .. j */
		t = (double)(j - i + 1);
		rank = ((double)i + (double)j) / 2 + 1;
		for (size_t k = 0; k < in_x; k++)
			rank_sum_x += rank;
		tie_term += t * t * t - t;
		i = j + 1;
	}
	stats_mann_whitney_from_ranks(nx, ny, rank_sum_x, tie_term, ret_u, ret_p);
}

/* STATISTIC (median or minimum) of the resample of S whose counts by
 * position are COUNT, as stats.c computes it on the resample: the type-7
 * median is the middle value, or the mean of the two middle values, of the
 * resample sorted. Walks S in sorted order. */
static double resampled(const struct report_sample *s, enum stats_statistic statistic, const uint32_t *count)
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

/* The M smallest (largest) of V[0..N) into KEEP[0..M) in order, by
 * insertion, one pass: a value that cannot enter costs one comparison.
 * Positions within EXTREME of an end are found so (both_ends()). */
#define EXTREME 64

static void smallest(const double *v, size_t n, size_t m, double *keep)
{
	size_t i = 0;

	for (; i < m; i++) {
		size_t j = i;
		for (; j > 0 && v[i] < keep[j - 1]; j--)
			keep[j] = keep[j - 1];
		keep[j] = v[i];
	}
	for (; i < n; i++) {
		double x = v[i];
		size_t j = m - 1;
		if (!(x < keep[m - 1]))
			continue;
		for (; j > 0 && x < keep[j - 1]; j--)
			keep[j] = keep[j - 1];
		keep[j] = x;
	}
}

static void largest(const double *v, size_t n, size_t m, double *keep)
{
	size_t i = 0;

	for (; i < m; i++) {
		size_t j = i;
		for (; j > 0 && v[i] > keep[j - 1]; j--)
			keep[j] = keep[j - 1];
		keep[j] = v[i];
	}
	for (; i < n; i++) {
		double x = v[i];
		size_t j = m - 1;
		if (!(x > keep[m - 1]))
			continue;
		for (; j > 0 && x > keep[j - 1]; j--)
			keep[j] = keep[j - 1];
		keep[j] = x;
	}
}

/* The sorted positions K and K+1 (near an end, see both_ends()) of the
 * RESAMPLES values STATISTIC of S's resamples whose ranks are LO and HI,
 * into A and B, without the values' order: a value is S->sorted[lo] (the
 * minimum, or the median of an odd sample), so the positions are counted
 * in a histogram of the ranks; or the mean of S->sorted[lo] and
 * S->sorted[hi] (lo <= hi), which lies between them, so only the values
 * that can be among the K + 2 smallest (or the RESAMPLES - K largest) are
 * made and kept by insertion (profiled: keeping them from all the values
 * was 17 % of a summary). The same values as percentile_interval()'s. */
static void ranked_pair(const struct report_sample *s, enum stats_statistic statistic, const uint8_t *lo,
			const uint8_t *hi, size_t resamples, size_t k, double *ret_a, double *ret_b)
{
	double cand[REPORT_MAX_RESAMPLES_RANKED], keep[EXTREME];
	uint32_t count[256] = {0};
	const double *v = s->sorted;
	bool low = k + 2 <= EXTREME;
	size_t cum = 0, m = 0, need = low ? k + 2 : resamples - k;
	int at = -1, next = -1, bound = 0;

	if (statistic == STATS_MIN || s->n % 2) {
		for (size_t r = 0; r < resamples; r++)
			count[lo[r]]++;
		for (int i = 0; i < 256 && next < 0; i++) {
			cum += count[i];
			if (at < 0 && cum > k)
				at = i;
			if (cum > k + 1)
				next = i;
		}
		*ret_a = v[at];
		*ret_b = v[next];
		return;
	}
	/* The NEED-th smallest hi (the NEED-th largest lo) bounds the values
	 * kept: at least NEED values lie at or beyond it, and a value whose
	 * lo (hi) lies beyond it cannot be kept. */
	for (size_t r = 0; r < resamples; r++)
		count[low ? hi[r] : lo[r]]++;
	if (low) {
		for (bound = 0; cum + count[bound] < need; bound++)
			cum += count[bound];
		while (bound + 1 < (int)s->n && v[bound + 1] <= v[bound])
			bound++; /* every lo whose value is at most the bound's */
		for (size_t r = 0; r < resamples; r++)
			if (lo[r] <= bound)
				cand[m++] = report_ranked_value(v, s->n, statistic, lo[r], hi[r]);
		smallest(cand, m, need, keep);
		*ret_a = keep[k];
		*ret_b = keep[k + 1];
		return;
	}
	for (bound = 255; cum + count[bound] < need; bound--)
		cum += count[bound];
	while (bound > 0 && v[bound - 1] >= v[bound])
		bound--; /* every hi whose value is at least the bound's */
	for (size_t r = 0; r < resamples; r++)
		if (hi[r] >= bound)
			cand[m++] = report_ranked_value(v, s->n, statistic, lo[r], hi[r]);
	largest(cand, m, need, keep);
	*ret_a = keep[need - 1];
	*ret_b = keep[need - 2];
}

/* percentile_interval() of the values of ranks LO and HI (ranked_pair());
 * false when its positions are not near the ends or the sample's values
 * are so large that a mean of two could overflow: then the caller makes
 * the values. */
static bool ranked_interval(const struct report_sample *s, enum stats_statistic statistic, const uint8_t *lo,
			    const uint8_t *hi, int resamples, double level, double *ret_low, double *ret_high)
{
	double q[2] = {(1 - level) / 2, 1 - (1 - level) / 2}, out[2];
	size_t count = (size_t)resamples;

	if (!(s->sorted[s->n - 1] <= DBL_MAX / 4))
		return false;
	for (int i = 0; i < 2; i++) {
		double h = (double)(count - 1) * q[i], a, b;
		size_t k = (size_t)floor(h);
		if (k + 1 >= count || (k + 2 > EXTREME && count - k > EXTREME))
			return false;
		ranked_pair(s, statistic, lo, hi, count, k, &a, &b);
		out[i] = a + (h - (double)k) * (b - a);
	}
	*ret_low = out[0];
	*ret_high = out[1];
	return true;
}

/* The sorted positions KLO, KLO+1 (among the KLO + 2 smallest) and KHI,
 * KHI+1 (among the N - KHI largest) of V[0..N) into RET[0..4), both at
 * once: the M-th smallest of the minimums of blocks of END_BLOCK values is
 * at least the M-th smallest value (they are M of the values), so one
 * branchless pass keeps the values within such bounds, and only those are
 * inserted (profiled: two insertion passes over all the values were 18-24
 * % of a compare's CPU time). False when the positions are not near the
 * ends or N is over REPORT_MAX_RESAMPLES_RANKED. */
#define END_BLOCK 8

static bool both_ends(const double *v, size_t n, size_t klo, size_t khi, double *ret)
{
	double mins[REPORT_MAX_RESAMPLES_RANKED / END_BLOCK], maxs[REPORT_MAX_RESAMPLES_RANKED / END_BLOCK];
	double low[REPORT_MAX_RESAMPLES_RANKED], high[REPORT_MAX_RESAMPLES_RANKED], keep[EXTREME], tlo, thi;
	size_t m_lo = klo + 2, m_hi = n - khi, blocks = n / END_BLOCK, nlo = 0, nhi = 0;

	if (n > REPORT_MAX_RESAMPLES_RANKED || klo + 1 >= n || khi + 1 >= n || m_lo > EXTREME ||
	    m_hi > EXTREME || blocks < m_lo || blocks < m_hi)
		return false;
	for (size_t b = 0; b < blocks; b++) {
		const double *at = v + b * END_BLOCK;
		double mn = at[0], mx = at[0];
		for (int j = 1; j < END_BLOCK; j++) {
			mn = at[j] < mn ? at[j] : mn;
			mx = at[j] > mx ? at[j] : mx;
		}
		mins[b] = mn;
		maxs[b] = mx;
	}
	smallest(mins, blocks, m_lo, keep);
	tlo = keep[m_lo - 1];
	largest(maxs, blocks, m_hi, keep);
	thi = keep[m_hi - 1];
	for (size_t i = 0; i < n; i++) {
		double x = v[i];
		low[nlo] = x;
		nlo += x <= tlo;
		high[nhi] = x;
		nhi += x >= thi;
	}
	smallest(low, nlo, m_lo, keep);
	ret[0] = keep[klo];
	ret[1] = keep[klo + 1];
	largest(high, nhi, m_hi, keep);
	ret[2] = keep[n - 1 - khi];
	ret[3] = keep[n - 2 - khi];
	return true;
}

/* stats.c's percentile interval of VALUES (reordered here): the sorted
 * values it reads are found by selection. */
static void percentile_interval(double *values, size_t count, double level, double *ret_low, double *ret_high)
{
	double q[2] = {(1 - level) / 2, 1 - (1 - level) / 2}, *ret[2] = {ret_low, ret_high}, ends[4];
	double h0 = (double)(count - 1) * q[0], h1 = (double)(count - 1) * q[1];

	if (both_ends(values, count, (size_t)floor(h0), (size_t)floor(h1), ends)) {
		*ret_low = ends[0] + (h0 - floor(h0)) * (ends[1] - ends[0]);
		*ret_high = ends[2] + (h1 - floor(h1)) * (ends[3] - ends[2]);
		return;
	}
	for (int i = 0; i < 2; i++) {
		double h = (double)(count - 1) * q[i], a, b;
		size_t lo = (size_t)floor(h);
		if (lo + 1 >= count) {
			*ret[i] = sorted_at(values, count, count - 1);
			continue;
		}
		a = sorted_at(values, count, lo);
		b = values[lo + 1];
		for (size_t j = lo + 2; j < count; j++)
			if (values[j] < b)
				b = values[j];
		*ret[i] = a + (h - (double)lo) * (b - a);
	}
}

static int check(size_t nx, size_t ny, bool two, enum stats_statistic statistic, double level, int resamples)
{
	if (nx == 0 || nx > STATS_MAX_SAMPLES || (two && (ny == 0 || ny > STATS_MAX_SAMPLES)))
		return err_set(LL_EINVAL, "A bootstrap needs 1 to %d samples.", STATS_MAX_SAMPLES);
	if (statistic != STATS_MEDIAN && statistic != STATS_MIN)
		return err_set(LL_EINVAL, "This bootstrap knows the median and the minimum only.");
	if (!(level > 0 && level < 1) || resamples < 100 || resamples > 100000)
		return err_set(LL_ERANGE, "A level in (0, 1) and 100 to 100000 resamples.");
	return 0;
}

/* Samples too large for a table of bytes draw each resample's counts
 * and walk them (resampled()): all draws at once when they fall in one
 * range, else per resample. */
#define BATCH_MAX_DRAWS (1u << 20)

/* Draws 0 .. TOTAL-1 of the stream SEED in [0, N) into S's batch room;
 * NULL when they are too many or there is no memory (then drawn per
 * resample). */
static const uint32_t *batch_draws(struct report_sample *s, uint64_t seed, size_t total, uint32_t n)
{
	if (total > BATCH_MAX_DRAWS)
		return NULL;
	if (report_draws_room(s, 0, total) < 0)
		return NULL;
	report_draw_indexes(seed, 0, (uint32_t)total, n, s->batch);
	return s->batch;
}

/* The counts of resample R of the side at OFFSET (0 or N1) of the draws
 * for SEED: counted from the batch BATCH, or drawn into S's room. */
static const uint32_t *counts_of(const uint32_t *batch, uint64_t seed, int r, uint32_t n1, uint32_t n2,
				 uint32_t offset, struct report_sample *s)
{
	uint64_t k = (uint64_t)r * (n1 + n2) + offset;

	if (batch)
		report_count_drawn(batch + k, s->n, s->count);
	else
		report_draw_counts(seed, k, s->n, s->scratch, s->count);
	return s->count;
}

/* Whether samples of N1 and N2 are bootstrapped by a table of bytes. */
static bool ranked(uint32_t n1, uint32_t n2, int resamples)
{
	return n1 <= REPORT_RANKED_MAX_N && n2 <= REPORT_RANKED_MAX_N &&
	       resamples <= REPORT_MAX_RESAMPLES_RANKED;
}

/* The bootstrap's statistics, on the stack for the usual counts. */
#define VALUES_ON_STACK 1024

int report_sample_bootstrap_ci(struct report_sample *s, enum stats_statistic statistic, double level,
			       int resamples, uint64_t seed, bool keep, double *ret_low, double *ret_high)
{
	double stack[VALUES_ON_STACK], *values = stack;
	uint8_t lo[REPORT_MAX_RESAMPLES_RANKED], hi[REPORT_MAX_RESAMPLES_RANKED];
	const uint32_t *batch;
	const uint8_t *t;
	int rc;

	if ((rc = check(s->n, 0, false, statistic, level, resamples)) < 0)
		return rc;
	if (resamples > VALUES_ON_STACK && !(values = malloc((size_t)resamples * sizeof(*values))))
		return LL_ENOMEM;
	if (ranked(s->n, 0, resamples)) {
		if (!(t = report_draws_table(s, seed, s->n, 0, resamples, keep))) {
			rc = LL_ENOMEM;
			goto done;
		}
		report_draws_sample_ranks(s, t, resamples, statistic, lo, hi);
		if (ranked_interval(s, statistic, lo, hi, resamples, level, ret_low, ret_high))
			goto done;
		for (int r = 0; r < resamples; r++)
			values[r] = report_ranked_value(s->sorted, s->n, statistic, lo[r], hi[r]);
	} else {
		batch = batch_draws(s, seed, (size_t)resamples * s->n, s->n);
		for (int r = 0; r < resamples; r++)
			values[r] = resampled(s, statistic, counts_of(batch, seed, r, s->n, 0, 0, s));
	}
	percentile_interval(values, (size_t)resamples, level, ret_low, ret_high);
done:
	if (values != stack)
		free(values);
	return rc;
}

int report_ranked_ratio_ci(const double *x, uint32_t nx, const uint8_t *x_lo, const uint8_t *x_hi,
			   const double *y, uint32_t ny, const uint8_t *y_lo, const uint8_t *y_hi,
			   enum stats_statistic statistic, double level, int resamples, double *ret_low,
			   double *ret_high)
{
	double values[REPORT_MAX_RESAMPLES_RANKED];
	int kept = 0;

	for (int r = 0; r < resamples; r++) {
		double base = report_ranked_value(x, nx, statistic, x_lo[r], x_hi[r]);
		double cand = report_ranked_value(y, ny, statistic, y_lo[r], y_hi[r]);
		if (base != 0)
			values[kept++] = cand / base;
	}
	if (kept < resamples / 2)
		return err_set(LL_EINVAL, "The baseline's statistic is zero; a ratio has no meaning.");
	percentile_interval(values, (size_t)kept, level, ret_low, ret_high);
	return 0;
}

int report_sample_ratio_ranks(struct report_sample *s, enum stats_statistic statistic, int resamples,
			      uint64_t seed, bool keep, bool as_candidate, uint8_t *ret_lo, uint8_t *ret_hi)
{
	const uint8_t *t;

	if (s->n == 0 || !ranked(s->n, s->n, resamples) || resamples < 1)
		return err_set(LL_EINVAL, "Ranks need 1 to %d samples and at most %d resamples.",
			       REPORT_RANKED_MAX_N, REPORT_MAX_RESAMPLES_RANKED);
	if (!(t = report_draws_table(s, seed, s->n, s->n, resamples, keep)))
		return LL_ENOMEM;
	report_draws_sample_ranks(s, t + (as_candidate ? (size_t)s->n * (size_t)resamples : 0), resamples,
				  statistic, ret_lo, ret_hi);
	return 0;
}

int report_sample_bootstrap_ratio_ci(struct report_sample *x, struct report_sample *y,
				     enum stats_statistic statistic, double level, int resamples,
				     uint64_t seed, bool keep, double *ret_low, double *ret_high)
{
	double stack[VALUES_ON_STACK], *values = stack;
	uint8_t xlo[REPORT_MAX_RESAMPLES_RANKED], xhi[REPORT_MAX_RESAMPLES_RANKED];
	uint8_t ylo[REPORT_MAX_RESAMPLES_RANKED], yhi[REPORT_MAX_RESAMPLES_RANKED];
	const uint32_t *batch;
	const uint8_t *t;
	int rc, kept = 0;

	if ((rc = check(x->n, y->n, true, statistic, level, resamples)) < 0)
		return rc;
	if (ranked(x->n, y->n, resamples)) {
		if (!(t = report_draws_table(x, seed, x->n, y->n, resamples, keep)))
			return LL_ENOMEM;
		report_draws_sample_ranks(x, t, resamples, statistic, xlo, xhi);
		report_draws_sample_ranks(y, t + (size_t)x->n * (size_t)resamples, resamples, statistic, ylo,
					  yhi);
		return report_ranked_ratio_ci(x->sorted, x->n, xlo, xhi, y->sorted, y->n, ylo, yhi, statistic,
					      level, resamples, ret_low, ret_high);
	}
	if (resamples > VALUES_ON_STACK && !(values = malloc((size_t)resamples * sizeof(*values))))
		return LL_ENOMEM;
	batch = x->n != y->n ? NULL : batch_draws(x, seed, (size_t)resamples * (x->n + y->n), x->n);
	for (int r = 0; r < resamples; r++) {
		double base = resampled(x, statistic, counts_of(batch, seed, r, x->n, y->n, 0, x));
		double cand = resampled(y, statistic, counts_of(batch, seed, r, x->n, y->n, x->n, y));
		if (base != 0)
			values[kept++] = cand / base;
	}
	if (kept < resamples / 2)
		rc = err_set(LL_EINVAL, "The baseline's statistic is zero; a ratio has no meaning.");
	else
		percentile_interval(values, (size_t)kept, level, ret_low, ret_high);
	if (values != stack)
		free(values);
	return rc;
}
int report_bootstrap_ci(const double *x, size_t n, enum stats_statistic statistic, double level,
			int resamples, uint64_t seed, bool keep, double *ret_low, double *ret_high)
{
	struct report_sample s = {0};
	int rc;

	if ((rc = check(n, 0, false, statistic, level, resamples)) == 0 &&
	    (rc = report_sample_set(&s, x, n)) == 0)
		rc = report_sample_bootstrap_ci(&s, statistic, level, resamples, seed, keep, ret_low,
						ret_high);
	report_sample_release(&s);
	return rc;
}

int report_bootstrap_ratio_ci(const double *x, size_t nx, const double *y, size_t ny,
			      enum stats_statistic statistic, double level, int resamples, uint64_t seed,
			      bool keep, double *ret_low, double *ret_high)
{
	struct report_sample sx = {0}, sy = {0};
	int rc;

	if ((rc = check(nx, ny, true, statistic, level, resamples)) == 0 &&
	    (rc = report_sample_set(&sx, x, nx)) == 0 && (rc = report_sample_set(&sy, y, ny)) == 0)
		rc = report_sample_bootstrap_ratio_ci(&sx, &sy, statistic, level, resamples, seed, keep,
						      ret_low, ret_high);
	report_sample_release(&sx);
	report_sample_release(&sy);
	return rc;
}

int report_median_ranks(const struct report_sorted *sides, int count, int resamples, uint64_t seed,
			struct report_sample *room, uint8_t *const *ret_lo, uint8_t *const *ret_hi)
{
	uint32_t range[REPORT_MAX_SIDES * REPORT_RANKED_MAX_N], offset[REPORT_MAX_SIDES], per = 0;
	uint8_t cum[REPORT_MAX_RESAMPLES_RANKED];
	size_t rr = (size_t)resamples, size;

	if (count < 1 || count > REPORT_MAX_SIDES || resamples < 1 || resamples > REPORT_MAX_RESAMPLES_RANKED)
		return err_set(LL_EINVAL, "Ranks of 1 to %d sides, at most %d resamples.", REPORT_MAX_SIDES,
			       REPORT_MAX_RESAMPLES_RANKED);
	for (int i = 0; i < count; i++) {
		if (sides[i].n == 0 || sides[i].n > REPORT_RANKED_MAX_N)
			return err_set(LL_EINVAL, "Ranks need 1 to %d samples.", REPORT_RANKED_MAX_N);
		offset[i] = per;
		per += sides[i].n;
	}
	size = rr * per;
	room->table_resamples = 0; /* the table below is no kept one */
	if (report_draws_room(room, size, size) < 0)
		return LL_ENOMEM;
	for (int i = 0; i < count; i++)
		for (uint32_t j = 0; j < sides[i].n; j++)
			range[offset[i] + j] = sides[i].n;
	report_draw_patterned(seed, (uint32_t)rr, per, range, room->batch);
	memset(room->table, 0, size);
	for (size_t r = 0; r < rr; r++) {
		const uint32_t *d = room->batch + r * per;
		for (int i = 0; i < count; i++) {
			uint8_t *t = room->table + (size_t)offset[i] * rr + r;
			for (uint32_t j = offset[i]; j < offset[i] + sides[i].n; j++)
				t[d[j] * rr]++;
		}
	}
	for (int i = 0; i < count; i++) {
		uint8_t at = (uint8_t)((sides[i].n - 1) / 2);
		report_draws_ranks(room->table + (size_t)offset[i] * rr, rr, sides[i].order, sides[i].n, at,
				   (uint8_t)(at + 1), cum, ret_lo[i], ret_hi[i]);
	}
	return 0;
}

int report_ranked_contrast_ci(const struct report_sorted *x, const struct report_sorted *xf,
			      const struct report_sorted *y, const struct report_sorted *yf,
			      const uint8_t *const *lo, const uint8_t *const *hi, bool divide, double level,
			      int resamples, double *ret_low, double *ret_high)
{
	double values[REPORT_MAX_RESAMPLES_RANKED];
	int kept = 0;

	if (resamples < 1 || resamples > REPORT_MAX_RESAMPLES_RANKED)
		return err_set(LL_EINVAL, "At most %d resamples.", REPORT_MAX_RESAMPLES_RANKED);
	for (int r = 0; r < resamples; r++) {
		double mx = report_ranked_value(x->sorted, x->n, STATS_MEDIAN, lo[0][r], hi[0][r]);
		double mxf = report_ranked_value(xf->sorted, xf->n, STATS_MEDIAN, lo[1][r], hi[1][r]);
		double my = report_ranked_value(y->sorted, y->n, STATS_MEDIAN, lo[2][r], hi[2][r]);
		double myf = report_ranked_value(yf->sorted, yf->n, STATS_MEDIAN, lo[3][r], hi[3][r]);
		double base = mx - mxf, cand = my - myf;
		if (divide) { /* stats_bootstrap_floor_ratio_ci() */
			base = mxf > 0 && myf > 0 ? mx / mxf : 0;
			cand = myf > 0 ? my / myf : 0;
		}
		if (base > 0)
			values[kept++] = cand / base;
	}
	if (kept < resamples / 2)
		return err_set(LL_EINVAL, "The baseline's figure is not above zero; a ratio has no meaning.");
	percentile_interval(values, (size_t)kept, level, ret_low, ret_high);
	return 0;
}
