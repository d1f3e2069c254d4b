/* /api/v1/jobs: submit, list, show, cancel. */
#include "route_util.h"
#include "routes.h"

#include "store/queue.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *submitter(struct http_request *req, char *out, size_t size)
{
	snprintf(out, size, "%s:%s", store_token_kind_name(req->token.kind), req->token.name);
	return out;
}

/* Adds to CREATED (a job_created body) "warnings": one line for each
 * reason why some of its tasks cannot run now ("3 tasks: no agent has
 * os=winxp"). A job no agent matches is accepted all the same: agents may
 * enroll later. */
static void add_warnings(struct store *store, cJSON *created)
{
	cJSON *warnings = cJSON_AddArrayToObject(created, "warnings"), *job = NULL, *task, *reasons;
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(created, "id"), *reason;

	if (!cJSON_IsNumber(id) || store_job_get(store, (long long)id->valuedouble, &job) < 0)
		return;
	reasons = cJSON_CreateObject(); /* reason: number of tasks, in order */
	if (store_job_add_waiting(store, job, clock_now_ms()) == 0 && reasons) {
		cJSON_ArrayForEach(task, cJSON_GetObjectItemCaseSensitive(job, "tasks")) {
			const cJSON *waiting = cJSON_GetObjectItemCaseSensitive(task, "waiting");
			const cJSON *why = cJSON_GetObjectItemCaseSensitive(waiting, "reason");
			cJSON *count;
			if (!cJSON_IsString(why))
				continue;
			if ((count = cJSON_GetObjectItemCaseSensitive(reasons, why->valuestring)))
				cJSON_SetNumberValue(count, count->valuedouble + 1);
			else
				cJSON_AddNumberToObject(reasons, why->valuestring, 1);
		}
	}
	cJSON_ArrayForEach(reason, reasons) {
		char line[QUEUE_WAITING_REASON_SIZE + 32];
		snprintf(line, sizeof(line), "%lld task%s: %s", (long long)reason->valuedouble,
			 reason->valuedouble == 1 ? "" : "s", reason->string);
		cJSON_AddItemToArray(warnings, cJSON_CreateString(line));
	}
	cJSON_Delete(reasons);
	cJSON_Delete(job);
}

/* LL_ENOSPACE when the data folder's disk has less than --min-free-bytes
 * free: the reserve is kept for the results of the jobs already queued. */
static int check_reserve(struct server *server)
{
	long long free_bytes = 0;

	if (!server->blobs || blobs_disk_free(server->blobs, &free_bytes) < 0 ||
	    free_bytes >= server->config.min_free_bytes)
		return 0;
	return err_set(LL_ENOSPACE,
		       "The data folder's disk has %lld bytes free, less than the %lld kept for the results "
		       "of queued jobs (--min-free-bytes): no new job until space is freed.",
		       free_bytes, server->config.min_free_bytes);
}

/* A job that names a revision of a series adds that revision to it (a
 * bisection builds from the series' revisions, bisect.h): only the
 * series' owner or an admin may (route_series_owner_check()). */
static int check_revision_owner(struct http_request *req, const cJSON *spec)
{
	const char *series = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "series"));

	if (!series || !cJSON_GetObjectItemCaseSensitive(spec, "revision"))
		return 0;
	return route_series_owner_check(req, series, "add revisions to");
}

int route_jobs_create(struct http_request *req, struct http_reply *reply)
{
	cJSON *body, *spec = NULL, *created = NULL;
	char who[96];
	bool program;
	int rc;

	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	rc = job_spec_normalize(body, &spec);
	cJSON_Delete(body);
	if (rc == 0)
		rc = check_revision_owner(req, spec);
	if (rc == 0)
		rc = check_reserve(req->server);
	if (rc < 0) {
		cJSON_Delete(spec);
		return reply_from_err(reply, rc);
	}
	/* A program's files must be uploaded, and stay until the job holds them. */
	program = cJSON_GetObjectItemCaseSensitive(spec, "program") != NULL;
	if (program) {
		blobs_refs_lock(req->server->blobs);
		if (route_blobs_check_spec(req, spec, reply) < 0) {
			blobs_refs_unlock(req->server->blobs);
			cJSON_Delete(spec);
			return 0;
		}
	}
	rc = store_job_create(req->server->store, spec, submitter(req, who, sizeof(who)), clock_now_ms(),
			      &created);
	if (program)
		blobs_refs_unlock(req->server->blobs);
	cJSON_Delete(spec);
	if (rc < 0)
		return reply_from_err(reply, rc);
	http_waiters_wake_all(req->server);
	add_warnings(req->server->store, created);
	return reply_json(reply, 201, created);
}

int route_jobs_list(struct http_request *req, struct http_reply *reply)
{
	static const char *const states[] = {"queued", "running", "done", "failed", "cancelled"};
	const char *state = http_query(req, "state"), *text;
	long long limit = 50, before = 0;
	char *end;
	cJSON *list;
	int rc;

	if (state) {
		size_t i;
		for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
			if (strcmp(state, states[i]) == 0)
				break;
		if (i == sizeof(states) / sizeof(states[0]))
			return reply_error(reply, 400, "invalid_argument",
					   "state must be queued, running, done, failed or cancelled.");
	}
	if ((text = http_query(req, "limit"))) {
		limit = strtoll(text, &end, 10);
		if (*end || end == text || limit < 1 || limit > 200)
			return reply_error(reply, 400, "out_of_range", "limit must be 1 to 200.");
	}
	if ((text = http_query(req, "before"))) {
		before = strtoll(text, &end, 10);
		if (*end || end == text || before < 1)
			return reply_error(reply, 400, "invalid_argument", "before must be a job id.");
	}
	rc = store_job_list(req->server->store, state, (int)limit, before, &list);
	return route_reply(reply, rc, 200, list);
}

int route_jobs_get(struct http_request *req, struct http_reply *reply)
{
	cJSON *job;
	int rc = store_job_get(req->server->store, req->path_id, &job);

	if (rc == 0 && (rc = store_job_add_waiting(req->server->store, job, clock_now_ms())) < 0)
		cJSON_Delete(job);
	return route_reply(reply, rc, 200, job);
}

int route_jobs_cancel(struct http_request *req, struct http_reply *reply)
{
	cJSON *job;
	int rc;

	if (route_empty_body(req, reply, "cancel request") < 0)
		return 0;
	rc = store_job_cancel(req->server->store, req->path_id, clock_now_ms(), &job);
	return route_reply(reply, rc, 200, job);
}
