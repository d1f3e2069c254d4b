/* Two jobs compared for CI: see report.h. */
#include "report_between.h"
#include "report_compare_row.h"
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

int report_compare(struct store *store, long long baseline_id, long long candidate_id, double max_regression,
		   cJSON **ret_comparison)
{
	return report_compare_metric(store, baseline_id, candidate_id, max_regression,
				     REPORT_JUDGE_DEFAULT_METRIC, true, false, ret_comparison);
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
	int status_counts[4], regressions, between_rows, underpowered, rc;
};

static void *rows_run(void *arg)
{
	struct rows_part *p = arg;
	struct report_row_room room = {0};
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
			    (p->rc = report_compare_row(string(v, "name"), t,
							report_side_find(p->cand, t->key), p->global_reason,
							p->max_regression, p->metric, p->between, &room, &row,
							&between)) < 0 ||
			    (p->text && (p->rc = buf_append(p->text, "}", 1)) < 0)) {
				cJSON_Delete(row.obj);
				break;
			}
			while (k < 3 && strcmp(row.status, statuses[k]) != 0)
				k++;
			p->status_counts[k]++;
			p->regressions += row.regression;
			p->underpowered += row.underpowered;
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
	part->underpowered += second.underpowered;
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

/* A shared build's side: its report's "shipped" into SIDE, and as
 * "build_cells" its cells that name a build task (docs/builds.md). */
static int add_shipped(struct store *store, long long job_id, cJSON *side)
{
	cJSON *report = NULL, *shipped, *cells, *c, *next;
	int rc = report_job(store, job_id, false, &report);

	if (rc < 0)
		return rc;
	if ((shipped = cJSON_DetachItemFromObjectCaseSensitive(report, "shipped"))) {
		cJSON_AddItemToObject(side, "shipped", shipped);
		cells = cJSON_DetachItemFromObjectCaseSensitive(report, "cells");
		for (c = cells ? cells->child : NULL; c; c = next) {
			next = c->next;
			cJSON_DeleteItemFromObjectCaseSensitive(c, "facts");
			if (!get(c, "build_task"))
				cJSON_Delete(cJSON_DetachItemViaPointer(cells, c));
		}
		if (cells)
			cJSON_AddItemToObject(side, "build_cells", cells);
	}
	cJSON_Delete(report);
	return 0;
}

/* report_compare_metric() into *RET_COMPARISON; ROWS_TEXT not NULL: the
 * rows are written as JSON text to it instead (the array's members,
 * without its brackets), and the comparison stops before "rows"
 * (report_compare_json()). */
static int compare_jobs(struct store *store, long long baseline_id, long long candidate_id,
			double max_regression, enum report_metric metric, bool across_jobs,
			bool require_power, struct buf *rows_text, cJSON **ret_comparison)
{
	struct compare_side base = {0}, cand = {0};
	struct collect base_collect = {&base, false, cJSON_CreateObject()},
		       cand_collect = {&cand, true, cJSON_CreateObject()};
	struct rows_part part = {.metric = metric, .max_regression = max_regression, .text = rows_text};
	struct buf second_text;
	cJSON *base_job = NULL, *cand_job = NULL, *out = NULL, *rows = NULL, *counts, *intervals, *power;
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
		if (get(job, "builds") && (rc = add_shipped(store, (long long)number(job, "id", 0), j)) < 0)
			goto done;
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
	/* --require-power: a row that could not see max_regression fails
	 * the gate, in its own words (docs/ci-gate.md) */
	cJSON_AddStringToObject(out, "verdict",
				part.regressions                         ? "regression"
				: require_power && part.underpowered > 0 ? "underpowered"
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
	power = cJSON_AddObjectToObject(out, "power"); /* what the rows could have seen */
	cJSON_AddNumberToObject(power, "level", 0.95);
	cJSON_AddNumberToObject(power, "power", 0.8);
	cJSON_AddBoolToObject(power, "required", require_power);
	cJSON_AddNumberToObject(power, "underpowered_rows", part.underpowered);
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
			  bool require_power, cJSON **ret_comparison)
{
	return compare_jobs(store, baseline_id, candidate_id, max_regression, metric, across_jobs,
			    require_power, NULL, ret_comparison);
}

int report_compare_json(struct store *store, long long baseline_id, long long candidate_id,
			double max_regression, enum report_metric metric, bool across_jobs,
			bool require_power, struct buf *out)
{
	struct buf rows;
	cJSON *comparison = NULL, *significance = significance_of();
	int rc;

	buf_init(&rows, out->limit);
	if (!significance)
		rc = LL_ENOMEM;
	else if ((rc = compare_jobs(store, baseline_id, candidate_id, max_regression, metric, across_jobs,
				    require_power, &rows, &comparison)) == 0 &&
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
