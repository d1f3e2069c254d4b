/* /api/v1/schedules: recurring jobs of a series, on a cron expression
 * (UTC) or an interval; the scheduler (scheduler.h) creates their jobs. */
#include "route_util.h"
#include "routes.h"

#include "schedules/cron.h"
#include "schedules/scheduler.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Intervals from a minute's fraction to a year. */
#define SCHEDULE_MIN_INTERVAL_S 1
#define SCHEDULE_MAX_INTERVAL_S (366LL * 86400)

/* Reads "cron" / "interval_s" of BODY (exactly one when REQUIRED, at
 * most one otherwise). */
static int read_when(const cJSON *body, bool required, const char **ret_cron, long long *ret_interval)
{
	const cJSON *cron = cJSON_GetObjectItemCaseSensitive(body, "cron");
	const cJSON *interval = cJSON_GetObjectItemCaseSensitive(body, "interval_s");
	struct cron_expr e;
	int rc;

	*ret_cron = NULL;
	*ret_interval = 0;
	if (cron && interval)
		return err_set(LL_EINVAL, "Give either 'cron' or 'interval_s', not both.");
	if (!cron && !interval)
		return required ? err_set(LL_EINVAL, "A schedule needs 'cron' or 'interval_s'.") : 0;
	if (cron) {
		if (!cJSON_IsString(cron))
			return err_set(LL_EINVAL, "Field 'cron' must be a string.");
		if ((rc = cron_parse(cron->valuestring, &e)) < 0)
			return rc;
		*ret_cron = cron->valuestring;
		return 0;
	}
	return json_number_to_int(interval, SCHEDULE_MIN_INTERVAL_S, SCHEDULE_MAX_INTERVAL_S, "interval_s",
				  ret_interval);
}

/* Checks JOB (normalizing it) as a job of SERIES for REQ's caller; *RET_TEXT is the
 * job to store, with "series" set (free()). A job that names a revision
 * adds it to the series at each run: only the series' owner or an admin
 * may (route_series_owner_check(), as route_jobs.c). */
static int read_job(struct http_request *req, const cJSON *job, const char *series, char **ret_text)
{
	const cJSON *named;
	cJSON *copy, *spec = NULL;
	int rc;

	if (!cJSON_IsObject(job))
		return err_set(LL_EINVAL, "Field 'job' must be a job submission (an object).");
	named = cJSON_GetObjectItemCaseSensitive(job, "series");
	if (named && (!cJSON_IsString(named) || strcmp(named->valuestring, series) != 0))
		return err_set(LL_EINVAL, "The job names another series than the schedule.");
	if (cJSON_GetObjectItemCaseSensitive(job, "revision") &&
	    (rc = route_series_owner_check(req, series, "add revisions to")) < 0)
		return rc;
	if (!(copy = cJSON_Duplicate(job, true)))
		return LL_ENOMEM;
	if (!named)
		cJSON_AddStringToObject(copy, "series", series);
	rc = job_spec_normalize(copy, &spec);
	cJSON_Delete(spec);
	if (rc == 0 && !(*ret_text = cJSON_PrintUnformatted(copy)))
		rc = LL_ENOMEM;
	cJSON_Delete(copy);
	return rc;
}

int route_schedules_create(struct http_request *req, struct http_reply *reply)
{
	static const char *const keys[] = {"series", "cron", "interval_s", "job", "enabled", NULL};
	struct store_schedule_new n = {0};
	char who[ROUTE_CALLER_MAX], *job_text = NULL;
	const char *series;
	long long now = clock_now_ms();
	cJSON *body, *out = NULL;
	bool enabled = true;
	int rc;

	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	if ((rc = json_check_keys(body, keys, "schedule")) < 0 ||
	    (rc = json_get_string(body, "series", JOB_SPEC_MAX_SERIES, true, NULL, &series)) < 0 ||
	    (rc = json_get_bool(body, "enabled", false, true, &enabled)) < 0 ||
	    (rc = read_when(body, true, &n.cron, &n.interval_s)) < 0)
		goto done;
	if (!job_spec_series_valid(series)) {
		rc = err_set(LL_EINVAL, "Field 'series' must be 1 to %d printable characters.",
			     JOB_SPEC_MAX_SERIES);
		goto done;
	}
	if ((rc = read_job(req, cJSON_GetObjectItemCaseSensitive(body, "job"), series, &job_text)) < 0 ||
	    (rc = schedule_next_due(n.cron, n.interval_s, now, now, &n.first_due_ms)) < 0)
		goto done;
	if (route_blobs_check_spec(req, cJSON_GetObjectItemCaseSensitive(body, "job"), reply) < 0) {
		free(job_text);
		cJSON_Delete(body);
		return 0; /* a program's files must be uploaded: REPLY names those that are not */
	}
	route_caller(req, who, sizeof(who));
	n.series = series;
	n.job_text = job_text;
	n.enabled = enabled;
	n.created_by = who;
	rc = store_schedule_create(req->server->store, &n, now, &out);
done:
	free(job_text);
	cJSON_Delete(body);
	return route_reply(reply, rc, 201, out);
}

/* 0 when REQ's caller owns schedule ID (its owner) or is an admin;
 * else LL_EFORBIDDEN (LL_ENOTFOUND when there is no such schedule). */
static int schedule_owner_check(struct http_request *req, long long id)
{
	cJSON *schedule = NULL;
	const char *owner;
	int rc;

	if ((rc = store_schedule_get(req->server->store, id, &schedule)) < 0)
		return rc;
	owner = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(schedule, "owner"));
	rc = route_owner_check(req, owner ? owner : "", "This schedule");
	cJSON_Delete(schedule);
	return rc;
}

int route_schedules_list(struct http_request *req, struct http_reply *reply)
{
	return route_reply_list(req, reply, store_schedule_list);
}

int route_schedules_get(struct http_request *req, struct http_reply *reply)
{
	return route_reply_by_id(req, reply, store_schedule_get);
}

/* {"enabled", "cron" | "interval_s", "job", "owner"}, each optional; only
 * the schedule's owner or an admin, "owner" only an admin. A new
 * timing, or enabling a paused schedule, starts from now: runs missed
 * while paused are not made up. */
int route_schedules_patch(struct http_request *req, struct http_reply *reply)
{
	static const char *const keys[] = {"enabled", "cron", "interval_s", "job", "owner", NULL};
	cJSON *body, *current = NULL, *out = NULL;
	const cJSON *enabled_item, *job;
	const char *cron = NULL, *series;
	long long interval_s = 0, now = clock_now_ms(), next_due = 0;
	char *job_text = NULL, owner[STORE_OWNER_MAX + 1] = "";
	int enabled = -1, rc;

	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	if ((rc = json_check_keys(body, keys, "schedule change")) < 0 ||
	    (rc = schedule_owner_check(req, req->path_id)) < 0 ||
	    (rc = route_owner_named(req, body, owner)) < 0 ||
	    (rc = store_schedule_get(req->server->store, req->path_id, &current)) < 0 ||
	    (rc = read_when(body, false, &cron, &interval_s)) < 0)
		goto done;
	if ((enabled_item = cJSON_GetObjectItemCaseSensitive(body, "enabled"))) {
		if (!cJSON_IsBool(enabled_item)) {
			rc = err_set(LL_EINVAL, "Field 'enabled' must be true or false.");
			goto done;
		}
		enabled = cJSON_IsTrue(enabled_item);
	}
	series = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(current, "series"));
	if ((job = cJSON_GetObjectItemCaseSensitive(body, "job")) &&
	    (rc = read_job(req, job, series, &job_text)) < 0)
		goto done;
	if (job && route_blobs_check_spec(req, job, reply) < 0) {
		free(job_text);
		cJSON_Delete(current);
		cJSON_Delete(body);
		return 0;
	}
	if (cron || interval_s ||
	    (enabled == 1 && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(current, "enabled")))) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(current, "cron");
		const cJSON *i = cJSON_GetObjectItemCaseSensitive(current, "interval_s");
		const char *use_cron = cron ? cron : interval_s ? NULL : cJSON_GetStringValue(c);
		long long use_interval = interval_s ? interval_s
					 : cron     ? 0
						    : (long long)cJSON_GetNumberValue(i);
		if ((rc = schedule_next_due(use_cron, use_interval, now, now, &next_due)) < 0)
			goto done;
	}
	if (owner[0] && (rc = store_schedule_owner_set(req->server->store, req->path_id, owner)) < 0)
		goto done;
	rc = store_schedule_patch(req->server->store, req->path_id, enabled, cron, interval_s, job_text,
				  next_due, now, &out);
done:
	free(job_text);
	cJSON_Delete(current);
	cJSON_Delete(body);
	return route_reply(reply, rc, 200, out);
}

/* Only the schedule's owner or an admin. */
int route_schedules_delete(struct http_request *req, struct http_reply *reply)
{
	int rc = schedule_owner_check(req, req->path_id);

	if (rc < 0)
		return reply_from_err(reply, rc);
	return route_reply_by_id(req, reply, store_schedule_delete);
}

/* Runs the schedule now, whatever its timing (its next due time stays);
 * 409 when a job of it is still queued or running. Only its owner or an
 * admin. */
int route_schedules_run(struct http_request *req, struct http_reply *reply)
{
	struct store_schedule_claim claim = {0};
	long long now = clock_now_ms(), job_id = 0;
	cJSON *out;
	int rc;

	if (route_empty_body(req, reply, "run request") < 0)
		return 0;
	if ((rc = schedule_owner_check(req, req->path_id)) < 0 ||
	    (rc = store_schedule_claim(req->server->store, req->path_id, true, now, NULL, &claim)) < 0 ||
	    (rc = schedule_fire(req->server, &claim, now, &job_id)) < 0)
		return reply_from_err(reply, rc);
	out = cJSON_CreateObject();
	cJSON_AddNumberToObject(out, "schedule_id", (double)req->path_id);
	cJSON_AddNumberToObject(out, "run_id", (double)claim.run_id);
	cJSON_AddNumberToObject(out, "job_id", (double)job_id);
	return reply_json(reply, 201, out);
}
