/* Two jobs compared for CI: see report.h. */
#include "report_int.h"
#include "report_paired.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A side's tasks in task order, a later task of a cell replacing the
 * earlier one at the end, with a hash index over the cells' keys (open
 * addressing, never full). Each task holds what compare needs of its
 * result (report_compare_data.c), cached or computed here. */
struct side_task {
	char *key, *state, *last_error;
	bool replaced;
	long long result_id;
	bool has_result; /* the result could be read */
	void *data;      /* compare data, 8-byte aligned */
	size_t data_len;
	struct report_compare_data read;
	struct report_sample floor; /* the floor sorted, when it has samples */
};

struct compare_side {
	struct side_task *tasks;
	size_t count, room;
	size_t capacity; /* of the index: a power of two, over twice the count */
	size_t *index;   /* task number + 1; 0: empty */
};

static size_t *slot_of(struct compare_side *side, const char *key)
{
	size_t i = (size_t)report_seed_of(key) & (side->capacity - 1);

	while (side->index[i] && strcmp(side->tasks[side->index[i] - 1].key, key) != 0)
		i = (i + 1) & (side->capacity - 1);
	return &side->index[i];
}

static struct side_task *find_task(struct compare_side *side, const char *key)
{
	size_t at = side->index ? *slot_of(side, key) : 0;

	return at ? &side->tasks[at - 1] : NULL;
}

/* Room for one more task; LL_ENOMEM. */
static int side_grow(struct compare_side *side)
{
	if (side->count == side->room) {
		size_t room = side->room ? side->room * 2 : 64;
		struct side_task *tasks = realloc(side->tasks, room * sizeof(*tasks));
		if (!tasks)
			return LL_ENOMEM;
		side->tasks = tasks;
		side->room = room;
	}
	if ((side->count + 1) * 2 + 2 > side->capacity) {
		size_t capacity = side->capacity ? side->capacity * 2 : 128;
		size_t *index = calloc(capacity, sizeof(*index));
		if (!index)
			return LL_ENOMEM;
		free(side->index);
		side->index = index;
		side->capacity = capacity;
		for (size_t i = 0; i < side->count; i++)
			if (!side->tasks[i].replaced)
				*slot_of(side, side->tasks[i].key) = i + 1;
	}
	return 0;
}

static void side_release(struct compare_side *side)
{
	for (size_t i = 0; i < side->count; i++) {
		free(side->tasks[i].key);
		free(side->tasks[i].state);
		free(side->tasks[i].last_error);
		free(side->tasks[i].data);
		report_compare_data_release(&side->tasks[i].read);
		report_sample_release(&side->tasks[i].floor);
	}
	free(side->tasks);
	free(side->index);
}

/* An aligned copy of LEN bytes of DATA; NULL when out of memory. */
static void *aligned_copy(const void *data, size_t len)
{
	void *copy = NULL;

	if (posix_memalign(&copy, 8, len ? len : 1) != 0)
		return NULL;
	memcpy(copy, data, len);
	return copy;
}

/* The context of collect_side(): a side and the bodies to summarize. */
struct collect {
	struct compare_side *side;
	cJSON *bodies; /* {"<task number>": result text} */
};

static int collect_side(void *context, const struct store_report_row *row)
{
	struct collect *c = context;
	struct compare_side *side = c->side;
	struct side_task *t;
	cJSON *cell = NULL;
	size_t *slot;
	char key[512];

	if (side_grow(side) < 0)
		return LL_ENOMEM;
	json_parse_object(row->cell, strlen(row->cell), 0, &cell);
	report_cell_key(cell, key, sizeof(key));
	cJSON_Delete(cell);
	t = &side->tasks[side->count];
	*t = (struct side_task){.key = strdup(key),
				.state = strdup(row->state),
				.last_error = row->last_error ? strdup(row->last_error) : NULL,
				.result_id = row->result_id};
	if (!t->key || !t->state || (row->last_error && !t->last_error)) {
		free(t->key);
		free(t->state);
		free(t->last_error);
		return LL_ENOMEM;
	}
	if (row->result_id && row->compare && row->summary_version == REPORT_SUMMARY_VERSION &&
	    (t->data = aligned_copy(row->compare, row->compare_len)) &&
	    report_compare_data_read(t->data, row->compare_len, &t->read) == 0) {
		t->has_result = true;
	} else if (row->result_id && row->body) {
		char name[32];
		snprintf(name, sizeof(name), "%zu", side->count);
		cJSON_AddItemToObject(c->bodies, name, cJSON_CreateString(row->body));
	}
	slot = slot_of(side, key);
	if (*slot)
		side->tasks[*slot - 1].replaced = true;
	*slot = ++side->count;
	return 0;
}

/* Compare's data of the results whose data was not cached, from their
 * texts. */
static void summarize_bodies(struct compare_side *side, const cJSON *bodies)
{
	struct report_sample room = {0};
	const cJSON *b;

	cJSON_ArrayForEach(b, bodies) {
		struct side_task *t = &side->tasks[strtoul(b->string, NULL, 10)];
		cJSON *result = NULL;
		void *data = NULL;
		size_t len = 0;
		if (json_parse_object(b->valuestring, strlen(b->valuestring), REPORT_MAX_BODY_DEPTH,
				      &result) == 0 &&
		    report_compare_data(result, t->key, &room, &data, &len) == 0) {
			free(t->data);
			t->data = aligned_copy(data, len);
			if (t->data && report_compare_data_read(t->data, len, &t->read) == 0)
				t->has_result = true;
		}
		free(data);
		cJSON_Delete(result);
	}
	report_sample_release(&room);
}

/* Every task's floor sorted once (each serves the task's every row). */
static void sort_floors(struct compare_side *side)
{
	for (size_t i = 0; i < side->count; i++) {
		struct side_task *t = &side->tasks[i];
		if (t->has_result && t->read.floor.values)
			report_sample_set(&t->floor, t->read.floor.values, t->read.floor.n);
	}
}

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

static cJSON *not_comparable(cJSON *row, const char *reason)
{
	cJSON_AddStringToObject(row, "status", "not_comparable");
	cJSON_AddStringToObject(row, "reason", reason);
	cJSON_AddBoolToObject(row, "regression", false);
	return row;
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
	bool significant, min_ci;
};

/* Whether an interval LO .. HI of a ratio with change CHANGE (%) is a
 * significant change by the interval alone (min, over-floor, rounds). */
static bool interval_significant(double lo, double hi, double change)
{
	return (lo > 1 || hi < 1) && fabs(change) >= REPORT_MIN_EFFECT_PCT;
}

/* The minimum's figures from the summaries' minimums and its interval. */
static void add_min_interval(cJSON *row, double base_min, double cand_min, double lo, double hi,
			     struct row_figures *f)
{
	cJSON_AddNumberToObject(row, "min_ratio_ci_low", round_to(lo, 0.0001));
	cJSON_AddNumberToObject(row, "min_ratio_ci_high", round_to(hi, 0.0001));
	f->min_change = (cand_min / base_min - 1) * 100;
	f->min_lo = lo;
	f->min_hi = hi;
	f->min_ci = true;
}

/* The figures of a row whose two samples have ranks cached for the same
 * size (report_compare_data.c): what the bootstraps would give, without
 * drawing. */
static int ranked_figures(const struct report_compare_variant *bv, const struct report_compare_variant *cv,
			  cJSON *row, struct row_figures *f)
{
	const int r = REPORT_COMPARE_RESAMPLES;
	struct report_sample x = {.sorted = (double *)bv->values, .n = bv->n};
	struct report_sample y = {.sorted = (double *)cv->values, .n = cv->n};
	struct stats_summary sx = {.median = stats_quantile_sorted(bv->values, bv->n, 0.5),
				   .min = bv->values[0]};
	struct stats_summary sy = {.median = stats_quantile_sorted(cv->values, cv->n, 0.5),
				   .min = cv->values[0]};
	double u, p, lo, hi;

	cJSON_AddNumberToObject(row, "baseline_median_us", round_to(sx.median, 0.1));
	cJSON_AddNumberToObject(row, "candidate_median_us", round_to(sy.median, 0.1));
	cJSON_AddNumberToObject(row, "baseline_min_us", round_to(sx.min, 0.1));
	cJSON_AddNumberToObject(row, "candidate_min_us", round_to(sy.min, 0.1));
	if (sx.median <= 0 || sx.min <= 0 ||
	    report_ranked_ratio_ci(bv->values, bv->n, bv->ranks, bv->ranks + r, cv->values, cv->n,
				   cv->ranks + 2 * r, cv->ranks + 3 * r, STATS_MEDIAN, 0.95, r, &lo, &hi) < 0)
		return LL_EINVAL;
	report_mann_whitney(&y, &x, &u, &p);
	report_compare_figures(&sx, &sy, p, lo, hi, row, &f->change, &f->significant);
	if (report_ranked_ratio_ci(bv->values, bv->n, bv->ranks + 4 * r, bv->ranks + 4 * r, cv->values, cv->n,
				   cv->ranks + 5 * r, cv->ranks + 5 * r, STATS_MIN, 0.95, r, &lo, &hi) == 0)
		add_min_interval(row, sx.min, sy.min, lo, hi, f);
	return 0;
}

/* BV's and CV's samples into ROOM, their summaries into *SX and *SY, and
 * the row's medians and minima; LL_ENOMEM. */
static int sampled_medians(const struct report_compare_variant *bv, const struct report_compare_variant *cv,
			   struct row_room *room, cJSON *row, struct stats_summary *sx,
			   struct stats_summary *sy)
{
	if (report_compare_variant_sample(bv, &room->base, &room->x) < 0 ||
	    report_compare_variant_sample(cv, &room->cand, &room->y) < 0)
		return LL_ENOMEM;
	report_sample_summary(&room->base, sx);
	report_sample_summary(&room->cand, sy);
	cJSON_AddNumberToObject(row, "baseline_median_us", round_to(sx->median, 0.1));
	cJSON_AddNumberToObject(row, "candidate_median_us", round_to(sy->median, 0.1));
	cJSON_AddNumberToObject(row, "baseline_min_us", round_to(sx->min, 0.1));
	cJSON_AddNumberToObject(row, "candidate_min_us", round_to(sy->min, 0.1));
	return 0;
}

/* The same from the samples, bootstrapped here (unequal sizes, or more
 * than 255 samples). */
static int drawn_figures(const char *variant, const char *key, const struct report_compare_variant *bv,
			 const struct report_compare_variant *cv, struct row_room *room, cJSON *row,
			 struct row_figures *f)
{
	struct stats_summary sx, sy;
	double lo, hi;

	if (sampled_medians(bv, cv, room, row, &sx, &sy) < 0)
		return LL_ENOMEM;
	if (report_compare_samples(&room->base, &sx, &room->cand, &sy, REPORT_COMPARE_RESAMPLES,
				   report_seed_of(key) ^ report_seed_of(variant), false, row, &f->change,
				   &f->significant) < 0)
		return LL_EINVAL;
	if (report_sample_bootstrap_ratio_ci(&room->base, &room->cand, STATS_MIN, 0.95,
					     REPORT_COMPARE_RESAMPLES, report_seed_of(variant), true, &lo,
					     &hi) == 0)
		add_min_interval(row, sx.min, sy.min, lo, hi, f);
	return 0;
}

/* V's samples in their measured order: its values, or put back in order
 * into *ROOM; NULL when out of memory. */
static const double *measured(const struct report_compare_variant *v, double **room)
{
	double *x;

	if (!v->ranked)
		return v->values;
	if (!(x = realloc(*room, v->n * sizeof(*x))))
		return NULL;
	*room = x;
	for (uint32_t k = 0; k < v->n; k++)
		x[v->order[k]] = v->values[k];
	return x;
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
			  const struct report_compare_variant *cv, struct row_room *room, cJSON *row,
			  struct row_figures *f)
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
					report_seed_of(key) ^ report_seed_of(variant), &lo, &hi) < 0 ||
	    stats_round_statistics(&x, STATS_MEDIAN, mx) < 0 ||
	    stats_round_statistics(&y, STATS_MEDIAN, my) < 0 ||
	    stats_mann_whitney(my, y.rounds, mx, x.rounds, &u, &p) < 0)
		goto done;
	report_compare_figures(&sx, &sy, p, lo, hi, row, &f->change, &f->significant);
	f->significant = interval_significant(lo, hi, f->change);
	cJSON_ReplaceItemInObjectCaseSensitive(row, "significant", cJSON_CreateBool(f->significant));
	if (stats_bootstrap_contrast_ci(&x, NULL, &y, NULL, STATS_MIN, 0.95, REPORT_COMPARE_RESAMPLES,
					report_seed_of(variant), &lo, &hi) == 0)
		add_min_interval(row, sx.min, sy.min, lo, hi, f);
	cJSON_AddStringToObject(row, "unit", "rounds");
	cJSON_AddNumberToObject(row, "baseline_rounds", (double)x.rounds);
	cJSON_AddNumberToObject(row, "candidate_rounds", (double)y.rounds);
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
		const uint8_t *clo[4] = {b, b + 2 * r, c + 4 * r, c + 6 * r};
		const uint8_t *chi[4] = {b + r, b + 3 * r, c + 5 * r, c + 7 * r};
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

/* A side's variant and floor, each as measured, for the floor intervals. */
struct floor_sides {
	const struct report_compare_variant *bv, *cv;
	const struct side_task *base, *cand;
	struct stats_sample sx, sy, sxf, syf;
	uint64_t seed;
};

/* The interval of the over-floor ratio, or (DIVIDE) of the floor ratio,
 * of F: from ranks when no side has rounds and both variants are ranked,
 * else drawn (the same draws either way: the seed of "over-floor"). */
static int floor_interval(const struct floor_sides *f, bool divide, struct row_room *room, double *lo,
			  double *hi)
{
	if (!f->sx.rounds && !f->sy.rounds && !f->sxf.rounds && !f->syf.rounds && f->bv->ranked &&
	    f->cv->ranked && f->base->floor.n && f->base->floor.n <= 255 && f->cand->floor.n &&
	    f->cand->floor.n <= 255)
		return ranked_over_floor(f->bv, f->cv, &f->base->floor, &f->cand->floor, f->seed, divide,
					 room, lo, hi);
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
	double over_change, ratio_change;
	bool over_significant, ratio_significant;
};

/* The floor ratio (each side's median over its own floor's median) of
 * the medians MX, MXF, MY, MYF, the ratio of those and its interval,
 * added to ROW (the metric floor-ratio asks for it). */
static void floor_ratio(const struct floor_sides *f, double mx, double mxf, double my, double myf,
			struct row_room *room, cJSON *row, struct floor_figures *ff)
{
	double lo, hi, base, cand;
	bool paired;

	ff->ratio_rc = LL_EINVAL;
	if (!(mxf > 0 && myf > 0 && mx > 0))
		return;
	base = mx / mxf;
	cand = my / myf;
	/* paired12: by pass when both sides pair (report_paired.h), else unpaired */
	paired = report_paired_floor_ratio(
			 &(struct report_paired_side){f->bv, &f->base->read.floor, f->sx.x, f->sxf.x},
			 &(struct report_paired_side){f->cv, &f->cand->read.floor, f->sy.x, f->syf.x},
			 f->sx.rounds > 0, f->seed, &base, &cand, &lo, &hi) == 0;
	cJSON_AddNumberToObject(row, "baseline_floor_ratio", round_to(base, 0.0001));
	cJSON_AddNumberToObject(row, "candidate_floor_ratio", round_to(cand, 0.0001));
	cJSON_AddBoolToObject(row, "floor_ratio_paired", paired);
	if (!paired && floor_interval(f, true, room, &lo, &hi) < 0)
		return;
	ff->ratio_change = (cand / base - 1) * 100;
	cJSON_AddNumberToObject(row, "floor_ratio", round_to(cand / base, 0.0001));
	cJSON_AddNumberToObject(row, "floor_ratio_ci_low", round_to(lo, 0.0001));
	cJSON_AddNumberToObject(row, "floor_ratio_ci_high", round_to(hi, 0.0001));
	cJSON_AddNumberToObject(row, "floor_ratio_change_pct", round_to(ff->ratio_change, 0.01));
	ff->ratio_significant = interval_significant(lo, hi, ff->ratio_change);
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
		       cJSON *row, struct floor_figures *ff)
{
	const struct report_compare_variant *bf = &base->read.floor, *cf = &cand->read.floor;
	const double *x, *y, *xf, *yf;
	struct floor_sides f = {.bv = bv, .cv = cv, .base = base, .cand = cand};
	double mx, my, mxf, myf, lo, hi, change;

	ff->over_rc = ff->ratio_rc = LL_ENOTFOUND;
	if (!bf->values || !cf->values)
		return;
	ff->over_rc = ff->ratio_rc = LL_EINVAL;
	if (!(x = measured(bv, &room->x)) || !(y = measured(cv, &room->y)) ||
	    !(xf = measured(bf, &room->floor_x)) || !(yf = measured(cf, &room->floor_y)))
		return; /* out of memory: no figure */
	f.sx = sample_of(bv, x, rounds);
	f.sy = sample_of(cv, y, rounds);
	f.sxf = sample_of(bf, xf, rounds);
	f.syf = sample_of(cf, yf, rounds);
	if (stats_median(x, bv->n, &mx) < 0 || stats_median(y, cv->n, &my) < 0 ||
	    stats_median(xf, bf->n, &mxf) < 0 || stats_median(yf, cf->n, &myf) < 0)
		return;
	cJSON_AddNumberToObject(row, "baseline_floor_us", round_to(mxf, 0.1));
	cJSON_AddNumberToObject(row, "candidate_floor_us", round_to(myf, 0.1));
	cJSON_AddNumberToObject(row, "baseline_over_floor_us", round_to(mx - mxf, 0.1));
	cJSON_AddNumberToObject(row, "candidate_over_floor_us", round_to(my - myf, 0.1));
	f.seed = report_seed_of(key) ^ report_seed_of(variant) ^ report_seed_of("over-floor");
	if (mx - mxf > 0 && floor_interval(&f, false, room, &lo, &hi) == 0) {
		change = ((my - myf) / (mx - mxf) - 1) * 100;
		cJSON_AddNumberToObject(row, "over_floor_ratio", round_to((my - myf) / (mx - mxf), 0.0001));
		cJSON_AddNumberToObject(row, "over_floor_ratio_ci_low", round_to(lo, 0.0001));
		cJSON_AddNumberToObject(row, "over_floor_ratio_ci_high", round_to(hi, 0.0001));
		cJSON_AddNumberToObject(row, "over_floor_change_pct", round_to(change, 0.01));
		ff->over_change = change;
		ff->over_significant = interval_significant(lo, hi, change);
		ff->over_rc = 0;
	}
	if (ratio)
		floor_ratio(&f, mx, mxf, my, myf, room, row, ff);
}

/* One row, judged by METRIC. */
static cJSON *compare_row(const char *variant, const struct side_task *base, const struct side_task *cand,
			  const char *global_reason, double max_regression, enum report_metric metric,
			  struct row_room *room)
{
	cJSON *row = cJSON_CreateObject();
	const struct report_compare_variant *bv = NULL, *cv = NULL;
	struct row_figures f = {0};
	struct floor_figures ff = {0};
	double change = 0;
	bool significant = false, rounds;
	char reason[300];
	int rc;

	cJSON_AddStringToObject(row, "variant", variant);
	cJSON_AddStringToObject(row, "cell", base->key);
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
	over_floor(variant, base->key, bv, cv, base, cand, rounds, metric == REPORT_METRIC_FLOOR_RATIO, room,
		   row, &ff);
	switch (metric) {
	case REPORT_METRIC_MEDIAN:
		change = f.change;
		significant = f.significant;
		break;
	case REPORT_METRIC_MIN:
		if (!f.min_ci)
			return not_comparable(row, "the minimum's interval could not be drawn");
		change = f.min_change;
		significant = interval_significant(f.min_lo, f.min_hi, change);
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
		break;
	}
	}
	if (metric != REPORT_METRIC_MEDIAN)
		cJSON_ReplaceItemInObjectCaseSensitive(row, "significant", cJSON_CreateBool(significant));
	cJSON_AddStringToObject(row, "status",
				!significant ? "no_significant_change"
				: change > 0 ? "slower"
					     : "faster");
	cJSON_AddBoolToObject(row, "regression", significant && change > 0 && change > max_regression);
	return row;
}

int report_metric_parse(const char *text, enum report_metric *ret)
{
	for (int m = REPORT_METRIC_MEDIAN; m <= REPORT_METRIC_FLOOR_RATIO; m++)
		if (strcmp(text, report_metric_name((enum report_metric)m)) == 0) {
			*ret = (enum report_metric)m;
			return 0;
		}
	return err_set(LL_EINVAL, "metric must be median, min, over-floor or floor-ratio, not '%.40s'.",
		       text);
}

const char *report_metric_name(enum report_metric metric)
{
	return metric == REPORT_METRIC_MIN           ? "min"
	       : metric == REPORT_METRIC_OVER_FLOOR  ? "over-floor"
	       : metric == REPORT_METRIC_FLOOR_RATIO ? "floor-ratio"
						     : "median";
}

int report_compare(struct store *store, long long baseline_id, long long candidate_id, double max_regression,
		   cJSON **ret_comparison)
{
	return report_compare_metric(store, baseline_id, candidate_id, max_regression, REPORT_METRIC_MEDIAN,
				     ret_comparison);
}

int report_compare_metric(struct store *store, long long baseline_id, long long candidate_id,
			  double max_regression, enum report_metric metric, cJSON **ret_comparison)
{
	struct compare_side base = {0}, cand = {0};
	struct collect base_collect = {&base, cJSON_CreateObject()},
		       cand_collect = {&cand, cJSON_CreateObject()};
	struct row_room room = {0};
	cJSON *base_job = NULL, *cand_job = NULL, *out = NULL, *rows, *counts;
	const cJSON *v, *cell;
	const char *global_reason = NULL;
	int rc, regressions = 0, comparable = 0;

	if ((rc = store_job_get(store, baseline_id, &base_job)) < 0 ||
	    (rc = store_job_get(store, candidate_id, &cand_job)) < 0 ||
	    (rc = store_job_report_rows(store, baseline_id, false, collect_side, &base_collect)) < 0 ||
	    (rc = store_job_report_rows(store, candidate_id, false, collect_side, &cand_collect)) < 0)
		goto done;
	summarize_bodies(&base, base_collect.bodies);
	summarize_bodies(&cand, cand_collect.bodies);
	sort_floors(&base);
	sort_floors(&cand);
	if (strcmp(string(base_job, "family"), string(cand_job, "family")) != 0)
		global_reason = "the jobs study different families";

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
	rows = cJSON_CreateArray();
	cJSON_ArrayForEach(v, get(get(base_job, "spec"), "variants")) {
		for (size_t i = 0; i < base.count; i++) {
			cJSON *row;
			if (base.tasks[i].replaced)
				continue;
			row = compare_row(string(v, "name"), &base.tasks[i],
					  find_task(&cand, base.tasks[i].key), global_reason, max_regression,
					  metric, &room);
			regressions += cJSON_IsTrue(get(row, "regression"));
			comparable += strcmp(string(row, "status"), "not_comparable") != 0;
			cJSON_AddItemToArray(rows, row);
		}
	}
	cJSON_AddStringToObject(out, "verdict",
				regressions  ? "regression"
				: comparable ? "ok"
					     : "not_comparable");
	counts = cJSON_AddObjectToObject(out, "counts");
	{
		static const char *const statuses[] = {"faster", "slower", "no_significant_change",
						       "not_comparable"};
		for (size_t i = 0; i < 4; i++) {
			int n = 0;
			cJSON_ArrayForEach(cell, rows)
				n += strcmp(string(cell, "status"), statuses[i]) == 0;
			cJSON_AddNumberToObject(counts, statuses[i], n);
		}
		cJSON_AddNumberToObject(counts, "regressions", regressions);
	}
	cJSON_AddItemToObject(out, "rows", rows);
	{
		cJSON *significance = cJSON_AddObjectToObject(out, "significance");
		cJSON_AddStringToObject(significance, "test", "mann-whitney-u, two-sided");
		cJSON_AddNumberToObject(significance, "alpha", REPORT_ALPHA);
		cJSON_AddNumberToObject(significance, "min_effect_pct", REPORT_MIN_EFFECT_PCT);
		cJSON_AddStringToObject(significance, "ci",
					"bootstrap percentile of the ratio of medians, 95 %");
		cJSON_AddNumberToObject(significance, "min_rounds", REPORT_MIN_ROUNDS);
	}
	*ret_comparison = out;
	out = NULL;
done:
	cJSON_Delete(out);
	cJSON_Delete(base_job);
	cJSON_Delete(cand_job);
	side_release(&base);
	side_release(&cand);
	cJSON_Delete(base_collect.bodies);
	cJSON_Delete(cand_collect.bodies);
	report_sample_release(&room.base);
	report_sample_release(&room.cand);
	report_sample_release(&room.draws);
	free(room.x);
	free(room.y);
	free(room.floor_x);
	free(room.floor_y);
	return rc;
}
