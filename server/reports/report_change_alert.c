/*
 * The regression alert of a series' finished job from its confirmed change
 * points (report.h, report_change_point_alert(); docs/series.md "Alerts
 * from change points"): a change point the detector confirms opens an
 * alert only when the one judge (report_judge.h), comparing the jobs
 * either side of it as compare does, says regression; the alert's row
 * carries that comparison's judged figures, so its compare link shows
 * the same verdict on the same numbers.
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

cJSON *report_alert_row(const cJSON *row)
{
	static const char *const context[] = {"baseline_median_us", "candidate_median_us", "unit", NULL};
	const cJSON *judged = get(row, "judged");
	cJSON *out = cJSON_CreateObject();

	cJSON_AddStringToObject(out, "variant", string(row, "variant"));
	cJSON_AddStringToObject(out, "cell", string(row, "cell"));
	cJSON_AddStringToObject(out, "metric",
				string(judged, "metric") ? string(judged, "metric") : "median");
	cJSON_AddNumberToObject(out, "change_pct",
				number(judged ? judged : row, "change_pct", number(row, "change_pct", 0)));
	cJSON_AddNumberToObject(out, "ratio", number(judged, "ratio", number(row, "ratio", 0)));
	cJSON_AddNumberToObject(out, "ratio_ci_low",
				number(row, "interval_low", number(row, "ratio_ci_low", 0)));
	cJSON_AddNumberToObject(out, "ratio_ci_high",
				number(row, "interval_high", number(row, "ratio_ci_high", 0)));
	if (cJSON_IsNumber(get(judged ? judged : row, "p_value")))
		cJSON_AddNumberToObject(out, "p_value", number(judged ? judged : row, "p_value", 1));
	if (string(row, "interval_scope"))
		cJSON_AddStringToObject(out, "interval_scope", string(row, "interval_scope"));
	for (int i = 0; context[i]; i++)
		if (get(row, context[i]))
			cJSON_AddItemToObject(out, context[i], cJSON_Duplicate(get(row, context[i]), true));
	if (judged)
		cJSON_AddItemToObject(out, "judged", cJSON_Duplicate(judged, true));
	return out;
}

/* The one judge's row of TRACE's variant and cell between the jobs either
 * side of change point CP (report_compare(), across jobs, the series'
 * THRESHOLD_PCT): a new alert row with the change point, or NULL when the
 * judge does not say regression there (or the jobs cannot be compared). */
static cJSON *confirmed_row(struct store *store, const cJSON *trace, const cJSON *cp, double threshold_pct)
{
	long long before = (long long)number(get(cp, "before"), "job_id", 0);
	long long after = (long long)number(get(cp, "after"), "job_id", 0);
	cJSON *comparison = NULL, *out = NULL;
	const cJSON *row;

	if (report_compare(store, before, after, threshold_pct, &comparison) < 0)
		return NULL;
	cJSON_ArrayForEach(row, get(comparison, "rows")) {
		if (!string(row, "variant") || !string(row, "cell") ||
		    strcmp(string(row, "variant"), string(trace, "variant")) != 0 ||
		    strcmp(string(row, "cell"), string(trace, "cell")) != 0)
			continue;
		if (cJSON_IsTrue(get(row, "regression")) && (out = report_alert_row(row)))
			cJSON_AddItemToObject(out, "change_point", cJSON_Duplicate(cp, true));
		break;
	}
	cJSON_Delete(comparison);
	return out;
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
			/* confirmed by the one judge on the jobs either side (report_judge.h) */
			if (!(row = confirmed_row(store, trace, cp, threshold_pct)))
				continue;
			cJSON_AddItemToArray(rows, row);
			if (!worst || number(row, "change_pct", 0) > worst_pct) {
				worst_pct = number(row, "change_pct", 0);
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
