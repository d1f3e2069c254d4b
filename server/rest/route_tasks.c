/* /api/v1/tasks/{id}: progress, result and failure from the lease holder. */
#include "routes.h"

#include "reports/calibration.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

#include <string.h>

static const char *const phases[] = {"generate", "build", "transform", "verify", "warm",
				     "cold",     "churn", "report",    NULL};

/* The entry of phases[] equal to PHASE, or NULL. */
static const char *known_phase(const char *phase)
{
	for (size_t i = 0; phases[i]; i++)
		if (strcmp(phase, phases[i]) == 0)
			return phases[i];
	return NULL;
}

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

/* What every report checks first: the body has no member but KEYS (when
 * KEYS is not NULL; WHAT names the body in messages), and its "attempt" is
 * 1..1000, into *RET_ATTEMPT. */
static int check_report(const cJSON *body, const char *const *keys, const char *what, long long *ret_attempt)
{
	int rc;

	if (keys && (rc = json_check_keys(body, keys, what)) < 0)
		return rc;
	return json_get_int(body, "attempt", 1, 1000, true, 0, ret_attempt);
}

/* The end of every report: BODY deleted, then the store's answer OUT, or
 * its error RC. */
static int reply_report(struct http_reply *reply, cJSON *body, int rc, cJSON *out)
{
	cJSON_Delete(body);
	return rc < 0 ? reply_task_error(reply, rc) : reply_json(reply, 200, out);
}

int route_tasks_progress(struct http_request *req, struct http_reply *reply)
{
	static const char *const keys[] = {"attempt", "phase", "percent", NULL};
	cJSON *body, *out = NULL;
	const char *phase, *known;
	long long attempt, percent;
	int rc;

	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	if ((rc = check_report(body, keys, "progress", &attempt)) < 0 ||
	    (rc = json_get_string(body, "phase", 16, true, NULL, &phase)) < 0 ||
	    (rc = json_get_int(body, "percent", 0, 100, true, 0, &percent)) < 0)
		goto out;
	if (!(known = known_phase(phase))) {
		rc = err_set(LL_EINVAL, "Unknown phase '%s'.", phase);
		goto out;
	}
	rc = store_task_progress(req->server->store, req->token.agent_id, req->path_id, attempt, known,
				 (int)percent, clock_now_ms(), &out);
out:
	return reply_report(reply, body, rc, out);
}

/* Samples one array of a variant's warm or cold measurement may hold: the
 * most a job can ask for (1,000 runs x 20 rounds). Reports and calibration
 * read every sample on the HTTP thread: a larger result is refused (413). */
#define RESULT_MAX_SAMPLES 20000

/* LL_ETOOBIG with a message when an array of VARIANT's "warm" or "cold"
 * holds more than RESULT_MAX_SAMPLES entries. */
static int check_samples(const cJSON *variant, const char *name)
{
	static const char *const parts[] = {"warm", "cold"};

	for (size_t p = 0; p < 2; p++) {
		const cJSON *part = cJSON_GetObjectItemCaseSensitive(variant, parts[p]), *array;
		if (!cJSON_IsObject(part))
			continue;
		cJSON_ArrayForEach(array, part) {
			int count = 0;
			const cJSON *item;
			if (!cJSON_IsArray(array))
				continue;
			cJSON_ArrayForEach(item, array)
				if (++count > RESULT_MAX_SAMPLES)
					return err_set(LL_ETOOBIG,
						       "Variant '%s' has more than %d entries in %s.%s, the "
						       "most a job can ask for.",
						       name, RESULT_MAX_SAMPLES, parts[p], array->string);
		}
	}
	return 0;
}

/* A result's committed write: its answer. */
static int result_answer(struct http_request *req, struct http_reply *reply)
{
	cJSON *out;
	bool replayed = false;
	/* Only a calibration job's result is read again (calibration.h). */
	bool calibration = store_task_result_is_calibration(req->write_call);
	int rc = store_task_result_end(req->write_call, &out, &replayed);

	req->write_call = NULL;
	if (rc == 0 && !replayed) {
		long long result_id =
			(long long)cJSON_GetObjectItemCaseSensitive(out, "result_id")->valuedouble;
		metrics_add(&req->server->metrics.results_ingested, 1);
		summarizer_enqueue(req->server->summarizer, result_id);
		if (calibration)
			calibration_note(req->server->store, req->token.agent_id, req->path_id, result_id,
					 req->write_body, clock_now_ms());
	}
	cJSON_Delete(req->write_body);
	req->write_body = NULL;
	return reply_report(reply, NULL, rc, out);
}

int route_tasks_result(struct http_request *req, struct http_reply *reply)
{
	const cJSON *variants, *item;
	cJSON *body, *out = NULL;
	long long attempt;
	int rc;

	if (req->write_call)
		return result_answer(req, reply);
	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	variants = cJSON_GetObjectItemCaseSensitive(body, "variants");
	if ((rc = check_report(body, NULL, NULL, &attempt)) < 0)
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
		if (!cJSON_IsObject(item) ||
		    (rc = json_get_string(item, "name", 64, true, NULL, &name)) < 0) {
			rc = err_set(LL_EINVAL, "Each entry of 'variants' must be an object with a 'name'.");
			goto out;
		}
		if ((rc = check_samples(item, name)) < 0)
			goto out;
	}
	/* The body stays in req->body until the commit (result_answer()). */
	rc = store_task_result_begin(req->server->store, req->token.agent_id, req->path_id, attempt,
				     buf_str(&req->body), req->body.len, clock_now_ms(), http_write_committed,
				     req, &req->write_call);
	if (rc == 0) {
		req->write_body = body; /* for calibration_note() once committed */
		return HTTP_SUSPEND_WRITE;
	}
out:
	return reply_report(reply, body, rc, out);
}

int route_tasks_fail(struct http_request *req, struct http_reply *reply)
{
	static const char *const keys[] = {"attempt", "reason", "retryable", NULL};
	cJSON *body, *out = NULL;
	const char *reason;
	long long attempt;
	bool retryable;
	int rc;

	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	if ((rc = check_report(body, keys, "failure", &attempt)) < 0 ||
	    (rc = json_get_string(body, "reason", 2000, true, NULL, &reason)) < 0 ||
	    (rc = json_get_bool(body, "retryable", false, true, &retryable)) < 0)
		goto out;
	rc = store_task_fail(req->server->store, req->token.agent_id, req->path_id, attempt, reason,
			     retryable, clock_now_ms(), &out);
out:
	return reply_report(reply, body, rc, out);
}
