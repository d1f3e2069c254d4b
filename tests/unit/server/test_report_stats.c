/* report_stats.c's bootstraps give stats.c's figures bit for bit: for
 * samples of many sizes (odd, even, one, with ties and zeros), both
 * statistics, seeds that repeat (kept draws) and seeds that do not. */
#include "check.h"
#include "report_int.h"

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

static void test_single(void)
{
	static const size_t sizes[] = {1, 2, 3, 4, 7, 30, 31, 64, 101};
	double x[101], lo1, hi1, lo2, hi2;
	int mismatches = 0, runs = 0;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int kind = 0; kind < 2; kind++)
			for (int stat = 0; stat < 2; stat++)
				for (int keep = 0; keep < 2; keep++) {
					enum stats_statistic st = stat ? STATS_MIN : STATS_MEDIAN;
					uint64_t seed = 1000 + s * 7 + (uint64_t)kind;
					fill(x, sizes[s], kind);
					CHECK_EQ_INT(stats_bootstrap_ci(x, sizes[s], st, 0.95, 500, seed, &lo1, &hi1), 0);
					CHECK_EQ_INT(report_bootstrap_ci(x, sizes[s], st, 0.95, 500, seed, keep, &lo2, &hi2), 0);
					mismatches += !same(lo1, lo2) || !same(hi1, hi2);
					runs++;
				}
	CHECK(runs == 72);
	CHECK_EQ_INT(mismatches, 0);
}

static void test_ratio(void)
{
	static const size_t sizes[][2] = {{1, 1}, {2, 3}, {30, 30}, {30, 29}, {8, 40}, {101, 100}};
	double x[101], y[101], lo1, hi1, lo2, hi2;
	int mismatches = 0, runs = 0;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int kind = 0; kind < 2; kind++)
			for (int stat = 0; stat < 2; stat++)
				for (int keep = 0; keep < 2; keep++) {
					enum stats_statistic st = stat ? STATS_MIN : STATS_MEDIAN;
					uint64_t seed = 77 + s;
					int rc1, rc2;
					fill(x, sizes[s][0], kind);
					fill(y, sizes[s][1], kind);
					rc1 = stats_bootstrap_ratio_ci(x, sizes[s][0], y, sizes[s][1], st, 0.95, 200,
								       seed, &lo1, &hi1);
					rc2 = report_bootstrap_ratio_ci(x, sizes[s][0], y, sizes[s][1], st, 0.95, 200,
									seed, keep, &lo2, &hi2);
					CHECK_EQ_INT(rc1, rc2);
					mismatches += rc1 == 0 && (!same(lo1, lo2) || !same(hi1, hi2));
					runs += rc1 == 0;
				}
	CHECK(runs >= 24);
	CHECK_EQ_INT(mismatches, 0);
}

int main(void)
{
	test_single();
	test_ratio();
	return check_finish();
}
