/* Two jobs compared for CI: see report.h. */
#include "report_int.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A side's cells by key: KEY -> {"state","last_error","body": parsed
 * result}, in task order, with a hash index over the keys so that finding
 * a cell does not walk the other 999 (open addressing, never full). */
struct compare_side {
	cJSON *cells;
	size_t capacity; /* a power of two, over twice the count */
	size_t count;
	cJSON **index;
};

static cJSON **slot_of(struct compare_side *side, const char *key)
{
	size_t i = (size_t)report_seed_of(key) & (side->capacity - 1);

	while (side->index[i] && strcmp(side->index[i]->string, key) != 0)
		i = (i + 1) & (side->capacity - 1);
	return &side->index[i];
}

static const cJSON *find_cell(struct compare_side *side, const char *key)
{
	return side->index ? *slot_of(side, key) : NULL;
}

/* Makes room for one more key in the index; LL_ENOMEM. */
static int index_grow(struct compare_side *side)
{
	struct compare_side bigger = {side->cells, side->capacity ? side->capacity * 2 : 64, 0, NULL};

	if (side->count * 2 + 2 <= side->capacity)
		return 0;
	if (!(bigger.index = calloc(bigger.capacity, sizeof(*bigger.index))))
		return LL_ENOMEM;
	for (size_t i = 0; i < side->capacity; i++)
		if (side->index[i])
			*slot_of(&bigger, side->index[i]->string) = side->index[i];
	free(side->index);
	side->index = bigger.index;
	side->capacity = bigger.capacity;
	return 0;
}

static int collect_side(void *context, const struct store_report_row *row)
{
	struct compare_side *side = context;
	cJSON *cell = NULL, *entry, *body = NULL, **slot;
	char key[512];

	if (index_grow(side) < 0)
		return LL_ENOMEM;
	entry = cJSON_CreateObject();
	json_parse_object(row->cell, strlen(row->cell), 0, &cell);
	report_cell_key(cell, key, sizeof(key));
	cJSON_Delete(cell);
	cJSON_AddStringToObject(entry, "state", row->state);
	if (row->last_error)
		cJSON_AddStringToObject(entry, "last_error", row->last_error);
	if (row->body && json_parse_object(row->body, strlen(row->body), REPORT_MAX_BODY_DEPTH, &body) == 0)
		cJSON_AddItemToObject(entry, "body", body);
	/* A later task of the same cell replaces the earlier, at the end. */
	slot = slot_of(side, key);
	if (*slot)
		cJSON_Delete(cJSON_DetachItemViaPointer(side->cells, *slot));
	else
		side->count++;
	cJSON_AddItemToObject(side->cells, key, entry);
	*slot = entry;
	return 0;
}

/* Facts that must agree for two results to be compared. */
static const char *const compared_facts[] = {"os",   "os_version", "arch",   "cpu_model",
					     "disk", "fs",         "runner", NULL};

static bool facts_differ(const cJSON *a, const cJSON *b, char *reason, size_t size)
{
	for (int i = 0; compared_facts[i]; i++) {
		const cJSON *x = get(a, compared_facts[i]), *y = get(b, compared_facts[i]);
		char *tx, *ty;
		bool differ;
		if (!x && !y)
			continue;
		if (cJSON_IsString(x) && cJSON_IsString(y) && strcmp(x->valuestring, y->valuestring) == 0)
			continue; /* printed alike: equal */
		tx = x ? cJSON_PrintUnformatted(x) : strdup("none");
		ty = y ? cJSON_PrintUnformatted(y) : strdup("none");
		differ = !tx || !ty || strcmp(tx, ty) != 0;
		if (differ)
			snprintf(reason, size, "the agents' facts differ: %s %s vs %s", compared_facts[i],
				 tx ? tx : "?", ty ? ty : "?");
		free(tx);
		free(ty);
		if (differ)
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

/* One row; BASE and CAND are room for the two samples, reused row after
 * row. */
static cJSON *compare_row(const char *variant, const char *key, const cJSON *base_entry,
			  const cJSON *cand_entry, const char *global_reason, double max_regression,
			  struct report_sample *base, struct report_sample *cand)
{
	struct stats_summary sx, sy;
	cJSON *row = cJSON_CreateObject();
	const cJSON *bb = get(base_entry, "body"), *cb = get(cand_entry, "body");
	const cJSON *bv = report_find_variant(get(bb, "variants"), variant);
	const cJSON *cv = report_find_variant(get(cb, "variants"), variant);
	double *x = NULL, *y = NULL, change = 0, lo, hi;
	size_t nx = 0, ny = 0;
	bool significant = false;
	char reason[300];

	cJSON_AddStringToObject(row, "variant", variant);
	cJSON_AddStringToObject(row, "cell", key);
	if (global_reason)
		return not_comparable(row, global_reason);
	if (!cand_entry)
		return not_comparable(row, "the candidate has no task in this cell");
	if (!bb || !cb)
		return not_comparable(row, !bb ? "the baseline has no result in this cell"
					       : "the candidate has no result in this cell");
	if (facts_differ(get(bb, "facts"), get(cb, "facts"), reason, sizeof(reason)))
		return not_comparable(row, reason);
	if (!bv || !cv)
		return not_comparable(row, !bv ? "the baseline did not run this variant"
					       : "the candidate did not run this variant");
	if (cJSON_IsFalse(get(bv, "valid")) || cJSON_IsFalse(get(cv, "valid")))
		return not_comparable(row, cJSON_IsFalse(get(bv, "valid"))
						   ? "the baseline's variant is invalid"
						   : "the candidate's variant is invalid");
	if (report_samples_of(get(get(bv, "warm"), "samples_us"), &x, &nx) < 0 ||
	    report_samples_of(get(get(cv, "warm"), "samples_us"), &y, &ny) < 0) {
		free(x);
		return not_comparable(row, "warm samples are missing");
	}
	if (report_sample_set(base, x, nx) < 0 || report_sample_set(cand, y, ny) < 0) {
		free(x);
		free(y);
		return not_comparable(row, "warm samples are missing");
	}
	report_sample_summary(base, &sx);
	report_sample_summary(cand, &sy);
	cJSON_AddNumberToObject(row, "baseline_median_us", round_to(sx.median, 0.1));
	cJSON_AddNumberToObject(row, "candidate_median_us", round_to(sy.median, 0.1));
	cJSON_AddNumberToObject(row, "baseline_min_us", round_to(sx.min, 0.1));
	cJSON_AddNumberToObject(row, "candidate_min_us", round_to(sy.min, 0.1));
	if (report_compare_samples(base, &sx, cand, &sy, REPORT_COMPARE_RESAMPLES,
				   report_seed_of(key) ^ report_seed_of(variant), false, row, &change,
				   &significant) < 0) {
		free(x);
		free(y);
		return not_comparable(row, "the baseline's times are zero");
	}
	if (report_sample_bootstrap_ratio_ci(base, cand, STATS_MIN, 0.95, REPORT_COMPARE_RESAMPLES,
					     report_seed_of(variant), true, &lo, &hi) == 0) {
		cJSON_AddNumberToObject(row, "min_ratio_ci_low", round_to(lo, 0.0001));
		cJSON_AddNumberToObject(row, "min_ratio_ci_high", round_to(hi, 0.0001));
	}
	free(x);
	free(y);
	cJSON_AddStringToObject(row, "status",
				!significant ? "no_significant_change"
				: change > 0 ? "slower"
					     : "faster");
	cJSON_AddBoolToObject(row, "regression", significant && change > 0 && change > max_regression);
	return row;
}

int report_compare(struct store *store, long long baseline_id, long long candidate_id, double max_regression,
		   cJSON **ret_comparison)
{
	struct compare_side base = {cJSON_CreateObject(), 0, 0, NULL},
			    cand = {cJSON_CreateObject(), 0, 0, NULL};
	struct report_sample base_sample = {0}, cand_sample = {0};
	cJSON *base_job = NULL, *cand_job = NULL, *out = NULL, *rows, *counts;
	const cJSON *v, *cell;
	const char *global_reason = NULL;
	int rc, regressions = 0, comparable = 0;

	if ((rc = store_job_get(store, baseline_id, &base_job)) < 0 ||
	    (rc = store_job_get(store, candidate_id, &cand_job)) < 0 ||
	    (rc = store_job_report_rows(store, baseline_id, true, collect_side, &base)) < 0 ||
	    (rc = store_job_report_rows(store, candidate_id, true, collect_side, &cand)) < 0)
		goto done;
	if (!report_same_generator(get(base_job, "spec"), get(cand_job, "spec")))
		global_reason = "the jobs' generator parameters differ";
	else if (strcmp(string(base_job, "family"), string(cand_job, "family")) != 0)
		global_reason = "the jobs study different families";

	out = cJSON_CreateObject();
	for (int side = 0; side < 2; side++) {
		const cJSON *job = side ? cand_job : base_job;
		cJSON *j = cJSON_AddObjectToObject(out, side ? "candidate" : "baseline");
		cJSON_AddNumberToObject(j, "id", number(job, "id", 0));
		cJSON_AddStringToObject(j, "name", string(job, "name"));
		cJSON_AddStringToObject(j, "state", string(job, "state"));
	}
	cJSON_AddNumberToObject(out, "max_regression_pct", max_regression);
	if ((rc = report_compare_program(base_job, cand_job, out)) < 0)
		goto done;
	rows = cJSON_CreateArray();
	cJSON_ArrayForEach(v, get(get(base_job, "spec"), "variants")) {
		cJSON_ArrayForEach(cell, base.cells) {
			cJSON *row = compare_row(string(v, "name"), cell->string, cell,
						 find_cell(&cand, cell->string), global_reason,
						 max_regression, &base_sample, &cand_sample);
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
	}
	*ret_comparison = out;
	out = NULL;
done:
	cJSON_Delete(out);
	cJSON_Delete(base_job);
	cJSON_Delete(cand_job);
	cJSON_Delete(base.cells);
	cJSON_Delete(cand.cells);
	free(base.index);
	free(cand.index);
	report_sample_release(&base_sample);
	report_sample_release(&cand_sample);
	return rc;
}
