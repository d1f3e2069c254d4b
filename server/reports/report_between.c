/* Compare's intervals across jobs, and the metric a row is judged by: see
 * report_between.h. */
#include "report_between.h"
#include "report_compare_counters.h"
#include "report_judge_rules.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Variance floor of a job's log figure: a degenerate interval (every
 * resample alike) weighs as a standard error of 0.01 %. */
#define VARIANCE_FLOOR 1e-8

/* A history job's task: its cell key and its compare data. */
struct history_task {
	char *key;
	size_t order; /* its place in task order: a later task of a key wins */
	void *data;   /* what READ points into */
	struct report_compare_data read;
};

struct history_job {
	long long id;
	unsigned group;
	struct history_task *tasks; /* by key, one per key */
	size_t count;
};

struct report_between {
	struct history_job jobs[REPORT_HISTORY_JOBS];
	size_t count;
};

int report_metric_parse(const char *text, enum report_metric *ret)
{
	for (int m = REPORT_METRIC_MEDIAN; m <= REPORT_METRIC_AUTO; m++)
		if (strcmp(text, report_metric_name((enum report_metric)m)) == 0) {
			*ret = (enum report_metric)m;
			return 0;
		}
	return err_set(
		LL_EINVAL,
		"metric must be auto, median, min, over-floor, floor-ratio, cpu, faults or instructions, "
		"not '%.40s'.",
		text);
}

const char *report_metric_name(enum report_metric metric)
{
	return metric == REPORT_METRIC_MIN            ? "min"
	       : metric == REPORT_METRIC_OVER_FLOOR   ? "over-floor"
	       : metric == REPORT_METRIC_FLOOR_RATIO  ? "floor-ratio"
	       : metric == REPORT_METRIC_CPU          ? "cpu"
	       : metric == REPORT_METRIC_FAULTS       ? "faults"
	       : metric == REPORT_METRIC_INSTRUCTIONS ? "instructions"
	       : metric == REPORT_METRIC_AUTO         ? "auto"
						      : "median";
}

uint64_t report_spec_digest(const cJSON *spec)
{
	static const char *const ignored[] = {"name", "series", "revision", "priority"};
	cJSON *copy = cJSON_Duplicate(spec, true);
	char *text;
	uint64_t digest;

	for (size_t i = 0; copy && i < sizeof(ignored) / sizeof(ignored[0]); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(copy, ignored[i]);
	text = copy ? cJSON_PrintUnformatted(copy) : NULL;
	digest = text ? stats_seed_of(text) : 0;
	cJSON_free(text);
	cJSON_Delete(copy);
	return digest;
}

/* The jobs the history walk is looking for. */
struct wanted {
	long long base_id, cand_id;
	uint64_t digest[2];
	const char *series[2]; /* NULL: none */
	long long ids[REPORT_HISTORY_JOBS];
	unsigned groups[REPORT_HISTORY_JOBS];
	size_t count;
};

/* Groups: 0 and 1 the baseline's and the candidate's spec, 2 and 3 their
 * series (a job of a series is in its series' group). */
static int history_walk(void *context, long long job_id, const char *spec_text, const char *series)
{
	struct wanted *w = context;
	cJSON *spec = NULL;
	uint64_t digest;
	int group = -1;

	if (job_id == w->base_id || job_id == w->cand_id)
		return 0;
	for (int i = 0; i < 2 && group < 0; i++)
		if (series && w->series[i] && strcmp(series, w->series[i]) == 0)
			group = 2 + i;
	if (group < 0 && json_parse_object(spec_text, strlen(spec_text), REPORT_MAX_BODY_DEPTH, &spec) == 0) {
		digest = report_spec_digest(spec);
		group = digest == w->digest[0] ? 0 : digest == w->digest[1] ? 1 : -1;
	}
	cJSON_Delete(spec);
	if (group >= 0) {
		w->ids[w->count] = job_id;
		w->groups[w->count++] = (unsigned)group;
	}
	return w->count == REPORT_HISTORY_JOBS ? 1 : 0; /* 1: enough, the walk stops */
}

static int by_key(const void *a, const void *b)
{
	const struct history_task *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

/* A job's task being collected. */
struct collecting {
	struct history_job *job;
	size_t room;
	long long *pending; /* results without usable compare data, by task */
};

static int collect(void *context, const struct store_report_row *row)
{
	struct collecting *c = context;
	struct history_job *job = c->job;
	struct history_task *t;
	cJSON *cell = NULL;
	char key[512];
	size_t common, at, section;

	if (!row->result_id)
		return 0;
	if (job->count == c->room) {
		size_t room = c->room ? c->room * 2 : 16;
		struct history_task *tasks = realloc(job->tasks, room * sizeof(*tasks));
		long long *pending = realloc(c->pending, room * sizeof(*pending));
		if (tasks)
			job->tasks = tasks;
		if (pending)
			c->pending = pending;
		if (!tasks || !pending)
			return LL_ENOMEM;
		c->room = room;
	}
	json_parse_object(row->cell, strlen(row->cell), 0, &cell);
	report_cell_key(cell, key, sizeof(key));
	cJSON_Delete(cell);
	t = &job->tasks[job->count];
	*t = (struct history_task){.key = strdup(key), .order = job->count};
	if (!t->key)
		return LL_ENOMEM;
	c->pending[job->count] = row->result_id;
	if (row->compare && row->summary_version == REPORT_SUMMARY_VERSION &&
	    report_compare_data_role(row->compare, row->compare_len, false, &common, &at, &section) == 0 &&
	    (t->data = malloc(common + section + 8))) {
		memcpy(t->data, row->compare, common);
		memcpy((char *)t->data + common, (const char *)row->compare + at, section);
		if (report_compare_data_read(t->data, common + section, false, &t->read) == 0)
			c->pending[job->count] = 0;
		else {
			free(t->data);
			t->data = NULL;
		}
	}
	job->count++;
	return 0;
}

/* Compare data of T's result RESULT_ID from its text (not cached yet). */
static void compute_data(struct store *store, long long result_id, struct history_task *t,
			 struct report_sample *room)
{
	cJSON *result = NULL;
	char *text = NULL;
	size_t len = 0;

	if (store_result_get(store, result_id, &text) == 0 &&
	    json_parse_object(text, strlen(text), REPORT_MAX_BODY_DEPTH, &result) == 0 &&
	    report_compare_data(result, t->key, room, &t->data, &len) == 0 &&
	    report_compare_data_read(t->data, len, false, &t->read) < 0) {
		free(t->data);
		t->data = NULL;
	}
	free(text);
	cJSON_Delete(result);
}

/* JOB's tasks with compare data, one per key (the last), sorted by key. */
static int load_job(struct store *store, struct history_job *job)
{
	struct collecting c = {.job = job};
	struct report_sample room = {0};
	size_t kept = 0;
	int rc = store_job_compare_rows(store, job->id, REPORT_SUMMARY_VERSION, collect, &c);

	for (size_t i = 0; rc == 0 && i < job->count; i++)
		if (c.pending[i])
			compute_data(store, c.pending[i], &job->tasks[i], &room);
	report_sample_release(&room);
	free(c.pending);
	if (rc < 0)
		return rc;
	qsort(job->tasks, job->count, sizeof(*job->tasks), by_key);
	for (size_t i = 0; i < job->count; i++) {
		struct history_task *t = &job->tasks[i];
		bool last = i + 1 == job->count || strcmp(t->key, job->tasks[i + 1].key) != 0;
		if (!last || !t->data) {
			report_compare_data_release(&t->read);
			free(t->data);
			free(t->key);
			continue;
		}
		job->tasks[kept++] = *t;
	}
	job->count = kept;
	return 0;
}

static void release_job(struct history_job *job)
{
	for (size_t k = 0; k < job->count; k++) {
		report_compare_data_release(&job->tasks[k].read);
		free(job->tasks[k].data);
		free(job->tasks[k].key);
	}
	free(job->tasks);
	job->tasks = NULL;
	job->count = 0;
}

int report_between_load(struct store *store, const cJSON *base_job, const cJSON *cand_job,
			struct report_between **ret)
{
	const cJSON *base_spec = get(base_job, "spec"), *cand_spec = get(cand_job, "spec");
	struct wanted w = {.base_id = (long long)number(base_job, "id", 0),
			   .cand_id = (long long)number(cand_job, "id", 0),
			   .digest = {report_spec_digest(base_spec), report_spec_digest(cand_spec)},
			   .series = {string(base_spec, "series"), string(cand_spec, "series")}};
	struct report_between *b = calloc(1, sizeof(*b));
	const char *family = string(base_job, "family");
	int rc = 0;

	if (!b)
		return LL_ENOMEM;
	if (family && (rc = store_job_history(store, family, w.base_id > w.cand_id ? w.base_id : w.cand_id,
					      REPORT_HISTORY_SCAN, history_walk, &w)) > 0)
		rc = 0;
	for (size_t i = 0, tasks = 0; rc == 0 && i < w.count; i++) {
		b->jobs[i] = (struct history_job){.id = w.ids[i], .group = w.groups[i]};
		b->count++;
		rc = load_job(store, &b->jobs[i]);
		tasks += b->jobs[i].count;
		if (rc == 0 && tasks > REPORT_HISTORY_TASKS) {
			b->count--; /* it does not fit: the newer ones are the history */
			release_job(&b->jobs[i]);
			break;
		}
	}
	if (rc < 0) {
		report_between_free(b);
		return rc;
	}
	*ret = b;
	return 0;
}

void report_between_free(struct report_between *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->count; i++)
		release_job(&b->jobs[i]);
	free(b);
}

size_t report_between_jobs(const struct report_between *b)
{
	return b ? b->count : 0;
}

static const struct history_task *find_task(const struct history_job *job, const char *key)
{
	struct history_task probe = {.key = (char *)key};
	size_t lo = 0, hi = job->count;

	while (lo < hi) { /* the first task whose key is not below KEY */
		size_t mid = (lo + hi) / 2;
		if (strcmp(job->tasks[mid].key, probe.key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < job->count && strcmp(job->tasks[lo].key, key) == 0 ? &job->tasks[lo] : NULL;
}

static bool same_facts(const struct report_compare_data *a, const struct report_compare_data *b)
{
	for (int i = 0; i < REPORT_COMPARED_FACTS; i++)
		if ((a->facts[i] != NULL) != (b->facts[i] != NULL) ||
		    (a->facts[i] && (a->fact_len[i] != b->fact_len[i] ||
				     memcmp(a->facts[i], b->facts[i], a->fact_len[i]) != 0)))
			return false;
	return true;
}

/* V as a sample: with its rounds when it has REPORT_MIN_ROUNDS (BOOTSTRAP)
 * or any (for pairing). */
static struct stats_sample sample_of(const struct report_compare_variant *v, const double *x, bool bootstrap)
{
	bool use = bootstrap ? v->rounds >= REPORT_MIN_ROUNDS : v->rounds > 0;

	return (struct stats_sample){x, v->n, use ? v->round_sizes : NULL, use ? v->rounds : 0};
}

/* Room a row's estimates reuse. */
struct estimate_room {
	double *x, *xf, *r;
};

/* The figure of COUNTER of V (over F's per pass where they pair, as the
 * row: report_compare_counters.h) on the log scale, and its variance from
 * its own bootstrap interval; -1 when it has none. */
static int counter_estimate(const struct report_compare_variant *v, const struct report_compare_variant *f,
			    enum report_counter counter, uint64_t seed, struct estimate_room *room,
			    struct stats_job_estimate *ret)
{
	static const double one_value = 1;
	const struct stats_sample one = {&one_value, 1, NULL, 0};
	const double *x = v->counter[counter], *xf = f->counter[counter];
	struct stats_sample sv;
	double figure, lo, hi;
	int rc = -1;

	if (v->invalid || !x)
		return -1;
	if (xf) {
		struct stats_sample pv = sample_of(v, x, false), pf = sample_of(f, xf, false);
		double *ratios = realloc(room->r, v->n * sizeof(*ratios));
		if (!ratios)
			return -1;
		room->r = ratios;
		if (stats_paired_ratios(&pv, &pf, ratios) == 0)
			x = ratios;
	}
	sv = sample_of(v, x, true);
	if (stats_median(x, v->n, &figure) == 0)
		rc = stats_bootstrap_contrast_ci(&one, NULL, &sv, NULL, STATS_MEDIAN, 0.95,
						 REPORT_COMPARE_RESAMPLES, seed, &lo, &hi);
	if (rc < 0 || !(figure > 0) || !(lo > 0) || !(hi > 0))
		return -1;
	ret->value = log(figure);
	return stats_variance_of_interval(log(lo), log(hi), VARIANCE_FLOOR, &ret->variance) < 0 ? -1 : 0;
}

/* The figure of METRIC of V (over the floor F) on the log scale, and its
 * variance from its own bootstrap interval; -1 when it has none. */
static int job_estimate(const struct report_compare_variant *v, const struct report_compare_variant *f,
			enum report_metric metric, uint64_t seed, struct estimate_room *room,
			struct stats_job_estimate *ret)
{
	static const double one_value = 1, zero_value = 0;
	const struct stats_sample one = {&one_value, 1, NULL, 0}, zero = {&zero_value, 1, NULL, 0};
	const int r = REPORT_COMPARE_RESAMPLES;
	const bool floor = metric == REPORT_METRIC_OVER_FLOOR || metric == REPORT_METRIC_FLOOR_RATIO;
	struct stats_sample sv, sf;
	const double *x, *xf = NULL;
	double figure, lo, hi, mv, mf;
	int rc;

	if (report_counter_of(metric) >= 0)
		return counter_estimate(v, f, (enum report_counter)report_counter_of(metric), seed, room,
					ret);
	if (v->invalid || !v->values || (floor && !f->values))
		return -1;
	if (!(x = report_compare_variant_measured(v, &room->x)) ||
	    (floor && !(xf = report_compare_variant_measured(f, &room->xf))))
		return -1;
	sv = sample_of(v, x, true);
	if (floor)
		sf = sample_of(f, xf, true);
	if (stats_median(x, v->n, &mv) < 0 || (floor && stats_median(xf, f->n, &mf) < 0))
		return -1;
	switch (metric) {
	case REPORT_METRIC_MIN:
		figure = v->ranked ? v->values[0] : x[0];
		for (uint32_t k = 0; !v->ranked && k < v->n; k++)
			figure = x[k] < figure ? x[k] : figure;
		rc = stats_bootstrap_contrast_ci(&one, NULL, &sv, NULL, STATS_MIN, 0.95, r, seed, &lo, &hi);
		break;
	case REPORT_METRIC_OVER_FLOOR:
		figure = mv - mf;
		rc = stats_bootstrap_contrast_ci(&one, &zero, &sv, &sf, STATS_MEDIAN, 0.95, r, seed, &lo,
						 &hi);
		break;
	case REPORT_METRIC_FLOOR_RATIO: {
		struct stats_sample pv = sample_of(v, x, false), pf = sample_of(f, xf, false);
		double *ratios = realloc(room->r, v->n * sizeof(*ratios));
		if (!ratios)
			return -1;
		room->r = ratios;
		if (stats_paired_ratios(&pv, &pf, ratios) == 0) { /* paired by pass, as the row */
			struct stats_sample sr = sample_of(v, ratios, true);
			rc = stats_median(ratios, v->n, &figure) < 0
				     ? -1
				     : stats_bootstrap_contrast_ci(&one, NULL, &sr, NULL, STATS_MEDIAN, 0.95,
								   r, seed, &lo, &hi);
		} else {
			figure = mf > 0 ? mv / mf : 0;
			rc = stats_bootstrap_floor_ratio_ci(&one, &one, &sv, &sf, STATS_MEDIAN, 0.95, r, seed,
							    &lo, &hi);
		}
		break;
	}
	default:
		figure = mv;
		rc = stats_bootstrap_contrast_ci(&one, NULL, &sv, NULL, STATS_MEDIAN, 0.95, r, seed, &lo,
						 &hi);
		break;
	}
	if (rc < 0 || !(figure > 0) || !(lo > 0) || !(hi > 0))
		return -1;
	ret->value = log(figure);
	return stats_variance_of_interval(log(lo), log(hi), VARIANCE_FLOOR, &ret->variance) < 0 ? -1 : 0;
}

/* The row's tau^2 from B's jobs: 0 and *RET_K (the jobs that had the
 * row), or -1 (too few, *RET_K still set). */
static int row_tau2(const struct report_between *b, const char *variant, const char *key,
		    const struct report_compare_data *facts, enum report_metric metric, double *ret_tau2,
		    size_t *ret_k)
{
	struct stats_job_estimate jobs[REPORT_HISTORY_JOBS];
	struct estimate_room room = {0};
	uint64_t seed = stats_seed_of(key) ^ stats_seed_of(variant) ^ stats_seed_of("between-jobs");
	size_t k = 0, df;
	int rc;

	for (size_t i = 0; b && i < b->count; i++) {
		const struct history_task *t = find_task(&b->jobs[i], key);
		const struct report_compare_variant *v =
			t ? report_compare_data_variant(&t->read, variant) : NULL;
		if (!v || !same_facts(&t->read, facts) ||
		    job_estimate(v, &t->read.floor, metric, seed, &room, &jobs[k]) < 0)
			continue;
		jobs[k++].group = b->jobs[i].group;
	}
	free(room.x);
	free(room.xf);
	free(room.r);
	*ret_k = k;
	rc = k >= REPORT_MIN_HISTORY ? stats_between_variance(jobs, k, ret_tau2, &df) : -1;
	return rc < 0 ? -1 : 0;
}

/* Adds "between_jobs": {"jobs": K[, "sd_pct": SD]} to ROW. */
static void add_between(struct report_row *row, size_t k, bool with_sd, double sd_pct)
{
	cJSON *between = cJSON_CreateObject();

	if (!between || !cJSON_AddNumberToObject(between, "jobs", (double)k) ||
	    (with_sd && !cJSON_AddNumberToObject(between, "sd_pct", round_to(sd_pct, 0.01)))) {
		cJSON_Delete(between);
		row->rc = row->rc ? row->rc : LL_ENOMEM;
		return;
	}
	report_row_item(row, "between_jobs", between);
}

bool report_between_judge(const struct report_between *b, const char *variant, const char *key,
			  const struct report_compare_data *facts, const struct report_judged *j,
			  struct report_row *row, bool *ret_between, double *ret_low, double *ret_high)
{
	double tau2 = 0, lo = j->low, hi = j->high, ratio = 1 + j->change / 100;
	size_t k = 0;
	bool estimated = report_between_jobs(b) && ratio > 0 && lo > 0 && hi > 0 &&
			 row_tau2(b, variant, key, facts, j->metric, &tau2, &k) == 0;
	bool significant = j->significant;

	if (estimated && tau2 > 0) {
		lo = ratio * exp(-stats_widen_half_width(log(ratio) - log(lo), tau2, 2, STATS_Z95));
		hi = ratio * exp(stats_widen_half_width(log(hi) - log(ratio), tau2, 2, STATS_Z95));
		significant = j->per_sample ? report_judge_per_sample(j->p, lo, hi, j->change)
					    : report_judge_interval(lo, hi, j->change);
	}
	report_row_string(row, "metric", report_metric_name(j->metric));
	report_row_string(row, "interval_scope", estimated ? "within-and-between-jobs" : "within-job");
	report_row_number(row, "interval_low", round_to(lo, 0.0001));
	report_row_number(row, "interval_high", round_to(hi, 0.0001));
	if (k)
		add_between(row, k, estimated, 100 * sqrt(tau2));
	*ret_between = estimated;
	*ret_low = lo;
	*ret_high = hi;
	return significant;
}
