/* stats: against published values and a second, brute-force implementation. */
#include "check.h"
#include "loadlab/err.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdlib.h>

#define NEAR(a, b, eps) (fabs((a) - (b)) <= (eps))

static void test_summary_and_quantiles(void)
{
	const double one_to_ten[] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
	const double skewed[] = {1, 1, 2, 2, 4, 6, 9};
	struct stats_summary s = {0};
	double q = -1;

	/* R: quantile(1:10, c(.1, .5, .9)) = 1.9 5.5 9.1 (type 7). */
	CHECK_EQ_INT(stats_summarize(one_to_ten, 10, &s), 0);
	CHECK(NEAR(s.median, 5.5, 1e-12) && NEAR(s.p10, 1.9, 1e-12) && NEAR(s.p90, 9.1, 1e-12));
	CHECK(NEAR(s.mean, 5.5, 1e-12) && s.min == 1 && s.max == 10 && s.n == 10);
	CHECK(NEAR(s.stddev, 3.0276503540974917, 1e-12)); /* R: sd(1:10) */
	CHECK(NEAR(s.mad, 2.5, 1e-12));                   /* R: mad(1:10, constant = 1) */
	CHECK_EQ_INT(stats_summarize(skewed, 7, &s), 0);
	CHECK(NEAR(s.median, 2, 1e-12) && NEAR(s.mad, 1, 1e-12));
	CHECK_EQ_INT(stats_quantile(skewed, 7, 0.25, &q), 0);
	CHECK(NEAR(q, 1.5, 1e-12)); /* R: quantile(c(1,1,2,2,4,6,9), .25) */
	CHECK_EQ_INT(stats_quantile(skewed, 7, 1.5, &q), LL_EINVAL);
	CHECK(NEAR(q, 1.5, 1e-12)); /* untouched */
	CHECK_EQ_INT(stats_summarize(skewed, 0, &s), LL_EINVAL);
	{
		const double single[] = {42};
		CHECK_EQ_INT(stats_summarize(single, 1, &s), 0);
		CHECK(s.median == 42 && s.stddev == 0 && s.mad == 0);
		double bad[] = {1, NAN};
		CHECK_EQ_INT(stats_summarize(bad, 2, &s), LL_EINVAL);
	}
}

/* The second implementation: U by counting pairs, the variance's tie
 * term by counting equal values directly. */
static void reference_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, double *ret_u,
				   double *ret_p)
{
	double u = 0, ties = 0, n = (double)(nx + ny);
	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			u += x[i] > y[j] ? 1 : x[i] == y[j] ? 0.5 : 0;
	for (size_t i = 0; i < nx + ny; i++) {
		double v = i < nx ? x[i] : y[i - nx], t = 0;
		bool first = true;
		for (size_t k = 0; k < nx + ny; k++) {
			double w = k < nx ? x[k] : y[k - nx];
			if (w == v) {
				t++;
				if (k < i)
					first = false;
			}
		}
		if (first)
			ties += t * t * t - t;
	}
	double mu = nx * ny / 2.0;
	double sigma = sqrt(nx * ny / 12.0 * ((n + 1) - ties / (n * (n - 1))));
	double z = fmax(fabs(u - mu) - 0.5, 0) / sigma;
	*ret_u = u;
	*ret_p = 2 * (1 - 0.5 * erfc(-z / sqrt(2.0)));
}

static void test_mann_whitney(void)
{
	const double a[] = {1, 2, 3}, b[] = {4, 5, 6};
	double u = -1, p = -1, ru, rp;

	/* R: wilcox.test(1:3, 4:6, exact = FALSE): W = 0, p-value = 0.08086. */
	CHECK_EQ_INT(stats_mann_whitney(a, 3, b, 3, &u, &p), 0);
	CHECK(u == 0);
	CHECK(NEAR(p, 0.08086, 5e-6));
	CHECK_EQ_INT(stats_mann_whitney(b, 3, a, 3, &u, &p), 0);
	CHECK(u == 9 && NEAR(p, 0.08086, 5e-6));

	/* Random samples with many ties, against the second implementation. */
	srand(7);
	for (int round = 0; round < 50; round++) {
		double x[40], y[35];
		size_t nx = 5 + (size_t)(rand() % 35), ny = 5 + (size_t)(rand() % 30);
		for (size_t i = 0; i < nx; i++)
			x[i] = rand() % 12;
		for (size_t i = 0; i < ny; i++)
			y[i] = rand() % 12 + (round % 3);
		CHECK_EQ_INT(stats_mann_whitney(x, nx, y, ny, &u, &p), 0);
		reference_mann_whitney(x, nx, y, ny, &ru, &rp);
		CHECK(NEAR(u, ru, 1e-9));
		CHECK(NEAR(p, rp, 1e-9));
	}
	{
		const double same[] = {5, 5, 5};
		CHECK_EQ_INT(stats_mann_whitney(same, 3, same, 3, &u, &p), 0);
		CHECK(p == 1);
	}
}

static void test_bootstrap(void)
{
	double x[30], lo = 0, hi = 0, lo2 = 0, hi2 = 0, median = 0;
	const double constant[] = {3, 3, 3, 3};

	srand(11);
	for (int i = 0; i < 30; i++)
		x[i] = 1000 + rand() % 100;
	CHECK_EQ_INT(stats_median(x, 30, &median), 0);
	CHECK_EQ_INT(stats_bootstrap_ci(x, 30, STATS_MEDIAN, 0.95, 2000, 42, &lo, &hi), 0);
	CHECK(lo <= median && median <= hi && lo < hi);
	CHECK_EQ_INT(stats_bootstrap_ci(x, 30, STATS_MEDIAN, 0.95, 2000, 42, &lo2, &hi2), 0);
	CHECK(lo == lo2 && hi == hi2); /* reproducible from its seed */
	CHECK_EQ_INT(stats_bootstrap_ci(x, 30, STATS_MEDIAN, 0.50, 2000, 42, &lo2, &hi2), 0);
	CHECK(lo2 >= lo && hi2 <= hi); /* a lower level is narrower */
	{
		struct stats_summary s;
		stats_summarize(x, 30, &s);
		CHECK_EQ_INT(stats_bootstrap_ci(x, 30, STATS_MIN, 0.95, 2000, 1, &lo, &hi), 0);
		CHECK(lo == s.min && hi >= s.min);
	}
	CHECK_EQ_INT(stats_bootstrap_ci(constant, 4, STATS_MEAN, 0.95, 500, 1, &lo, &hi), 0);
	CHECK(lo == 3 && hi == 3);
	CHECK_EQ_INT(stats_bootstrap_ci(x, 30, STATS_MEDIAN, 1.5, 2000, 1, &lo, &hi), LL_EINVAL);
	CHECK_EQ_INT(stats_bootstrap_ci(x, 30, STATS_MEDIAN, 0.95, 10, 1, &lo, &hi), LL_ERANGE);

	/* Ratio: y = 1.1 x exactly gives a ratio of 1.1 in every resample
	 * only when resampled alike; with independent resamples the interval
	 * must still contain 1.1 and exclude 1. */
	{
		double y[30];
		for (int i = 0; i < 30; i++)
			y[i] = x[i] * 1.1;
		CHECK_EQ_INT(stats_bootstrap_ratio_ci(x, 30, y, 30, STATS_MEDIAN, 0.95, 2000, 9, &lo, &hi),
			     0);
		CHECK(lo < 1.1 && 1.1 < hi && lo > 1.0);
	}
}

/* The bootstrap takes medians by selection, not by sorting: for small odd
 * and even samples, the interval's ends must still be medians a resample
 * can have, that is values of the sample or midpoints of two of them
 * (with these seeds, the percentiles fall on such values). */
static void test_bootstrap_median_values(void)
{
	for (size_t n = 1; n <= 9; n++) {
		double x[9], lo, hi;
		for (size_t i = 0; i < n; i++)
			x[i] = (double)((i * 7) % 5) * 10;
		CHECK_EQ_INT(stats_bootstrap_ci(x, n, STATS_MEDIAN, 0.99, 1000, n, &lo, &hi), 0);
		bool lo_ok = false, hi_ok = false;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++) {
				lo_ok |= NEAR(lo, (x[i] + x[j]) / 2, 1e-9);
				hi_ok |= NEAR(hi, (x[i] + x[j]) / 2, 1e-9);
			}
		CHECK(lo_ok && hi_ok);
	}
}

static void test_outliers(void)
{
	const double x[] = {10, 10, 11, 10, 12, 11, 10, 100};
	bool flags[8];
	size_t count = 0;

	CHECK_EQ_INT(stats_outliers(x, 8, 3.5, flags, &count), 0);
	CHECK_EQ_INT(count, 1);
	CHECK(flags[7] && !flags[0] && !flags[4]);
	{
		const double flat[] = {5, 5, 5, 9};
		CHECK_EQ_INT(stats_outliers(flat, 4, 3.5, flags, &count), 0);
		CHECK_EQ_INT(count, 0); /* MAD is 0: nothing can be called an outlier */
	}
}

int main(void)
{
	test_summary_and_quantiles();
	test_mann_whitney();
	test_bootstrap();
	test_bootstrap_median_values();
	test_outliers();
	return check_finish();
}
