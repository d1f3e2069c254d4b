/* /api/v1/tasks/{id}: progress, result and failure from the lease holder. */
#include "routes.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

#include <string.h>

static const char *const phases[] = {"generate", "build", "transform", "verify", "warm",
				     "cold", "churn", "report", NULL};

/* Maps the store's answer: a stale attempt and a cancelled task are 409s
 * with their own codes, so that an agent can tell them apart. */
static int reply_task_error(struct http_reply *reply, int rc)
{
	if (rc == STORE_STALE_ATTEMPT)
		return reply_error(reply, 409, "stale_attempt", "%s", err_message(rc));
	if (rc == STORE_TASK_CANCELLED)
		return reply_error(reply, 409, "task_cancelled", "%s", err_message(rc));
	return reply_from_err(reply, rc);
}

int route_tasks_progress(struct http_request *req, struct http_reply *reply)
{
	static const char *const keys[] = {"attempt", "phase", "percent", NULL};
	cJSON *body, *out;
	const char *phase;
	long long attempt, percent;
	int rc;
	size_t i;

	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	if ((rc = json_check_keys(body, keys, "progress")) < 0 ||
	    (rc = json_get_int(body, "attempt", 1, 1000, true, 0, &attempt)) < 0 ||
	    (rc = json_get_string(body, "phase", 16, true, NULL, &phase)) < 0 ||
	    (rc = json_get_int(body, "percent", 0, 100, true, 0, &percent)) < 0)
		goto out;
	for (i = 0; phases[i]; i++)
		if (strcmp(phase, phases[i]) == 0)
			break;
	if (!phases[i]) {
		rc = err_set(LL_EINVAL, "Unknown phase '%s'.", phase);
		goto out;
	}
	rc = store_task_progress(req->server->store, req->token.agent_id, req->path_id, attempt,
				 phases[i], (int)percent, clock_now_ms(), &out);
out:
	cJSON_Delete(body);
	return rc < 0 ? reply_task_error(reply, rc) : reply_json(reply, 200, out);
}

int route_tasks_result(struct http_request *req, struct http_reply *reply)
{
	const cJSON *variants, *item;
	cJSON *body, *out;
	long long attempt;
	bool replayed = false;
	int rc;

	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	variants = cJSON_GetObjectItemCaseSensitive(body, "variants");
	if ((rc = json_get_int(body, "attempt", 1, 1000, true, 0, &attempt)) < 0)
		goto out;
	if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(body, "facts"))) {
		rc = err_set(LL_EINVAL, "Field 'facts' is required and must be an object.");
		goto out;
	}
	if (!cJSON_IsArray(variants)) {
		rc = err_set(LL_EINVAL, "Field 'variants' is required and must be an array.");
		goto out;
	}
	cJSON_ArrayForEach(item, variants) {
		const char *name;
		if (!cJSON_IsObject(item) || (rc = json_get_string(item, "name", 64, true, NULL, &name)) < 0) {
			rc = err_set(LL_EINVAL, "Each entry of 'variants' must be an object with a 'name'.");
			goto out;
		}
	}
	rc = store_task_result(req->server->store, req->token.agent_id, req->path_id, attempt,
			       buf_str(&req->body), req->body.len, clock_now_ms(), &out, &replayed);
	if (rc == 0 && !replayed) {
		metrics_add(&req->server->metrics.results_ingested, 1);
		summarizer_enqueue(req->server->summarizer,
				   (long long)cJSON_GetObjectItemCaseSensitive(out, "result_id")->valuedouble);
	}
out:
	cJSON_Delete(body);
	return rc < 0 ? reply_task_error(reply, rc) : reply_json(reply, 200, out);
}

int route_tasks_fail(struct http_request *req, struct http_reply *reply)
{
	static const char *const keys[] = {"attempt", "reason", "retryable", NULL};
	cJSON *body, *out;
	const char *reason;
	long long attempt;
	bool retryable;
	int rc;

	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	if ((rc = json_check_keys(body, keys, "failure")) < 0 ||
	    (rc = json_get_int(body, "attempt", 1, 1000, true, 0, &attempt)) < 0 ||
	    (rc = json_get_string(body, "reason", 2000, true, NULL, &reason)) < 0 ||
	    (rc = json_get_bool(body, "retryable", false, true, &retryable)) < 0)
		goto out;
	rc = store_task_fail(req->server->store, req->token.agent_id, req->path_id, attempt, reason,
			     retryable, clock_now_ms(), &out);
out:
	cJSON_Delete(body);
	return rc < 0 ? reply_task_error(reply, rc) : reply_json(reply, 200, out);
}
