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

/* The enrolled agents (store_agent_list()) as the queue sees them, every
 * one that is not quarantined counted as online: what is asked of them is
 * whether any agent could measure a cell at all, not whether one is
 * reachable now. */
struct roster {
	cJSON *list;
	struct queue_agent *agents;
	size_t count;
};

static int roster_load(struct store *store, long long now, struct roster *r)
{
	const cJSON *a, *agents;
	int rc = store_agent_list(store, now, &r->list);

	r->agents = NULL;
	r->count = 0;
	if (rc < 0)
		return rc;
	agents = cJSON_GetObjectItemCaseSensitive(r->list, "agents"); /* {"agents": [AGENT...]} */
	r->agents = calloc((size_t)cJSON_GetArraySize(agents) + 1, sizeof(*r->agents));
	if (!r->agents) {
		cJSON_Delete(r->list);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	cJSON_ArrayForEach(a, agents) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "id");
		const char *state = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "state"));
		struct queue_agent *q = &r->agents[r->count];

		if (!cJSON_IsNumber(id))
			continue;
		q->id = (long long)id->valuedouble;
		q->name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "name"));
		q->facts = cJSON_GetObjectItemCaseSensitive(a, "facts");
		q->labels = cJSON_GetObjectItemCaseSensitive(a, "labels");
		q->quarantined = state && strcmp(state, "quarantined") == 0;
		q->online = !q->quarantined;
		q->builder = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "builder"));
		r->count++;
	}
	return 0;
}

static void roster_release(struct roster *r)
{
	free(r->agents);
	cJSON_Delete(r->list);
}

/* The build task ID among JOB's "builds", or NULL. */
static const cJSON *job_build(const cJSON *job, const cJSON *id)
{
	const cJSON *b;

	if (!cJSON_IsNumber(id))
		return NULL;
	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(job, "builds")) {
		const cJSON *bid = cJSON_GetObjectItemCaseSensitive(b, "id");
		if (cJSON_IsNumber(bid) && bid->valuedouble == id->valuedouble)
			return b;
	}
	return NULL;
}

/* Whether queued measuring TASK of JOB waits only for its build, which is
 * leased, or queued and leasable (its "waiting" says could_run): nothing
 * the submitter need act on. */
static bool waits_for_runnable_build(const cJSON *job, const cJSON *task)
{
	const cJSON *build = job_build(job, cJSON_GetObjectItemCaseSensitive(task, "build_task"));
	const char *state = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(build, "state"));
	const cJSON *waiting = cJSON_GetObjectItemCaseSensitive(build, "waiting");

	if (!state || strcmp(state, "done") == 0)
		return false;
	return strcmp(state, "leased") == 0 ||
	       (strcmp(state, "queued") == 0 &&
		cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(waiting, "could_run")));
}

/* JOB's "waiting" (store_job_add_waiting()) with the real reason at once:
 * a queued measuring task that waits for its build, and whose cell no
 * enrolled agent can measure, says so ("no agent has os=winxp") instead of
 * "waiting for build 17 (queued)". Left as the store said when the agents
 * cannot be read. */
static int add_waiting(struct store *store, cJSON *job, long long now)
{
	struct roster roster;
	bool loaded = false;
	cJSON *task;
	int rc = store_job_add_waiting(store, job, now);

	if (rc < 0)
		return rc;
	cJSON_ArrayForEach(task, cJSON_GetObjectItemCaseSensitive(job, "tasks")) {
		cJSON *waiting = cJSON_GetObjectItemCaseSensitive(task, "waiting");
		const cJSON *pinned = cJSON_GetObjectItemCaseSensitive(task, "agent_id");
		char reason[QUEUE_WAITING_REASON_SIZE];

		if (!cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(waiting, "could_run")) ||
		    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(task, "build_task")))
			continue;
		/* the agents are read once, and only for a job that has such tasks */
		if (!loaded && roster_load(store, now, &roster) < 0)
			return 0;
		loaded = true;
		if (queue_task_waiting(cJSON_GetObjectItemCaseSensitive(task, "cell"),
				       cJSON_IsNumber(pinned) ? (long long)pinned->valuedouble : 0,
				       roster.agents, roster.count, reason))
			continue;
		cJSON_ReplaceItemInObjectCaseSensitive(waiting, "reason", cJSON_CreateString(reason));
	}
	if (loaded)
		roster_release(&roster);
	return 0;
}

/* Adds to CREATED (a job_created body) "warnings": one line for each
 * reason why some of its tasks cannot run, which the submitter may act on
 * ("3 tasks: no agent has os=winxp"); not for tasks that wait only for a
 * build that is under way or can start. A job no agent matches is accepted
 * all the same: agents may enroll later. */
static void add_warnings(struct store *store, cJSON *created)
{
	cJSON *warnings = cJSON_AddArrayToObject(created, "warnings"), *job = NULL, *task, *reasons;
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(created, "id"), *reason;

	if (!cJSON_IsNumber(id) || store_job_get(store, (long long)id->valuedouble, &job) < 0)
		return;
	reasons = cJSON_CreateObject(); /* reason: number of tasks, in order */
	if (add_waiting(store, job, clock_now_ms()) == 0 && reasons) {
		cJSON_ArrayForEach(task, cJSON_GetObjectItemCaseSensitive(job, "tasks")) {
			const cJSON *waiting = cJSON_GetObjectItemCaseSensitive(task, "waiting");
			const cJSON *why = cJSON_GetObjectItemCaseSensitive(waiting, "reason");
			cJSON *count;
			if (!cJSON_IsString(why) ||
			    (waits_for_runnable_build(job, task) &&
			     strncmp(why->valuestring, "waiting for build ", 18) == 0))
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

	if (rc == 0 && (rc = add_waiting(req->server->store, job, clock_now_ms())) < 0)
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
