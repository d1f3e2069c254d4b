/* One row of a comparison (report_compare_row.h): whether the two sides
 * can be compared, each metric's figures (the median's, the minimum's,
 * over the floor, the floor ratio), and the row's verdict. */
#include "report_compare_row.h"

#include "report_compare_counters.h"
#include "report_judge.h"
#include "report_paired.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* What a row's figures found, for its metric. */
struct row_figures {
	double base_median, cand_median, base_min, cand_min; /* each side's, as the row shows them */
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

/* The minimum's figures from the summaries' minimums and its interval. */
static void add_min_interval(struct report_row *row, double base_min, double cand_min, double lo, double hi,
			     struct row_figures *f)
{
	report_row_number(row, "min_ratio_ci_low", round_to(lo, 0.0001));
	report_row_number(row, "min_ratio_ci_high", round_to(hi, 0.0001));
	f->min_change = (cand_min / base_min - 1) * 100;
	f->base_min = base_min;
	f->cand_min = cand_min;
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
	f->base_median = sx.median;
	f->cand_median = sy.median;
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
			   struct report_row_room *room, struct report_row *row, struct stats_summary *sx,
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
			 const struct report_compare_variant *cv, struct report_row_room *room,
			 struct report_row *row, struct row_figures *f)
{
	struct stats_summary sx, sy;
	double lo, hi;

	if (sampled_medians(bv, cv, room, row, &sx, &sy) < 0)
		return LL_ENOMEM;
	f->base_median = sx.median;
	f->cand_median = sy.median;
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
			  const struct report_compare_variant *cv, struct report_row_room *room,
			  struct report_row *row, struct row_figures *f)
{
	struct stats_summary sx, sy;
	struct stats_sample x, y;
	double lo, hi, u, p, *mx = NULL, *my = NULL;
	int rc = LL_EINVAL;

	if (sampled_medians(bv, cv, room, row, &sx, &sy) < 0)
		return LL_ENOMEM;
	f->base_median = sx.median;
	f->cand_median = sy.median;
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
	f->significant = report_judge_interval(lo, hi, f->change);
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
			     bool divide, struct report_row_room *room, double *ret_low, double *ret_high)
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
static int measure_sides(struct floor_sides *f, struct report_row_room *room)
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
static int floor_interval(struct floor_sides *f, bool divide, struct report_row_room *room, double *lo,
			  double *hi)
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
	double over_base, over_cand, ratio_base, ratio_cand; /* each side's figure */
	double over_change, ratio_change, over_lo, over_hi, ratio_lo, ratio_hi;
	bool over_significant, ratio_significant;
};

/* The floor ratio (each side's median over its own floor's median) of
 * the medians MX, MXF, MY, MYF, the ratio of those and its interval,
 * added to ROW (the metric floor-ratio asks for it). */
static void floor_ratio(struct floor_sides *f, double mx, double mxf, double my, double myf,
			struct report_row_room *room, struct report_row *row, struct floor_figures *ff)
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
	ff->ratio_significant = report_judge_interval(lo, hi, ff->ratio_change);
	ff->ratio_lo = lo;
	ff->ratio_hi = hi;
	ff->ratio_base = base;
	ff->ratio_cand = cand;
	ff->ratio_rc = 0;
}

/* The median over the floor of both sides (the floors of BASE and CAND),
 * its ratio and that ratio's interval, added to ROW when both sides have a
 * floor and the baseline's median is above its own; ROUNDS as for the
 * row. RATIO (the metric floor-ratio): also floor_ratio()'s figures.
 * *FF for the metrics over-floor and floor-ratio. */
static void over_floor(const char *variant, const char *key, const struct report_compare_variant *bv,
		       const struct report_compare_variant *cv, const struct side_task *base,
		       const struct side_task *cand, bool rounds, bool ratio, struct report_row_room *room,
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
		ff->over_significant = report_judge_interval(lo, hi, change);
		ff->over_lo = lo;
		ff->over_hi = hi;
		ff->over_base = mx - mxf;
		ff->over_cand = my - myf;
		ff->over_rc = 0;
	}
	if (ratio)
		floor_ratio(&f, mx, mxf, my, myf, room, row, ff);
}

/* The median's and the minimum's figures of F (SX, SY: the sides'
 * medians and minimums, as the row wrote them) into C. */
static void median_and_min(const struct row_figures *f, bool rounds, struct report_judge_case *c)
{
	c->figure[REPORT_METRIC_MEDIAN] = (struct report_judge_figure){.base = f->base_median,
								       .cand = f->cand_median,
								       .change = f->change,
								       .low = f->lo,
								       .high = f->hi,
								       .p = f->p,
								       .per_sample = !rounds,
								       .significant = f->significant};
	c->figure[REPORT_METRIC_MIN] = (struct report_judge_figure){.rc = f->min_ci ? 0 : LL_EINVAL,
								    .base = f->base_min,
								    .cand = f->cand_min,
								    .change = f->min_change,
								    .low = f->min_lo,
								    .high = f->min_hi};
	c->figure[REPORT_METRIC_MIN].significant = report_judge_interval(f->min_lo, f->min_hi, f->min_change);
}

/* The floor metrics' figures of FF into C. */
static void floor_metrics(const struct floor_figures *ff, struct report_judge_case *c)
{
	c->figure[REPORT_METRIC_OVER_FLOOR] =
		(struct report_judge_figure){.rc = ff->over_rc,
					     .base = ff->over_base,
					     .cand = ff->over_cand,
					     .change = ff->over_change,
					     .low = ff->over_lo,
					     .high = ff->over_hi,
					     .significant = ff->over_significant};
	c->figure[REPORT_METRIC_FLOOR_RATIO] =
		(struct report_judge_figure){.rc = ff->ratio_rc,
					     .base = ff->ratio_base,
					     .cand = ff->ratio_cand,
					     .change = ff->ratio_change,
					     .low = ff->ratio_lo,
					     .high = ff->ratio_hi,
					     .significant = ff->ratio_significant};
}

int report_compare_row(const char *variant, const struct side_task *base, const struct side_task *cand,
		       const char *global_reason, double max_regression, enum report_metric metric,
		       const struct report_between *between, struct report_row_room *room,
		       struct report_row *row, bool *used_between)
{
	const struct report_compare_variant *bv = NULL, *cv = NULL;
	struct report_judge_case c = {0};
	struct report_verdict v;
	struct row_figures f = {0};
	struct floor_figures ff = {0};
	bool rounds;
	char reason[300], why[600];
	int rc, counter;

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
	c.floors = base->read.floor.values && cand->read.floor.values;
	c.base_floor = base->read.floor.values != NULL;
	/* the floor ratio is drawn when it is asked for, or may be the one */
	over_floor(variant, base->key, bv, cv, base, cand, rounds,
		   metric == REPORT_METRIC_FLOOR_RATIO || (metric == REPORT_METRIC_AUTO && c.floors), room,
		   row, &ff);
	median_and_min(&f, rounds, &c);
	floor_metrics(&ff, &c);
	for (int k = 0; k < REPORT_COUNTERS; k++)
		c.figure[REPORT_METRIC_CPU + k].rc = LL_EINVAL;
	if ((counter = report_counter_of(metric)) >= 0)
		report_counter_figure(
			(enum report_counter)counter, bv, cv, &base->read.floor, &cand->read.floor, rounds,
			stats_seed_of(base->key) ^ stats_seed_of(variant) ^ stats_seed_of("counters"), row,
			&c.figure[metric], why, sizeof(why));
	report_counter_context(bv, cv, row);
	c.asked = metric;
	c.max_regression_pct = max_regression;
	c.between = between;
	c.variant = variant;
	c.key = base->key;
	c.facts = &base->read;
	report_judge(&c, row, &v);
	if (!v.status || v.reason)
		return not_comparable(row, v.reason);
	*used_between = v.across_jobs;
	row->status = v.status;
	row->regression = v.regression;
	row->underpowered = v.underpowered;
	return row->rc;
}
