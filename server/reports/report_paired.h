/*
 * report_paired.h - the floor ratio paired by pass (issue 12), for the
 * metric floor-ratio of compare (report_compare.c).
 *
 * The agent's warm timer takes samples in passes: pass k runs every
 * program once, the variants and the empty-program floor, in a fresh
 * shuffle, and writes each into slot k (a retake for noise stays in its
 * slot). So a variant's sample k and its floor's sample k were taken
 * milliseconds apart, and their ratio r_k = v_k / f_k cancels any load
 * that moves slower than a pass: across the run (the host shifting whole
 * runs) and within it. A side's figure is the median of its r_k; the
 * interval resamples each side's passes (by rounds, then passes within
 * them, when the row is in rounds). docs/statistics.md, "floor-ratio".
 */
#ifndef LOADLAB_SERVER_REPORT_PAIRED_H
#define LOADLAB_SERVER_REPORT_PAIRED_H

#include "report_int.h"

#include <stdbool.h>
#include <stdint.h>

/* One result's side of a row: its variant V and its floor F, with their
 * samples in measured order X and XF (V->n and F->n values). */
struct report_paired_side {
	const struct report_compare_variant *v, *f;
	const double *x, *xf;
};

/* The paired floor ratio of a row: *RET_BASE and *RET_CAND, each side's
 * median of r_k, and the percentile bootstrap 95 % interval *RET_LOW ..
 * *RET_HIGH of their ratio (candidate over baseline) from
 * REPORT_COMPARE_RESAMPLES resamples seeded by SEED, each side resampled on
 * its own, hierarchically by its rounds when ROUNDS (the row is in rounds:
 * stats_bootstrap_contrast_ci()), else by pass (report_bootstrap_ratio_ci()). LL_ENOTFOUND when a side cannot be paired (its variant and
 * floor differ in count or round sizes, or a floor sample is not above 0):
 * the caller then divides the medians, unpaired. LL_EINVAL when the
 * interval cannot be drawn, LL_ENOMEM. Outputs untouched on failure. */
int report_paired_floor_ratio(const struct report_paired_side *base, const struct report_paired_side *cand,
			      bool rounds, uint64_t seed, double *ret_base, double *ret_cand, double *ret_low,
			      double *ret_high);

/* The same figures, bit for bit, for a row without rounds from the ranks
 * cached in the compare data of its variants BV and CV
 * (report_compare_data.c, DATA_PAIRED: the over-floor SEED's draws): no
 * bootstrap drawn. LL_ENOTFOUND when a side has no such data or the two
 * differ in sample count (then report_paired_floor_ratio()); LL_EINVAL
 * when it would give LL_EINVAL. Outputs untouched on failure. */
int report_paired_floor_ratio_cached(const struct report_compare_variant *bv,
				     const struct report_compare_variant *cv, double *ret_base,
				     double *ret_cand, double *ret_low, double *ret_high);

#endif
