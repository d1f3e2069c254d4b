/* A series' history from its jobs' result summaries: see report.h. */
#include "report_int.h"
#include "report_machine.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct series_walk {
	const cJSON *job; /* {"id","revision","created_at",...} */
	const char *variant, *cell, *metric;
	bool machine;  /* each point gets its machine's facts too */
	cJSON *traces; /* array of {"variant","cell","points"} */
};

static cJSON *trace_for(cJSON *traces, const char *variant, const char *cell)
{
	cJSON *t;

	cJSON_ArrayForEach(t, traces)
		if (strcmp(string(t, "variant"), variant) == 0 && strcmp(string(t, "cell"), cell) == 0)
			return cJSON_GetObjectItemCaseSensitive(t, "points");
	t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "variant", variant);
	cJSON_AddStringToObject(t, "cell", cell);
	cJSON_AddItemToArray(traces, t);
	return cJSON_AddArrayToObject(t, "points");
}

static int add_points(void *context, const struct store_report_row *row)
{
	struct series_walk *w = context;
	cJSON *cell = NULL, *summary = NULL, *machine;
	const cJSON *v;
	char key[512], digest[REPORT_MACHINE_DIGEST_HEX + 1];

	if (!row->result_id)
		return 0;
	json_parse_object(row->cell, strlen(row->cell), 0, &cell);
	report_cell_key(cell, key, sizeof(key));
	cJSON_Delete(cell);
	if (w->cell && strcmp(w->cell, key) != 0)
		return 0;
	if (row->summary && row->summary_version == REPORT_SUMMARY_VERSION)
		json_parse_object(row->summary, strlen(row->summary), REPORT_MAX_BODY_DEPTH, &summary);
	if (!summary && row->body)
		report_summarize_result(row->body, &summary);
	machine = report_machine_facts(get(summary, "facts"));
	report_machine_digest(machine, digest);
	cJSON_ArrayForEach(v, get(summary, "variants")) {
		const cJSON *warm = get(v, "warm");
		cJSON *p;
		if (!warm || cJSON_IsFalse(get(v, "valid")) ||
		    (w->variant && strcmp(w->variant, v->string) != 0))
			continue;
		p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "job_id", number(w->job, "id", 0));
		cJSON_AddItemToObject(p, "revision", cJSON_Duplicate(get(w->job, "revision"), true));
		cJSON_AddItemToObject(p, "created_at", cJSON_Duplicate(get(w->job, "created_at"), true));
		cJSON_AddNumberToObject(
			p, "value_us",
			number(warm, strcmp(w->metric, "min") == 0 ? "min_us" : "median_us", 0));
		cJSON_AddNumberToObject(p, "median_us", number(warm, "median_us", 0));
		cJSON_AddNumberToObject(p, "ci_low_us", number(warm, "ci_low_us", 0));
		cJSON_AddNumberToObject(p, "ci_high_us", number(warm, "ci_high_us", 0));
		cJSON_AddNumberToObject(p, "min_us", number(warm, "min_us", 0));
		cJSON_AddNumberToObject(p, "n", number(warm, "n", 0));
		if (number(warm, "floor_median_us", 0) > 0)
			cJSON_AddNumberToObject(p, "floor_median_us", number(warm, "floor_median_us", 0));
		cJSON_AddStringToObject(p, "facts_digest", digest);
		if (w->machine)
			cJSON_AddItemToObject(p, "machine", cJSON_Duplicate(machine, true));
		cJSON_AddItemToArray(trace_for(w->traces, v->string, key), p);
	}
	cJSON_Delete(machine);
	cJSON_Delete(summary);
	return 0;
}

int report_series(struct store *store, const char *name, const char *variant, const char *cell,
		  const char *metric, long long since_ms, cJSON **ret_series)
{
	return report_series_history(store, name, variant, cell, metric, since_ms, false, ret_series);
}

int report_series_history(struct store *store, const char *name, const char *variant, const char *cell,
			  const char *metric, long long since_ms, bool machine, cJSON **ret_series)
{
	struct store_series_settings settings;
	cJSON *jobs = NULL, *out = NULL, *alerts = NULL, *mine, *a;
	const cJSON *job;
	int rc;

	if ((rc = store_series_jobs(store, name, since_ms, &jobs)) < 0 ||
	    (rc = store_series_settings_get(store, name, &settings)) < 0 ||
	    (rc = store_alert_list(store, false, &alerts)) < 0)
		goto done;
	if (cJSON_GetArraySize(jobs) == 0) {
		cJSON *all = NULL;
		bool known = store_series_jobs(store, name, -(1LL << 62), &all) == 0 &&
			     cJSON_GetArraySize(all) > 0;
		cJSON_Delete(all);
		if (!known) {
			rc = err_set(LL_ENOTFOUND, "No job names the series '%s'.", name);
			goto done;
		}
	}
	out = cJSON_CreateObject();
	cJSON_AddStringToObject(out, "series", name);
	cJSON_AddStringToObject(out, "metric", metric);
	cJSON_AddNumberToObject(out, "threshold_pct", settings.threshold_pct);
	if (settings.webhook_url[0])
		cJSON_AddStringToObject(out, "webhook_url", settings.webhook_url);
	else
		cJSON_AddNullToObject(out, "webhook_url");
	{
		struct series_walk w = {NULL,   variant, cell,
					metric, machine, cJSON_AddArrayToObject(out, "traces")};
		int skip = machine ? cJSON_GetArraySize(jobs) - REPORT_CHANGE_POINTS_MAX_HISTORY : 0;
		cJSON_ArrayForEach(job, jobs) {
			if (skip-- > 0)
				continue; /* older than the change points look */
			w.job = job;
			if ((rc = store_job_report_rows(store, (long long)number(job, "id", 0), false,
							REPORT_SUMMARY_VERSION, add_points, &w)) < 0 &&
			    rc != LL_ENOTFOUND)
				goto done;
			rc = 0;
		}
	}
	mine = cJSON_AddArrayToObject(out, "alerts");
	cJSON_ArrayForEach(a, get(alerts, "alerts"))
		if (strcmp(string(a, "series"), name) == 0)
			cJSON_AddItemToArray(mine, cJSON_Duplicate(a, true));
	cJSON_AddItemToObject(out, "jobs", jobs);
	jobs = NULL;
	*ret_series = out;
	out = NULL;
done:
	cJSON_Delete(out);
	cJSON_Delete(jobs);
	cJSON_Delete(alerts);
	return rc;
}
