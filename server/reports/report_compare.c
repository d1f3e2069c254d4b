/* Two jobs compared for CI: see report.h. */
#include "report_between.h"
#include "report_int.h"
#include "report_paired.h"
#include "report_row.h"
#include "report_sides.h"
#include "summary.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

static bool facts_differ(const struct report_compare_data *a, const struct report_compare_data *b,
			 char *reason, size_t size)
{
	for (int i = 0; i < REPORT_COMPARED_FACTS; i++) {
		const char *x = a->facts[i], *y = b->facts[i];
		size_t nx = a->fact_len[i], ny = b->fact_len[i];
		if (!x && !y)
			continue;
		if (x && y && nx == ny && memcmp(x, y, nx) == 0)
			continue; /* printed alike: equal */
		snprintf(reason, size, "the agents' facts differ: %s %.*s vs %.*s", report_compared_facts[i],
			 x ? (int)nx : 4, x ? x : "none", y ? (int)ny : 4, y ? y : "none");
		return true;
	}
	return false;
}

static int not_comparable(struct report_row *row, const char *reason)
{
	report_row_string(row, "status", "not_comparable");
	report_row_string(row, "reason", reason);
	report_row_bool(row, "regression", false);
	row->status = "not_comparable";
	row->regression = false;
	return row->rc;
}

/* Room reused row after row. */
struct row_room {
	struct report_sample base, cand;
	double *x, *y;              /* samples put back in their measured order */
	double *floor_x, *floor_y;  /* the same for over-floor */
	struct report_sample draws; /* over-floor's table of draws */
	uint32_t order[2][255];     /* ranked variants' order, widened */
	uint8_t ranks[2 * REPORT_MAX_SIDES][REPORT_MAX_RESAMPLES_RANKED];
};

/* What a row's figures found, for its metric. */
struct row_figures {
	double change, min_change, min_lo, min_hi;
	double lo, hi, p; /* the median ratio's interval and test */
	bool significant, min_ci;
};

/* The median ratio's interval and test from ROW's figures, for the
 * between-job term (report_between_judge()), before they are taken. */
static void keep_interval(struct report_row *row, struct row_figures *f)
{
	f->lo = number(row->figures, "ratio_ci_low", 0);
	f->hi = number(row->figures, "ratio_ci_high", 0);
	f->p = number(row->figures, "p_value", 1);
	report_row_take(row);
}

/* Significant by a ratio's interval LO .. HI alone (CHANGE in %): all of it beyond the least effect. */
static bool interval_significant(double lo, double hi, double change)
{
	return (lo > 1 + REPORT_MIN_EFFECT || hi < 1 - REPORT_MIN_EFFECT) &&
	       fabs(change) >= REPORT_MIN_EFFECT_PCT;
}

/* The minimum's figures from the summaries' minimums and its interval. */
static void add_min_interval(struct report_row *row, double base_min, double cand_min, double lo, double hi,
			     struct row_figures *f)
{
	report_row_number(row, "min_ratio_ci_low", round_to(lo, 0.0001));
	report_row_number(row, "min_ratio_ci_high", round_to(hi, 0.0001));
	f->min_change = (cand_min / base_min - 1) * 100;
	f->min_lo = lo;
	f->min_hi = hi;
	f->min_ci = true;
}

/* The figures of a row whose two samples have ranks cached for the same
 * size (report_compare_data.c): what the bootstraps would give, without
 * drawing. */
static int ranked_figures(const struct report_compare_variant *bv, const struct report_compare_variant *cv,
			  struct report_row *row, struct row_figures *f)
{
	const int r = REPORT_COMPARE_RESAMPLES;
	struct report_sample x = {.sorted = (double *)bv->values, .n = bv->n};
	struct report_sample y = {.sorted = (double *)cv->values, .n = cv->n};
	struct stats_summary sx = {.median = stats_quantile_sorted(bv->values, bv->n, 0.5),
				   .min = bv->values[0]};
	struct stats_summary sy = {.median = stats_quantile_sorted(cv->values, cv->n, 0.5),
				   .min = cv->values[0]};
	double u, p, lo, hi;

	report_row_number(row, "baseline_median_us", round_to(sx.median, 0.1));
	report_row_number(row, "candidate_median_us", round_to(sy.median, 0.1));
	report_row_number(row, "baseline_min_us", round_to(sx.min, 0.1));
	report_row_number(row, "candidate_min_us", round_to(sy.min, 0.1));
	if (sx.median <= 0 || sx.min <= 0 ||
	    report_ranked_ratio_ci(bv->values, bv->n, bv->ranks, bv->ranks + r, cv->values, cv->n, cv->ranks,
				   cv->ranks + r, STATS_MEDIAN, 0.95, r, &lo, &hi) < 0)
		return LL_EINVAL;
	report_mann_whitney(&y, &x, &u, &p);
	report_compare_figures(&sx, &sy, p, lo, hi, row->figures, &f->change, &f->significant);
	keep_interval(row, f);
	if (report_ranked_ratio_ci(bv->values, bv->n, bv->ranks + 2 * r, bv->ranks + 2 * r, cv->values, cv->n,
				   cv->ranks + 2 * r, cv->ranks + 2 * r, STATS_MIN, 0.95, r, &lo, &hi) == 0)
		add_min_interval(row, sx.min, sy.min, lo, hi, f);
	return 0;
}

/* BV's and CV's samples into ROOM, their summaries into *SX and *SY, and
 * the row's medians and minima; LL_ENOMEM. */
static int sampled_medians(const struct report_compare_variant *bv, const struct report_compare_variant *cv,
			   struct row_room *room, struct report_row *row, struct stats_summary *sx,
			   struct stats_summary *sy)
{
	if (report_compare_variant_sample(bv, &room->base, &room->x) < 0 ||
	    report_compare_variant_sample(cv, &room->cand, &room->y) < 0)
		return LL_ENOMEM;
	report_sample_summary(&room->base, sx);
	report_sample_summary(&room->cand, sy);
	report_row_number(row, "baseline_median_us", round_to(sx->median, 0.1));
	report_row_number(row, "candidate_median_us", round_to(sy->median, 0.1));
	report_row_number(row, "baseline_min_us", round_to(sx->min, 0.1));
	report_row_number(row, "candidate_min_us", round_to(sy->min, 0.1));
	return 0;
}

/* The same from the samples, bootstrapped here (unequal sizes, or more
 * than 255 samples). */
static int drawn_figures(const char *variant, const char *key, const struct report_compare_variant *bv,
			 const struct report_compare_variant *cv, struct row_room *room,
			 struct report_row *row, struct row_figures *f)
{
	struct stats_summary sx, sy;
	double lo, hi;

	if (sampled_medians(bv, cv, room, row, &sx, &sy) < 0)
		return LL_ENOMEM;
	if (report_compare_samples(&room->base, &sx, &room->cand, &sy, REPORT_COMPARE_RESAMPLES,
				   stats_seed_of(key) ^ stats_seed_of(variant), false, row->figures,
				   &f->change, &f->significant) < 0)
		return LL_EINVAL;
	keep_interval(row, f);
	if (report_sample_bootstrap_ratio_ci(&room->base, &room->cand, STATS_MIN, 0.95,
					     REPORT_COMPARE_RESAMPLES, stats_seed_of(variant), true, &lo,
					     &hi) == 0)
		add_min_interval(row, sx.min, sy.min, lo, hi, f);
	return 0;
}

/* The median of V's samples, as stats_median() gives it: read in its
 * sorted values when it is ranked, or in SORTED (V's samples sorted, when
 * not NULL and holding them), else stats_median(). */
static int median_of(const struct report_compare_variant *v, const struct report_sample *sorted, double *ret)
{
	if (v->ranked) {
		*ret = stats_quantile_sorted(v->values, v->n, 0.5);
		return 0;
	}
	if (sorted && sorted->n == v->n && v->n) {
		*ret = stats_quantile_sorted(sorted->sorted, v->n, 0.5);
		return 0;
	}
	return stats_median(v->values, v->n, ret);
}

/* V as a sample for stats_bootstrap_contrast_ci(): with its rounds when
 * ROUNDS and it has at least REPORT_MIN_ROUNDS. */
static struct stats_sample sample_of(const struct report_compare_variant *v, const double *x, bool rounds)
{
	bool use = rounds && v->rounds >= REPORT_MIN_ROUNDS;

	return (struct stats_sample){x, v->n, use ? v->round_sizes : NULL, use ? v->rounds : 0};
}

/* The same figures with rounds as the unit (both sides have at least
 * REPORT_MIN_ROUNDS, docs/statistics.md): the median ratio's and the
 * minimum ratio's intervals from a hierarchical bootstrap (rounds, then
 * samples within them), the Mann-Whitney test on the rounds' medians, and
 * significance by the interval and the least effect alone. */
static int rounds_figures(const char *variant, const char *key, const struct report_compare_variant *bv,
			  const struct report_compare_variant *cv, struct row_room *room,
			  struct report_row *row, struct row_figures *f)
{
	struct stats_summary sx, sy;
	struct stats_sample x, y;
	double lo, hi, u, p, *mx = NULL, *my = NULL;
	int rc = LL_EINVAL;

	if (sampled_medians(bv, cv, room, row, &sx, &sy) < 0)
		return LL_ENOMEM;
	x = sample_of(bv, room->base.x, true);
	y = sample_of(cv, room->cand.x, true);
	mx = malloc(x.rounds * sizeof(*mx));
	my = malloc(y.rounds * sizeof(*my));
	if (!mx || !my) {
		rc = LL_ENOMEM;
		goto done;
	}
	if (sx.median <= 0 || sx.min <= 0 ||
	    stats_bootstrap_contrast_ci(&x, NULL, &y, NULL, STATS_MEDIAN, 0.95, REPORT_COMPARE_RESAMPLES,
					stats_seed_of(key) ^ stats_seed_of(variant), &lo, &hi) < 0 ||
	    stats_round_statistics(&x, STATS_MEDIAN, mx) < 0 ||
	    stats_round_statistics(&y, STATS_MEDIAN, my) < 0 ||
	    stats_mann_whitney(my, y.rounds, mx, x.rounds, &u, &p) < 0)
		goto done;
	report_compare_figures(&sx, &sy, p, lo, hi, row->figures, &f->change, &f->significant);
	keep_interval(row, f);
	f->significant = interval_significant(lo, hi, f->change);
	report_row_set_significant(row, f->significant);
	if (stats_bootstrap_contrast_ci(&x, NULL, &y, NULL, STATS_MIN, 0.95, REPORT_COMPARE_RESAMPLES,
					stats_seed_of(variant), &lo, &hi) == 0)
		add_min_interval(row, sx.min, sy.min, lo, hi, f);
	report_row_string(row, "unit", "rounds");
	report_row_number(row, "baseline_rounds", (double)x.rounds);
	report_row_number(row, "candidate_rounds", (double)y.rounds);
	rc = 0;
done:
	free(mx);
	free(my);
	return rc;
}

/* The over-floor interval of ranked variants BV and CV over the sorted
 * floors BF and CF, without rounds (report_median_ranks()): what
 * stats_bootstrap_contrast_ci() gives, bit for bit (DIVIDE: the
 * floor-ratio interval, stats_bootstrap_floor_ratio_ci()'s). */
static int ranked_over_floor(const struct report_compare_variant *bv, const struct report_compare_variant *cv,
			     const struct report_sample *bf, const struct report_sample *cf, uint64_t seed,
			     bool divide, struct row_room *room, double *ret_low, double *ret_high)
{
	struct report_sorted s[4] = {{bv->values, room->order[0], bv->n},
				     report_sorted_of(bf),
				     {cv->values, room->order[1], cv->n},
				     report_sorted_of(cf)};
	const size_t r = REPORT_COMPARE_RESAMPLES;
	uint8_t *lo[4], *hi[4];
	int rc;

	if (bv->floor_ranks && cv->floor_ranks && bv->n == cv->n && bf->n == cf->n) {
		/* drawn at summary time (report_compare_data.c) */
		const uint8_t *b = bv->floor_ranks, *c = cv->floor_ranks;
		const uint8_t *clo[4] = {b, b + 2 * r, c, c + 2 * r};
		const uint8_t *chi[4] = {b + r, b + 3 * r, c + r, c + 3 * r};
		return report_ranked_contrast_ci(&s[0], &s[1], &s[2], &s[3], clo, chi, divide, 0.95, (int)r,
						 ret_low, ret_high) < 0
			       ? LL_EINVAL
			       : 0;
	}
	for (uint32_t k = 0; k < bv->n; k++)
		room->order[0][k] = bv->order[k];
	for (uint32_t k = 0; k < cv->n; k++)
		room->order[1][k] = cv->order[k];
	for (int i = 0; i < 4; i++) {
		lo[i] = room->ranks[2 * i];
		hi[i] = room->ranks[2 * i + 1];
	}
	if ((rc = report_median_ranks(s, 4, REPORT_COMPARE_RESAMPLES, seed, &room->draws, lo, hi)) < 0)
		return rc;
	return report_ranked_contrast_ci(&s[0], &s[1], &s[2], &s[3], (const uint8_t *const *)lo,
					 (const uint8_t *const *)hi, divide, 0.95, REPORT_COMPARE_RESAMPLES,
					 ret_low, ret_high) < 0
		       ? LL_EINVAL
		       : 0;
}

/* A side's variant and floor, for the floor intervals; the samples'
 * values as measured are put in only when an interval is drawn
 * (measure_sides()). */
struct floor_sides {
	const struct report_compare_variant *bv, *cv, *bf, *cf;
	const struct side_task *base, *cand;
	struct stats_sample sx, sy, sxf, syf;
	uint64_t seed;
	bool measured;
};

/* F's samples as measured into their stats_samples; LL_ENOMEM. */
static int measure_sides(struct floor_sides *f, struct row_room *room)
{
	if (f->measured)
		return 0;
	if (!(f->sx.x = report_compare_variant_measured(f->bv, &room->x)) ||
	    !(f->sy.x = report_compare_variant_measured(f->cv, &room->y)) ||
	    !(f->sxf.x = report_compare_variant_measured(f->bf, &room->floor_x)) ||
	    !(f->syf.x = report_compare_variant_measured(f->cf, &room->floor_y)))
		return LL_ENOMEM;
	f->measured = true;
	return 0;
}

/* The interval of the over-floor ratio, or (DIVIDE) of the floor ratio,
 * of F: from ranks when no side has rounds and both variants are ranked,
 * else drawn (the same draws either way: the seed of "over-floor"). */
static int floor_interval(struct floor_sides *f, bool divide, struct row_room *room, double *lo, double *hi)
{
	if (!f->sx.rounds && !f->sy.rounds && !f->sxf.rounds && !f->syf.rounds && f->bv->ranked &&
	    f->cv->ranked && f->base->floor.n && f->base->floor.n <= 255 && f->cand->floor.n &&
	    f->cand->floor.n <= 255)
		return ranked_over_floor(f->bv, f->cv, &f->base->floor, &f->cand->floor, f->seed, divide,
					 room, lo, hi);
	if (measure_sides(f, room) < 0)
		return LL_EINVAL; /* out of memory: no figure */
	if ((divide ? stats_bootstrap_floor_ratio_ci
		    : stats_bootstrap_contrast_ci)(&f->sx, &f->sxf, &f->sy, &f->syf, STATS_MEDIAN, 0.95,
						   REPORT_COMPARE_RESAMPLES, f->seed, lo, hi) < 0)
		return LL_EINVAL;
	return 0;
}

/* What a row's floor figures found, for the metrics over-floor and
 * floor-ratio: *_RC 0, LL_ENOTFOUND (no floor on a side) or LL_EINVAL
 * (no figure). */
struct floor_figures {
	int over_rc, ratio_rc;
	double over_change, ratio_change, over_lo, over_hi, ratio_lo, ratio_hi;
	bool over_significant, ratio_significant;
};

/* The floor ratio (each side's median over its own floor's median) of
 * the medians MX, MXF, MY, MYF, the ratio of those and its interval,
 * added to ROW (the metric floor-ratio asks for it). */
static void floor_ratio(struct floor_sides *f, double mx, double mxf, double my, double myf,
			struct row_room *room, struct report_row *row, struct floor_figures *ff)
{
	double lo, hi, base, cand;
	bool paired;
	int rc;

	ff->ratio_rc = LL_EINVAL;
	if (!(mxf > 0 && myf > 0 && mx > 0))
		return;
	base = mx / mxf;
	cand = my / myf;
	/* paired12: by pass when both sides pair (report_paired.h), else
	 * unpaired; from the compare data's ranks when it holds them */
	rc = f->sx.rounds ? LL_ENOTFOUND
			  : report_paired_floor_ratio_cached(f->bv, f->cv, &base, &cand, &lo, &hi);
	if (rc == LL_ENOTFOUND)
		rc = measure_sides(f, room) < 0
			     ? LL_ENOMEM
			     : report_paired_floor_ratio(
				       &(struct report_paired_side){f->bv, &f->base->read.floor, f->sx.x,
								    f->sxf.x},
				       &(struct report_paired_side){f->cv, &f->cand->read.floor, f->sy.x,
								    f->syf.x},
				       f->sx.rounds > 0, f->seed, &base, &cand, &lo, &hi);
	paired = rc == 0;
	report_row_number(row, "baseline_floor_ratio", round_to(base, 0.0001));
	report_row_number(row, "candidate_floor_ratio", round_to(cand, 0.0001));
	report_row_bool(row, "floor_ratio_paired", paired);
	if (!paired && floor_interval(f, true, room, &lo, &hi) < 0)
		return;
	ff->ratio_change = (cand / base - 1) * 100;
	report_row_number(row, "floor_ratio", round_to(cand / base, 0.0001));
	report_row_number(row, "floor_ratio_ci_low", round_to(lo, 0.0001));
	report_row_number(row, "floor_ratio_ci_high", round_to(hi, 0.0001));
	report_row_number(row, "floor_ratio_change_pct", round_to(ff->ratio_change, 0.01));
	ff->ratio_significant = interval_significant(lo, hi, ff->ratio_change);
	ff->ratio_lo = lo;
	ff->ratio_hi = hi;
	ff->ratio_rc = 0;
}

/* The median over the floor of both sides (the floors of BASE and CAND),
 * its ratio and that ratio's interval, added to ROW when both sides have a
 * floor and the baseline's median is above its own; ROUNDS as for the
 * row. RATIO (the metric floor-ratio): also floor_ratio()'s figures.
 * *FF for the metrics over-floor and floor-ratio. */
static void over_floor(const char *variant, const char *key, const struct report_compare_variant *bv,
		       const struct report_compare_variant *cv, const struct side_task *base,
		       const struct side_task *cand, bool rounds, bool ratio, struct row_room *room,
		       struct report_row *row, struct floor_figures *ff)
{
	const struct report_compare_variant *bf = &base->read.floor, *cf = &cand->read.floor;
	struct floor_sides f = {.bv = bv, .cv = cv, .bf = bf, .cf = cf, .base = base, .cand = cand};
	double mx, my, mxf, myf, lo, hi, change;

	ff->over_rc = ff->ratio_rc = LL_ENOTFOUND;
	if (!bf->values || !cf->values)
		return;
	ff->over_rc = ff->ratio_rc = LL_EINVAL;
	f.sx = sample_of(bv, NULL, rounds);
	f.sy = sample_of(cv, NULL, rounds);
	f.sxf = sample_of(bf, NULL, rounds);
	f.syf = sample_of(cf, NULL, rounds);
	if (median_of(bv, NULL, &mx) < 0 || median_of(cv, NULL, &my) < 0 ||
	    median_of(bf, &base->floor, &mxf) < 0 || median_of(cf, &cand->floor, &myf) < 0)
		return;
	report_row_number(row, "baseline_floor_us", round_to(mxf, 0.1));
	report_row_number(row, "candidate_floor_us", round_to(myf, 0.1));
	report_row_number(row, "baseline_over_floor_us", round_to(mx - mxf, 0.1));
	report_row_number(row, "candidate_over_floor_us", round_to(my - myf, 0.1));
	f.seed = stats_seed_of(key) ^ stats_seed_of(variant) ^ stats_seed_of("over-floor");
	if (mx - mxf > 0 && floor_interval(&f, false, room, &lo, &hi) == 0) {
		change = ((my - myf) / (mx - mxf) - 1) * 100;
		report_row_number(row, "over_floor_ratio", round_to((my - myf) / (mx - mxf), 0.0001));
		report_row_number(row, "over_floor_ratio_ci_low", round_to(lo, 0.0001));
		report_row_number(row, "over_floor_ratio_ci_high", round_to(hi, 0.0001));
		report_row_number(row, "over_floor_change_pct", round_to(change, 0.01));
		ff->over_change = change;
		ff->over_significant = interval_significant(lo, hi, change);
		ff->over_lo = lo;
		ff->over_hi = hi;
		ff->over_rc = 0;
	}
	if (ratio)
		floor_ratio(&f, mx, mxf, my, myf, room, row, ff);
}

/* One row, judged by METRIC (AUTO: report.h) with the between-job term
 * of BETWEEN, written to ROW; ROW's RC. *USED_BETWEEN: whether it was. */
static int compare_row(const char *variant, const struct side_task *base, const struct side_task *cand,
		       const char *global_reason, double max_regression, enum report_metric metric,
		       const struct report_between *between, struct row_room *room, struct report_row *row,
		       bool *used_between)
{
	struct report_judged j = {0};
	const bool automatic = metric == REPORT_METRIC_AUTO;
	const struct report_compare_variant *bv = NULL, *cv = NULL;
	struct row_figures f = {0};
	struct floor_figures ff = {0};
	double change = 0;
	bool significant = false, rounds;
	char reason[300];
	int rc;

	report_row_string(row, "variant", variant);
	report_row_string(row, "cell", base->key);
	if (global_reason)
		return not_comparable(row, global_reason);
	if (!cand)
		return not_comparable(row, "the candidate has no task in this cell");
	if (!base->has_result || !cand->has_result)
		return not_comparable(row, !base->has_result ? "the baseline has no result in this cell"
							     : "the candidate has no result in this cell");
	if (facts_differ(&base->read, &cand->read, reason, sizeof(reason)))
		return not_comparable(row, reason);
	bv = report_compare_data_variant(&base->read, variant);
	cv = report_compare_data_variant(&cand->read, variant);
	if (!bv || !cv)
		return not_comparable(row, !bv ? "the baseline did not run this variant"
					       : "the candidate did not run this variant");
	if (bv->invalid || cv->invalid)
		return not_comparable(row, bv->invalid ? "the baseline's variant is invalid"
						       : "the candidate's variant is invalid");
	if (!bv->values || !cv->values)
		return not_comparable(row, "warm samples are missing");
	rounds = bv->rounds >= REPORT_MIN_ROUNDS && cv->rounds >= REPORT_MIN_ROUNDS;
	if (rounds)
		rc = rounds_figures(variant, base->key, bv, cv, room, row, &f);
	else if (bv->ranked && cv->ranked && bv->n == cv->n)
		rc = ranked_figures(bv, cv, row, &f);
	else
		rc = drawn_figures(variant, base->key, bv, cv, room, row, &f);
	if (rc == LL_ENOMEM)
		return not_comparable(row, "warm samples are missing");
	if (rc < 0)
		return not_comparable(row, "the baseline's times are zero");
	if (automatic)
		metric = base->read.floor.values && cand->read.floor.values ? REPORT_METRIC_FLOOR_RATIO
									    : REPORT_METRIC_MEDIAN;
	over_floor(variant, base->key, bv, cv, base, cand, rounds, metric == REPORT_METRIC_FLOOR_RATIO, room,
		   row, &ff);
	if (automatic && ff.ratio_rc < 0)
		metric = REPORT_METRIC_MEDIAN; /* the default's fallback */
	switch (metric) {
	case REPORT_METRIC_AUTO: /* decided above */
	case REPORT_METRIC_MEDIAN:
		j = (struct report_judged){.metric = REPORT_METRIC_MEDIAN,
					   .change = f.change,
					   .low = f.lo,
					   .high = f.hi,
					   .per_sample = !rounds,
					   .p = f.p};
		significant = f.significant;
		break;
	case REPORT_METRIC_MIN:
		if (!f.min_ci)
			return not_comparable(row, "the minimum's interval could not be drawn");
		change = f.min_change;
		significant = interval_significant(f.min_lo, f.min_hi, change);
		j = (struct report_judged){
			.metric = metric, .change = change, .low = f.min_lo, .high = f.min_hi};
		break;
	case REPORT_METRIC_OVER_FLOOR:
	case REPORT_METRIC_FLOOR_RATIO: {
		bool over = metric == REPORT_METRIC_OVER_FLOOR;
		int floor_rc = over ? ff.over_rc : ff.ratio_rc;
		if (floor_rc == LL_ENOTFOUND)
			return not_comparable(row, !base->read.floor.values
							   ? "the baseline has no floor samples"
							   : "the candidate has no floor samples");
		if (floor_rc < 0)
			return not_comparable(row, over ? "the baseline's median is not above its floor"
							: "the floor ratio's interval could not be drawn");
		change = over ? ff.over_change : ff.ratio_change;
		significant = over ? ff.over_significant : ff.ratio_significant;
		j = (struct report_judged){.metric = metric,
					   .change = change,
					   .low = over ? ff.over_lo : ff.ratio_lo,
					   .high = over ? ff.over_hi : ff.ratio_hi};
		break;
	}
	}
	change = j.change;
	j.significant = significant;
	significant = report_between_judge(between, variant, base->key, &base->read, &j, row, used_between);
	if (j.metric != REPORT_METRIC_MEDIAN || significant != j.significant)
		report_row_set_significant(row, significant);
	row->status = !significant ? "no_significant_change" : change > 0 ? "slower" : "faster";
	row->regression = significant && change > 0 && change > max_regression;
	report_row_string(row, "status", row->status);
	report_row_bool(row, "regression", row->regression);
	return row->rc;
}

int report_compare(struct store *store, long long baseline_id, long long candidate_id, double max_regression,
		   cJSON **ret_comparison)
{
	return report_compare_metric(store, baseline_id, candidate_id, max_regression, REPORT_METRIC_MEDIAN,
				     true, ret_comparison);
}

static const char *const statuses[] = {"faster", "slower", "no_significant_change", "not_comparable"};

/* The rows of the baseline's variants FROM .. TO - 1 (of VARIANTS), each
 * variant's cells in task order: into ROWS, or as text into TEXT (rows
 * separated by commas), with their statuses counted. rows_run() is a
 * thread's start. */
struct rows_part {
	const cJSON *variants;
	int from, to;
	struct compare_side *base, *cand;
	const char *global_reason;
	double max_regression;
	enum report_metric metric;
	const struct report_between *between;
	cJSON *rows;
	struct buf *text;
	int status_counts[4], regressions, between_rows, rc;
};

static void *rows_run(void *arg)
{
	struct rows_part *p = arg;
	struct row_room room = {0};
	cJSON *figures = cJSON_CreateObject();
	const cJSON *v;
	int at = 0;

	p->rc = figures ? 0 : LL_ENOMEM;
	cJSON_ArrayForEach(v, p->variants) {
		if (at++ < p->from || at > p->to)
			continue;
		for (size_t i = 0; i < p->base->count && p->rc == 0; i++) {
			const struct side_task *t = &p->base->tasks[i];
			struct report_row row = {.text = p->text, .first = true, .figures = figures};
			size_t k = 0;
			bool between = false;
			if (t->replaced)
				continue;
			if (p->text) /* after the last row */
				p->rc = p->text->len ? buf_append(p->text, ",{", 2)
						     : buf_append(p->text, "{", 1);
			else if (!(row.obj = cJSON_CreateObject()))
				p->rc = LL_ENOMEM;
			cJSON_Delete(figures->child);
			figures->child = NULL;
			if (p->rc < 0 ||
			    (p->rc = compare_row(string(v, "name"), t, report_side_find(p->cand, t->key),
						 p->global_reason, p->max_regression, p->metric, p->between,
						 &room, &row, &between)) < 0 ||
			    (p->text && (p->rc = buf_append(p->text, "}", 1)) < 0)) {
				cJSON_Delete(row.obj);
				break;
			}
			while (k < 3 && strcmp(row.status, statuses[k]) != 0)
				k++;
			p->status_counts[k]++;
			p->regressions += row.regression;
			p->between_rows += between;
			if (row.obj)
				cJSON_AddItemToArray(p->rows, row.obj);
		}
	}
	cJSON_Delete(figures);
	report_sample_release(&room.base);
	report_sample_release(&room.cand);
	report_sample_release(&room.draws);
	free(room.x);
	free(room.y);
	free(room.floor_x);
	free(room.floor_y);
	return NULL;
}

/* Rows at least this many are written as text by two threads, each
 * variant's by one (rows_run()), when the baseline has two variants or
 * more: on two cores a compare of two 1,000-task x 8-variant jobs (8,000
 * rows, about 130 ms of CPU for them) then takes about half the time for
 * its rows; a thread costs far less than 256 rows. */
#define PARALLEL_ROWS 256

/* The rows of PART's variants into PART, written by two threads when
 * there are enough of them as text (SECOND_TEXT: the second thread's
 * buffer, then appended); PART's RC. */
static int rows_write(struct rows_part *part, size_t tasks, struct buf *second_text)
{
	struct rows_part second = *part;
	int count = cJSON_GetArraySize(part->variants);
	pthread_t thread;

	if (!part->text || count < 2 || (size_t)count * tasks < PARALLEL_ROWS) {
		rows_run(part);
		return part->rc;
	}
	part->to = count / 2;
	second.from = count / 2;
	second.text = second_text;
	if (pthread_create(&thread, NULL, rows_run, &second) != 0) {
		part->to = count;
		rows_run(part); /* no thread: all of them here */
		return part->rc;
	}
	rows_run(part);
	pthread_join(thread, NULL);
	if (part->rc == 0 && (part->rc = second.rc) == 0 && second_text->len) {
		if (part->text->len)
			part->rc = buf_append(part->text, ",", 1);
		if (part->rc == 0)
			part->rc = buf_append(part->text, second_text->data, second_text->len);
	}
	for (int i = 0; i < 4; i++)
		part->status_counts[i] += second.status_counts[i];
	part->regressions += second.regressions;
	part->between_rows += second.between_rows;
	return part->rc;
}

/* The comparison's "significance". */
static cJSON *significance_of(void)
{
	cJSON *significance = cJSON_CreateObject();

	cJSON_AddStringToObject(significance, "test", "mann-whitney-u, two-sided");
	cJSON_AddNumberToObject(significance, "alpha", REPORT_ALPHA);
	cJSON_AddNumberToObject(significance, "min_effect_pct", REPORT_MIN_EFFECT_PCT);
	cJSON_AddStringToObject(significance, "ci", "bootstrap percentile of the ratio of medians, 95 %");
	cJSON_AddNumberToObject(significance, "min_rounds", REPORT_MIN_ROUNDS);
	return significance;
}

/* report_compare_metric() into *RET_COMPARISON; ROWS_TEXT not NULL: the
 * rows are written as JSON text to it instead (the array's members,
 * without its brackets), and the comparison stops before "rows"
 * (report_compare_json()). */
static int compare_jobs(struct store *store, long long baseline_id, long long candidate_id,
			double max_regression, enum report_metric metric, bool across_jobs,
			struct buf *rows_text, cJSON **ret_comparison)
{
	struct compare_side base = {0}, cand = {0};
	struct collect base_collect = {&base, false, cJSON_CreateObject()},
		       cand_collect = {&cand, true, cJSON_CreateObject()};
	struct rows_part part = {.metric = metric, .max_regression = max_regression, .text = rows_text};
	struct buf second_text;
	cJSON *base_job = NULL, *cand_job = NULL, *out = NULL, *rows = NULL, *counts, *intervals;
	struct report_between *between = NULL;
	int rc;

	buf_init(&second_text, rows_text ? rows_text->limit : 0);

	if ((rc = store_job_get(store, baseline_id, &base_job)) < 0 ||
	    (rc = store_job_get(store, candidate_id, &cand_job)) < 0 ||
	    (rc = store_job_compare_rows(store, baseline_id, REPORT_SUMMARY_VERSION, report_side_collect,
					 &base_collect)) < 0 ||
	    (rc = store_job_compare_rows(store, candidate_id, REPORT_SUMMARY_VERSION, report_side_collect,
					 &cand_collect)) < 0)
		goto done;
	report_side_summarize(store, &base, false, base_collect.bodies);
	report_side_summarize(store, &cand, true, cand_collect.bodies);
	report_side_sort_floors(&base);
	report_side_sort_floors(&cand);
	if (strcmp(string(base_job, "family"), string(cand_job, "family")) != 0)
		part.global_reason = "the jobs study different families";
	else if (across_jobs && (rc = report_between_load(store, base_job, cand_job, &between)) < 0)
		goto done;
	part.between = between;

	out = cJSON_CreateObject();
	for (int side = 0; side < 2; side++) {
		const cJSON *job = side ? cand_job : base_job;
		cJSON *j = cJSON_AddObjectToObject(out, side ? "candidate" : "baseline");
		cJSON_AddNumberToObject(j, "id", number(job, "id", 0));
		cJSON_AddStringToObject(j, "name", string(job, "name"));
		cJSON_AddStringToObject(j, "state", string(job, "state"));
	}
	/* Jobs whose generators differ ("what does one more library cost?")
	 * are compared; what differs is said at the top. */
	if (!report_same_generator(get(base_job, "spec"), get(cand_job, "spec"))) {
		cJSON *g = cJSON_AddObjectToObject(out, "generator");
		cJSON_AddFalseToObject(g, "same");
		for (int side = 0; side < 2; side++) {
			const cJSON *gen = get(get(side ? cand_job : base_job, "spec"), "generator");
			cJSON_AddItemToObject(g, side ? "candidate" : "baseline",
					      gen ? cJSON_Duplicate(gen, true) : cJSON_CreateNull());
		}
	}
	cJSON_AddNumberToObject(out, "max_regression_pct", max_regression);
	if ((rc = report_compare_program(base_job, cand_job, out)) < 0)
		goto done;
	cJSON_AddStringToObject(out, "metric", report_metric_name(metric));
	if (!rows_text && !(rows = cJSON_CreateArray())) {
		rc = LL_ENOMEM;
		goto done;
	}
	part.variants = get(get(base_job, "spec"), "variants");
	part.to = cJSON_GetArraySize(part.variants);
	part.base = &base;
	part.cand = &cand;
	part.rows = rows;
	if ((rc = rows_write(&part, base.count, &second_text)) < 0)
		goto done;
	cJSON_AddStringToObject(out, "verdict",
				part.regressions ? "regression"
				: part.status_counts[0] + part.status_counts[1] + part.status_counts[2]
					? "ok"
					: "not_comparable");
	counts = cJSON_AddObjectToObject(out, "counts");
	for (size_t i = 0; i < 4; i++)
		cJSON_AddNumberToObject(counts, statuses[i], part.status_counts[i]);
	cJSON_AddNumberToObject(counts, "regressions", part.regressions);
	intervals = cJSON_AddObjectToObject(out, "intervals"); /* what the rows' interval_scope add up to */
	cJSON_AddStringToObject(intervals, "scope",
				!part.between_rows ? "within-job"
				: part.between_rows == part.status_counts[0] + part.status_counts[1] +
							       part.status_counts[2]
					? "within-and-between-jobs"
					: "mixed");
	cJSON_AddNumberToObject(intervals, "history_jobs", (double)report_between_jobs(between));
	cJSON_AddNumberToObject(intervals, "rows_within_and_between_jobs", part.between_rows);
	if (rows) {
		cJSON_AddItemToObject(out, "rows", rows);
		rows = NULL;
		cJSON_AddItemToObject(out, "significance", significance_of());
	}
	*ret_comparison = out;
	out = NULL;
done:
	cJSON_Delete(out);
	cJSON_Delete(rows);
	buf_release(&second_text);
	cJSON_Delete(base_job);
	cJSON_Delete(cand_job);
	report_side_release(&base);
	report_side_release(&cand);
	report_between_free(between);
	cJSON_Delete(base_collect.bodies);
	cJSON_Delete(cand_collect.bodies);
	return rc;
}

int report_compare_metric(struct store *store, long long baseline_id, long long candidate_id,
			  double max_regression, enum report_metric metric, bool across_jobs,
			  cJSON **ret_comparison)
{
	return compare_jobs(store, baseline_id, candidate_id, max_regression, metric, across_jobs, NULL,
			    ret_comparison);
}

int report_compare_json(struct store *store, long long baseline_id, long long candidate_id,
			double max_regression, enum report_metric metric, bool across_jobs, struct buf *out)
{
	struct buf rows;
	cJSON *comparison = NULL, *significance = significance_of();
	int rc;

	buf_init(&rows, out->limit);
	if (!significance)
		rc = LL_ENOMEM;
	else if ((rc = compare_jobs(store, baseline_id, candidate_id, max_regression, metric, across_jobs,
				    &rows, &comparison)) == 0 &&
		 (rc = report_json_append(comparison, out)) == 0) {
		out->data[--out->len] = 0; /* the object reopened: "rows" and "significance" follow */
		if ((rc = buf_append_str(out, ",\"rows\":[")) == 0 &&
		    (rc = buf_append(out, rows.data, rows.len)) == 0 &&
		    (rc = buf_append_str(out, "],\"significance\":")) == 0 &&
		    (rc = report_json_append(significance, out)) == 0)
			rc = buf_append(out, "}", 1);
	}
	cJSON_Delete(comparison);
	cJSON_Delete(significance);
	buf_release(&rows);
	return rc;
}
