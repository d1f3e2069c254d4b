/* The floor ratio paired by pass: see report_paired.h. */
#include "report_paired.h"

#include "loadlab/err.h"
#include "loadlab/stats.h"

#include <stdlib.h>

/* SIDE's r_k into R (SIDE->v->n values); LL_ENOTFOUND when it cannot be
 * paired. */
static int pass_ratios(const struct report_paired_side *side, double *r)
{
	const struct report_compare_variant *v = side->v, *f = side->f;
	struct stats_sample sv = {side->x, v->n, v->rounds ? v->round_sizes : NULL, v->rounds};
	struct stats_sample sf = {side->xf, f->n, f->rounds ? f->round_sizes : NULL, f->rounds};

	return stats_paired_ratios(&sv, &sf, r) < 0 ? LL_ENOTFOUND : 0;
}

int report_paired_floor_ratio(const struct report_paired_side *base, const struct report_paired_side *cand,
			      bool rounds, uint64_t seed, double *ret_base, double *ret_cand, double *ret_low,
			      double *ret_high)
{
	const struct report_compare_variant *bv = base->v, *cv = cand->v;
	double *rx, *ry, mx = 0, my = 0, lo = 0, hi = 0;
	int rc;

	if (!bv->n || !cv->n || !base->x || !base->xf || !cand->x || !cand->xf)
		return LL_ENOTFOUND;
	if (!(rx = malloc((bv->n + cv->n) * sizeof(*rx))))
		return LL_ENOMEM;
	ry = rx + bv->n;
	if ((rc = pass_ratios(base, rx)) == 0 && (rc = pass_ratios(cand, ry)) == 0) {
		struct stats_sample x = {rx, bv->n, rounds ? bv->round_sizes : NULL, rounds ? bv->rounds : 0};
		struct stats_sample y = {ry, cv->n, rounds ? cv->round_sizes : NULL, rounds ? cv->rounds : 0};
		/* without rounds report_stats.c's faster bootstrap of the ratio
		 * of medians (stats_bootstrap_ratio_ci()'s figures) */
		rc = stats_median(rx, bv->n, &mx) < 0 || stats_median(ry, cv->n, &my) < 0 || !(mx > 0) ||
				     (rounds ? stats_bootstrap_contrast_ci(&x, NULL, &y, NULL, STATS_MEDIAN,
									   0.95, REPORT_COMPARE_RESAMPLES,
									   seed, &lo, &hi)
					     : report_bootstrap_ratio_ci(rx, bv->n, ry, cv->n, STATS_MEDIAN,
									 0.95, REPORT_COMPARE_RESAMPLES, seed,
									 false, &lo, &hi)) < 0
			     ? LL_EINVAL
			     : 0;
	}
	free(rx);
	if (rc < 0)
		return rc;
	*ret_base = mx;
	*ret_cand = my;
	*ret_low = lo;
	*ret_high = hi;
	return 0;
}

int report_paired_floor_ratio_cached(const struct report_compare_variant *bv,
				     const struct report_compare_variant *cv, double *ret_base,
				     double *ret_cand, double *ret_low, double *ret_high)
{
	const int r = REPORT_COMPARE_RESAMPLES;
	const uint8_t *b = bv->paired_ranks, *c = cv->paired_ranks;
	double mx, my, lo, hi;

	if (!bv->paired || !cv->paired || bv->n != cv->n || !bv->n)
		return LL_ENOTFOUND;
	/* stats_median() of the r_k: the type-7 median of the sorted values */
	mx = stats_quantile_sorted(bv->paired, bv->n, 0.5);
	my = stats_quantile_sorted(cv->paired, cv->n, 0.5);
	if (!(mx > 0) || report_ranked_ratio_ci(bv->paired, bv->n, b, b + r, cv->paired, cv->n, c, c + r,
						STATS_MEDIAN, 0.95, r, &lo, &hi) < 0)
		return LL_EINVAL;
	*ret_base = mx;
	*ret_cand = my;
	*ret_low = lo;
	*ret_high = hi;
	return 0;
}
