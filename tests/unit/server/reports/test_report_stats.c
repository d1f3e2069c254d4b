/* report_stats.c's bootstraps give stats.c's figures bit for bit: for
 * samples of many sizes (odd, even, one, with ties and zeros), both
 * statistics, seeds that repeat (kept draws) and seeds that do not. */
#include "check.h"
#include "reports/report_int.h"

#include "loadlab/err.h"
#include "loadlab/stats.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng = 42;

static double next_value(int kind)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	if (kind == 0) /* ties: a few values only */
		return (double)((rng >> 33) % 4) * 10;
	return 1000 + (double)((rng >> 33) % 100000) / 100;
}

static void fill(double *x, size_t n, int kind)
{
	for (size_t i = 0; i < n; i++)
		x[i] = next_value(kind);
}

static bool same(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/* What each sample size is tried with, in this order: the kind of values
 * (fill()), the statistic, whether report_stats.c keeps the draws. */
struct variation {
	int kind;
	enum stats_statistic statistic;
	bool keep;
};

#define VARIATIONS 8

static struct variation variation(int i)
{
	return (struct variation){i / 4, i / 2 % 2 ? STATS_MIN : STATS_MEDIAN, i % 2 != 0};
}

static void test_single(void)
{
	static const size_t sizes[] = {1, 2, 3, 4, 7, 30, 31, 64, 101, 255, 256, 300};
	double x[300], lo1, hi1, lo2, hi2;
	int mismatches = 0, runs = 0;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int i = 0; i < VARIATIONS; i++) {
			struct variation v = variation(i);
			uint64_t seed = 1000 + s * 7 + (uint64_t)v.kind;
			fill(x, sizes[s], v.kind);
			CHECK_EQ_INT(
				stats_bootstrap_ci(x, sizes[s], v.statistic, 0.95, 500, seed, &lo1, &hi1), 0);
			CHECK_EQ_INT(report_bootstrap_ci(x, sizes[s], v.statistic, 0.95, 500, seed, v.keep,
							 &lo2, &hi2),
				     0);
			mismatches += !same(lo1, lo2) || !same(hi1, hi2);
			runs++;
		}
	CHECK(runs == 96);
	CHECK_EQ_INT(mismatches, 0);
}

static void test_ratio(void)
{
	static const size_t sizes[][2] = {{1, 1},  {2, 3},     {30, 30},   {30, 29},
					  {8, 40}, {101, 100}, {255, 255}, {300, 300}};
	double x[300], y[300], lo1, hi1, lo2, hi2;
	int mismatches = 0, runs = 0;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int i = 0; i < VARIATIONS; i++) {
			struct variation v = variation(i);
			uint64_t seed = 77 + s;
			int rc1, rc2;
			fill(x, sizes[s][0], v.kind);
			fill(y, sizes[s][1], v.kind);
			rc1 = stats_bootstrap_ratio_ci(x, sizes[s][0], y, sizes[s][1], v.statistic, 0.95, 200,
						       seed, &lo1, &hi1);
			rc2 = report_bootstrap_ratio_ci(x, sizes[s][0], y, sizes[s][1], v.statistic, 0.95,
							200, seed, v.keep, &lo2, &hi2);
			CHECK_EQ_INT(rc1, rc2);
			mismatches += rc1 == 0 && (!same(lo1, lo2) || !same(hi1, hi2));
			runs += rc1 == 0;
		}
	CHECK(runs >= 24);
	CHECK_EQ_INT(mismatches, 0);
}

static bool same_summary(const struct stats_summary *a, const struct stats_summary *b)
{
	return a->n == b->n && same(a->min, b->min) && same(a->max, b->max) && same(a->mean, b->mean) &&
	       same(a->median, b->median) && same(a->stddev, b->stddev) && same(a->mad, b->mad) &&
	       same(a->p10, b->p10) && same(a->p90, b->p90);
}

/* One sort shared by every statistic: the summary, the outliers and the
 * Mann-Whitney test read from a report_sample equal stats.c's, for sizes
 * on both sides of the insertion sort's limit, with ties, and with one
 * sample reused for samples of other sizes. */
static void test_shared_sort(void)
{
	static const size_t sizes[] = {1, 2, 3, 7, 25, 30, 64, 65, 101, 30};
	double x[101], y[101], u1, p1, u2, p2;
	bool flags[101];
	struct report_sample sx = {0}, sy = {0};
	struct stats_summary a, b;
	int mismatches = 0, runs = 0;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int kind = 0; kind < 2; kind++) {
			size_t n = sizes[s], m = sizes[(s + 3) % 10], outliers;
			fill(x, n, kind);
			fill(y, m, kind);
			if (kind == 1 && n > 3)
				x[n / 2] = 90000; /* an outlier */
			CHECK_EQ_INT(report_sample_set(&sx, x, n), 0);
			CHECK_EQ_INT(report_sample_set(&sy, y, m), 0);
			CHECK_EQ_INT(stats_summarize(x, n, &a), 0);
			report_sample_summary(&sx, &b);
			mismatches += !same_summary(&a, &b);
			CHECK_EQ_INT(stats_outliers(x, n, 3.5, flags, &outliers), 0);
			mismatches += outliers != report_sample_outliers(&sx, &b, 3.5);
			CHECK_EQ_INT(stats_mann_whitney(y, m, x, n, &u1, &p1), 0);
			report_mann_whitney(&sy, &sx, &u2, &p2);
			mismatches += !same(u1, u2) || !same(p1, p2);
			runs++;
		}
	CHECK_EQ_INT(runs, 20);
	CHECK_EQ_INT(mismatches, 0);
	CHECK_EQ_INT(report_sample_set(&sx, x, 0), LL_EINVAL);
	report_sample_release(&sx);
	report_sample_release(&sy);
}

/* The over-floor and floor-ratio intervals from ranks
 * (report_median_ranks() and report_ranked_contrast_ci()) against
 * stats_bootstrap_contrast_ci() and stats_bootstrap_floor_ratio_ci(), bit
 * for bit: sizes equal and not, odd and even, ties, floors close to the
 * variant (resamples dropped when the baseline is not above its floor)
 * and above it (the error then agrees). */
static void test_contrast(void)
{
	static const size_t sizes[][4] = {
		{30, 30, 30, 30}, {30, 25, 31, 30}, {1, 2, 3, 1}, {255, 7, 100, 255}, {9, 9, 9, 9}};
	int mismatches = 0, runs = 0, refused = 0;

	for (size_t c = 0; c < sizeof(sizes) / sizeof(sizes[0]); c++)
		for (int kind = 0; kind < 3; kind++) {
			double x[4][255], lo1 = 0, hi1 = 0, lo2 = 0, hi2 = 0;
			struct report_sample s[4] = {{0}}, room = {0};
			struct report_sorted sorted[4];
			struct stats_sample st[4];
			uint8_t ranks[8][REPORT_COMPARE_RESAMPLES], *lo[4], *hi[4];
			uint64_t seed = 77 + c * 3 + (uint64_t)kind;
			int rc1, rc2;
			for (int i = 0; i < 4; i++) {
				fill(x[i], sizes[c][i], kind == 0 ? 0 : 1);
				if (kind == 2 && i % 2) /* a floor above its variant */
					for (size_t k = 0; k < sizes[c][i]; k++)
						x[i][k] += 600;
				st[i] = (struct stats_sample){x[i], sizes[c][i], NULL, 0};
				CHECK_EQ_INT(report_sample_set(&s[i], x[i], sizes[c][i]), 0);
				sorted[i] = report_sorted_of(&s[i]);
				lo[i] = ranks[2 * i];
				hi[i] = ranks[2 * i + 1];
			}
			rc1 = stats_bootstrap_contrast_ci(&st[0], &st[1], &st[2], &st[3], STATS_MEDIAN, 0.95,
							  REPORT_COMPARE_RESAMPLES, seed, &lo1, &hi1);
			CHECK_EQ_INT(
				report_median_ranks(sorted, 4, REPORT_COMPARE_RESAMPLES, seed, &room, lo, hi),
				0);
			rc2 = report_ranked_contrast_ci(&sorted[0], &sorted[1], &sorted[2], &sorted[3],
							(const uint8_t *const *)lo,
							(const uint8_t *const *)hi, false, 0.95,
							REPORT_COMPARE_RESAMPLES, &lo2, &hi2);
			CHECK_EQ_INT(rc1, rc2);
			refused += rc1 < 0;
			mismatches += rc1 == 0 && (!same(lo1, lo2) || !same(hi1, hi2));
			/* floor-ratio: the same draws, each side divided by its floor */
			rc1 = stats_bootstrap_floor_ratio_ci(&st[0], &st[1], &st[2], &st[3], STATS_MEDIAN,
							     0.95, REPORT_COMPARE_RESAMPLES, seed, &lo1,
							     &hi1);
			rc2 = report_ranked_contrast_ci(
				&sorted[0], &sorted[1], &sorted[2], &sorted[3], (const uint8_t *const *)lo,
				(const uint8_t *const *)hi, true, 0.95, REPORT_COMPARE_RESAMPLES, &lo2, &hi2);
			CHECK_EQ_INT(rc1, 0);
			CHECK_EQ_INT(rc2, 0);
			mismatches += !same(lo1, lo2) || !same(hi1, hi2);
			runs++;
			for (int i = 0; i < 4; i++)
				report_sample_release(&s[i]);
			report_sample_release(&room);
		}
	CHECK_EQ_INT(runs, 15);
	CHECK(refused >= 1 && refused < runs);
	CHECK_EQ_INT(mismatches, 0);
}

int main(void)
{
	test_contrast();
	test_single();
	test_ratio();
	test_shared_sort();
	return check_finish();
}
