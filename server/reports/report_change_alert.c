/*
 * The regression alert of a series' finished job from its confirmed change
 * points (report.h, report_change_point_alert(); docs/series.md "Alerts
 * from change points").
 */
#include "report_int.h"

#include "loadlab/change_points.h"
#include "loadlab/err.h"

#include <stdlib.h>
#include <string.h>

/* An alert already open within this many points of a change point, for
 * the same variant and cell, is that change point's: the detector may
 * move a change by a point as the history grows. */
#define ALERT_SAME_CHANGE_SLACK 2

/* Only change points among the newest RECENT points of a trace open an
 * alert: older ones were confirmed (or not) by earlier jobs. */
#define RECENT (CHANGE_POINTS_DEFAULT_WINDOW / 2)

static int position_of(const cJSON *points, double job_id)
{
	const cJSON *p;
	int i = 0;

	cJSON_ArrayForEach(p, points) {
		if (number(p, "job_id", 0) == job_id)
			return i;
		i++;
	}
	return -1;
}

static bool alerted_already(const cJSON *alerts, const char *series, const cJSON *trace, int pos)
{
	const cJSON *a, *r, *points = get(trace, "points");

	cJSON_ArrayForEach(a, get(alerts, "alerts")) {
		int at;
		if (!string(a, "series") || strcmp(string(a, "series"), series) != 0)
			continue;
		at = position_of(points, number(a, "job_id", 0));
		if (at < 0 || abs(at - pos) > ALERT_SAME_CHANGE_SLACK)
			continue;
		cJSON_ArrayForEach(r, get(a, "rows"))
			if (string(r, "variant") && string(r, "cell") &&
			    strcmp(string(r, "variant"), string(trace, "variant")) == 0 &&
			    strcmp(string(r, "cell"), string(trace, "cell")) == 0)
				return true;
	}
	return false;
}

static cJSON *alert_row(const cJSON *trace, const cJSON *cp)
{
	const cJSON *points = get(trace, "points");
	cJSON *row = cJSON_CreateObject();
	int before = position_of(points, number(get(cp, "before"), "job_id", 0));
	int after = position_of(points, number(get(cp, "after"), "job_id", 0));

	cJSON_AddStringToObject(row, "variant", string(trace, "variant"));
	cJSON_AddStringToObject(row, "cell", string(trace, "cell"));
	cJSON_AddNumberToObject(row, "change_pct", number(cp, "magnitude_pct", 0));
	cJSON_AddNumberToObject(row, "baseline_median_us",
				number(cJSON_GetArrayItem(points, before), "median_us", 0));
	cJSON_AddNumberToObject(row, "candidate_median_us",
				number(cJSON_GetArrayItem(points, after), "median_us", 0));
	cJSON_AddNumberToObject(row, "p_value", number(cp, "p_value", 1));
	cJSON_AddNumberToObject(row, "ratio_ci_low", round_to(1 + number(cp, "ci_low_pct", 0) / 100, 0.0001));
	if (cJSON_IsNumber(get(cp, "ci_high_pct")))
		cJSON_AddNumberToObject(row, "ratio_ci_high",
					round_to(1 + number(cp, "ci_high_pct", 0) / 100, 0.0001));
	cJSON_AddItemToObject(row, "change_point", cJSON_Duplicate(cp, true));
	return row;
}

int report_change_point_alert(struct store *store, const char *series, long long job_id, double threshold_pct,
			      cJSON **ret_alert, bool *ret_short)
{
	cJSON *history = NULL, *alerts = NULL, *rows = NULL, *alert = NULL;
	const cJSON *trace, *worst = NULL;
	double worst_pct = 0;
	bool short_history = true;
	int rc;

	if ((rc = report_series_history(store, series, NULL, NULL, "median", -(1LL << 62), true, &history)) <
		    0 ||
	    (rc = store_alert_list(store, false, &alerts)) < 0)
		goto done;
	rows = cJSON_CreateArray();
	cJSON_ArrayForEach(trace, get(history, "traces")) {
		const cJSON *cp;
		cJSON *found;
		int n = 0, here = position_of(get(trace, "points"), (double)job_id);
		if (here < 0)
			continue;
		if (!(found = report_trace_change_points(trace, job_id, threshold_pct, NULL, &n))) {
			rc = err_set(LL_ENOMEM, "Out of memory.");
			goto done;
		}
		if (n >= REPORT_CHANGE_POINTS_MIN_HISTORY)
			short_history = false;
		cJSON_ArrayForEach(cp, found) {
			int pos = position_of(get(trace, "points"), number(get(cp, "after"), "job_id", 0));
			cJSON *row;
			if (n < REPORT_CHANGE_POINTS_MIN_HISTORY || !cJSON_IsTrue(get(cp, "regression")) ||
			    pos <= here - RECENT || alerted_already(alerts, series, trace, pos))
				continue;
			row = alert_row(trace, cp);
			cJSON_AddItemToArray(rows, row);
			if (!worst || number(cp, "magnitude_pct", 0) > worst_pct) {
				worst_pct = number(cp, "magnitude_pct", 0);
				worst = get(row, "change_point");
			}
		}
		cJSON_Delete(found);
	}
	if (worst) {
		alert = cJSON_CreateObject();
		cJSON_AddNumberToObject(alert, "threshold_pct", threshold_pct);
		cJSON_AddNumberToObject(alert, "worst_change_pct", worst_pct);
		cJSON_AddNumberToObject(alert, "job_id", number(get(worst, "after"), "job_id", 0));
		cJSON_AddNumberToObject(alert, "baseline_id", number(get(worst, "before"), "job_id", 0));
		cJSON_AddItemToObject(alert, "rows", rows);
		rows = NULL;
	}
	*ret_alert = alert;
	*ret_short = short_history;
done:
	cJSON_Delete(rows);
	cJSON_Delete(history);
	cJSON_Delete(alerts);
	return rc;
}
