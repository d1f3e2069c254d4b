/* report_paired.c: the paired floor ratio against a hand-checked case,
 * the sides that do not pair (the caller then falls back, outputs
 * untouched), rounds, and the same answer for the same seed. */
#include "check.h"
#include "report_paired.h"

#include "loadlab/err.h"

#define NEAR(a, b, eps) (fabs((a) - (b)) <= (eps))

/* A variant (or floor) of N values in measured order, in ROUNDS rounds. */
static struct report_compare_variant variant_of(const double *x, uint32_t n, const uint32_t *sizes,
						uint32_t rounds)
{
	return (struct report_compare_variant){.n = n, .values = x, .rounds = rounds, .round_sizes = sizes};
}

int main(void)
{
	/* base: r = 1.5, 2, 2.2, 3 (median 2.1); candidate: r = 2.31 in every pass */
	const double bx[4] = {150, 220, 330, 480}, bf[4] = {100, 110, 150, 160};
	const double cx[4] = {231, 462, 346.5, 693}, cf[4] = {100, 200, 150, 300};
	const double zero[4] = {100, 0, 150, 160};
	const uint32_t two[2] = {2, 2}, other[2] = {1, 3};
	struct report_compare_variant bv = variant_of(bx, 4, two, 2), bfv = variant_of(bf, 4, two, 2);
	struct report_compare_variant cv = variant_of(cx, 4, two, 2), cfv = variant_of(cf, 4, two, 2);
	struct report_paired_side base = {&bv, &bfv, bx, bf}, cand = {&cv, &cfv, cx, cf};
	double b = -1, c = -1, lo = -1, hi = -1, lo2, hi2, b2, c2;

	CHECK_EQ_INT(report_paired_floor_ratio(&base, &cand, false, 7, &b, &c, &lo, &hi), 0);
	CHECK(NEAR(b, 2.1, 1e-12) && NEAR(c, 2.31, 1e-12));
	/* each resample's ratio is 2.31 over a median of base's r: 0.77 .. 1.54 */
	CHECK(lo >= 2.31 / 3 - 1e-12 && hi <= 2.31 / 1.5 + 1e-12 && lo <= 1.1 && 1.1 <= hi);
	CHECK_EQ_INT(report_paired_floor_ratio(&base, &cand, false, 7, &b2, &c2, &lo2, &hi2), 0);
	CHECK(lo2 == lo && hi2 == hi && b2 == b && c2 == c); /* seeded */

	/* sides that do not pair: outputs untouched */
	b = c = lo = hi = -1;
	bfv.round_sizes = other; /* the same count, other rounds */
	CHECK_EQ_INT(report_paired_floor_ratio(&base, &cand, false, 7, &b, &c, &lo, &hi), LL_ENOTFOUND);
	bfv.round_sizes = two;
	cfv.n = 3; /* a floor sample fewer */
	cfv.rounds = 0;
	CHECK_EQ_INT(report_paired_floor_ratio(&base, &cand, false, 7, &b, &c, &lo, &hi), LL_ENOTFOUND);
	cfv = variant_of(zero, 4, two, 2); /* a floor of 0 */
	cand.xf = zero;
	CHECK_EQ_INT(report_paired_floor_ratio(&base, &cand, false, 7, &b, &c, &lo, &hi), LL_ENOTFOUND);
	CHECK(b == -1 && c == -1 && lo == -1 && hi == -1);

	{
		/* rounds: three of 4 passes; the candidate 10 % above in every
		 * pass, each pass's load (x1 .. x1.9) shared by variant and floor */
		double x[12], xf[12], y[12], yf[12];
		const uint32_t sizes[3] = {4, 4, 4};
		for (int k = 0; k < 12; k++) {
			double load = 1 + 0.1 * (k * 7 % 10), jitter = 1 + 0.01 * (k % 3);
			xf[k] = 500 * load;
			x[k] = 1000 * load * jitter;
			yf[k] = 500 * load * (2 - 0.1 * (k % 4));
			y[k] = 1100 * load * jitter * (2 - 0.1 * (k % 4));
		}
		struct report_compare_variant v1 = variant_of(x, 12, sizes, 3),
					      f1 = variant_of(xf, 12, sizes, 3);
		struct report_compare_variant v2 = variant_of(y, 12, sizes, 3),
					      f2 = variant_of(yf, 12, sizes, 3);
		struct report_paired_side s1 = {&v1, &f1, x, xf}, s2 = {&v2, &f2, y, yf};
		CHECK_EQ_INT(report_paired_floor_ratio(&s1, &s2, true, 3, &b, &c, &lo, &hi), 0);
		/* r = 2 x jitter (1, 1.01, 1.02): median 2.02; the candidate 10 % above */
		CHECK(NEAR(b, 2.02, 1e-9) && NEAR(c, 2.222, 1e-9));
		CHECK(lo > 1.05 && hi < 1.15 && lo <= c / b && c / b <= hi);
	}
	return check_finish();
}
