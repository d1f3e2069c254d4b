/*
 * A series' change points (report.h, docs/series.md "Change points"):
 * change_points.h over each trace's figure per job, with the revisions
 * around each change and the machine-change guard (report_machine.h).
 */
#include "report_int.h"
#include "report_machine.h"

#include "loadlab/change_points.h"
#include "loadlab/err.h"

#include <stdlib.h>
#include <string.h>

/* Two points this close (in positions) or closer to a change of the
 * machine's facts count as coinciding with it: the detector may place a
 * step one point early or late. */
#define MACHINE_CHANGE_SLACK 1

static cJSON *side(const cJSON *point)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "job_id", number(point, "job_id", 0));
	cJSON_AddItemToObject(o, "revision", cJSON_Duplicate(get(point, "revision"), true));
	cJSON_AddItemToObject(o, "created_at", cJSON_Duplicate(get(point, "created_at"), true));
	return o;
}

static cJSON *machine_change(const cJSON *trace, const cJSON *before, const cJSON *after)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "variant", string(trace, "variant"));
	cJSON_AddStringToObject(o, "cell", string(trace, "cell"));
	cJSON_AddItemToObject(o, "before", side(before));
	cJSON_AddItemToObject(o, "after", side(after));
	cJSON_AddItemToObject(o, "facts_changed",
			      report_machine_differences(get(before, "machine"), get(after, "machine")));
	return o;
}

static bool same_machine(const cJSON *a, const cJSON *b)
{
	const char *x = string(a, "facts_digest"), *y = string(b, "facts_digest");

	return !x || !y || strcmp(x, y) == 0;
}

static cJSON *change_point_json(const cJSON *trace, const cJSON **pts, size_t n,
				const struct change_point *cp, bool floor, double threshold_pct)
{
	cJSON *o = cJSON_CreateObject();
	size_t machine_at = 0;
	double pct = round_to(cp->magnitude * 100, 0.01);
	bool regression;

	for (size_t j = cp->index > MACHINE_CHANGE_SLACK ? cp->index - MACHINE_CHANGE_SLACK : 1;
	     j <= cp->index + MACHINE_CHANGE_SLACK && j < n && !machine_at; j++)
		if (!same_machine(pts[j - 1], pts[j]))
			machine_at = j;
	regression = !machine_at && pct > 0 && pct >= threshold_pct;
	cJSON_AddStringToObject(o, "variant", string(trace, "variant"));
	cJSON_AddStringToObject(o, "cell", string(trace, "cell"));
	cJSON_AddStringToObject(o, "statistic", floor ? "x_floor" : "median_us");
	cJSON_AddItemToObject(o, "before", side(pts[cp->index - 1]));
	cJSON_AddItemToObject(o, "after", side(pts[cp->index]));
	cJSON_AddNumberToObject(o, "level_before", round_to(exp(cp->mean_before), floor ? 0.0001 : 0.1));
	cJSON_AddNumberToObject(o, "level_after", round_to(exp(cp->mean_after), floor ? 0.0001 : 0.1));
	cJSON_AddNumberToObject(o, "magnitude_pct", pct);
	cJSON_AddNumberToObject(o, "ci_low_pct", round_to(cp->ci_low * 100, 0.01));
	if (isfinite(cp->ci_high))
		cJSON_AddNumberToObject(o, "ci_high_pct", round_to(cp->ci_high * 100, 0.01));
	else
		cJSON_AddNullToObject(o, "ci_high_pct");
	cJSON_AddNumberToObject(o, "p_value", cp->p_value);
	cJSON_AddNumberToObject(o, "n_before", (double)cp->n_before);
	cJSON_AddNumberToObject(o, "n_after", (double)cp->n_after);
	cJSON_AddBoolToObject(o, "machine_changed", machine_at != 0);
	cJSON_AddItemToObject(o, "facts_changed",
			      machine_at ? report_machine_differences(get(pts[machine_at - 1], "machine"),
								      get(pts[machine_at], "machine"))
					 : cJSON_CreateArray());
	cJSON_AddBoolToObject(o, "regression", regression);
	return o;
}

cJSON *report_trace_change_points(const cJSON *trace, long long until_job_id, double threshold_pct,
				  cJSON *machine_changes, int *ret_points)
{
	const cJSON *p, *points = get(trace, "points");
	const cJSON **pts = NULL;
	double *values = NULL;
	struct change_point *cps = NULL;
	size_t n = 0, count = 0, total = (size_t)cJSON_GetArraySize(points), first = 0;
	bool floor = true;
	cJSON *out = cJSON_CreateArray();

	pts = calloc(total ? total : 1, sizeof(*pts));
	if (!out || !pts)
		goto fail;
	cJSON_ArrayForEach(p, points) {
		if (until_job_id && number(p, "job_id", 0) > (double)until_job_id)
			continue;
		if (number(p, "median_us", 0) <= 0)
			continue;
		pts[n++] = p;
	}
	if (n > REPORT_CHANGE_POINTS_MAX_HISTORY)
		first = n - REPORT_CHANGE_POINTS_MAX_HISTORY;
	n -= first;
	memmove(pts, pts + first, n * sizeof(*pts));
	for (size_t i = 0; i < n; i++)
		floor = floor && number(pts[i], "floor_median_us", 0) > 0;
	values = malloc((n ? n : 1) * sizeof(*values));
	cps = malloc((n ? n : 1) * sizeof(*cps));
	if (!values || !cps)
		goto fail;
	for (size_t i = 0; i < n; i++)
		values[i] = floor ? number(pts[i], "median_us", 0) / number(pts[i], "floor_median_us", 1)
				  : number(pts[i], "median_us", 0);
	if (change_points_find(values, n, NULL, cps, &count) < 0)
		count = 0;
	for (size_t i = 0; i < count; i++)
		cJSON_AddItemToArray(out, change_point_json(trace, pts, n, &cps[i], floor, threshold_pct));
	for (size_t i = 1; machine_changes && i < n; i++)
		if (!same_machine(pts[i - 1], pts[i]))
			cJSON_AddItemToArray(machine_changes, machine_change(trace, pts[i - 1], pts[i]));
	*ret_points = (int)n;
	free(pts);
	free(values);
	free(cps);
	return out;
fail:
	free(pts);
	free(values);
	free(cps);
	cJSON_Delete(out);
	return NULL;
}

int report_change_points(struct store *store, const char *name, const char *variant, const char *cell,
			 cJSON **ret_change_points)
{
	cJSON *series = NULL, *out, *all, *machine, *parameters;
	const cJSON *trace;
	double threshold;
	int rc, n;

	if ((rc = report_series_history(store, name, variant, cell, "median", -(1LL << 62), true, &series)) <
	    0)
		return rc;
	threshold = number(series, "threshold_pct", 0);
	out = cJSON_CreateObject();
	cJSON_AddStringToObject(out, "series", name);
	cJSON_AddNumberToObject(out, "threshold_pct", threshold);
	parameters = cJSON_AddObjectToObject(out, "parameters");
	cJSON_AddNumberToObject(parameters, "window", CHANGE_POINTS_DEFAULT_WINDOW);
	cJSON_AddNumberToObject(parameters, "max_p_value", CHANGE_POINTS_DEFAULT_MAX_P_VALUE);
	cJSON_AddNumberToObject(parameters, "min_magnitude_pct", CHANGE_POINTS_DEFAULT_MIN_MAGNITUDE * 100);
	cJSON_AddNumberToObject(parameters, "max_history", REPORT_CHANGE_POINTS_MAX_HISTORY);
	all = cJSON_AddArrayToObject(out, "change_points");
	machine = cJSON_AddArrayToObject(out, "machine_changes");
	cJSON_ArrayForEach(trace, get(series, "traces")) {
		cJSON *found = report_trace_change_points(trace, 0, threshold, machine, &n), *cp;
		if (!found) {
			rc = err_set(LL_ENOMEM, "Out of memory.");
			break;
		}
		while ((cp = cJSON_DetachItemFromArray(found, 0)))
			cJSON_AddItemToArray(all, cp);
		cJSON_Delete(found);
	}
	cJSON_Delete(series);
	if (rc < 0) {
		cJSON_Delete(out);
		return rc;
	}
	*ret_change_points = out;
	return 0;
}
