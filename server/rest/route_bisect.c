/* POST /api/v1/series/{name}/bisect, GET /api/v1/bisections/{id},
 * POST /api/v1/bisections/{id}/cancel: automatic bisection of a program
 * series (schedules/bisect.h, docs/bisect.md). Only the series' owner
 * (or an admin) starts one; only its creator (or an admin) cancels it. */
#include "routes.h"
#include "route_util.h"

#include "schedules/bisect.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/job_spec.h"

#include <stdio.h>
#include <string.h>

#define SERIES_PREFIX "/api/v1/series/"
#define BISECT_SUFFIX "/bisect"

int route_bisect_create(struct http_request *req, struct http_reply *reply)
{
	size_t len = strlen(req->path) - strlen(SERIES_PREFIX) - strlen(BISECT_SUFFIX);
	char name[JOB_SPEC_MAX_SERIES + 1], who[ROUTE_CALLER_MAX];
	cJSON *body, *out = NULL;
	int rc;

	if (len > JOB_SPEC_MAX_SERIES)
		return reply_error(reply, 400, "invalid_argument",
				   "A series name is 1 to %d printable characters.", JOB_SPEC_MAX_SERIES);
	snprintf(name, sizeof(name), "%.*s", (int)len, req->path + strlen(SERIES_PREFIX));
	if (!job_spec_series_valid(name))
		return reply_error(reply, 400, "invalid_argument",
				   "A series name is 1 to %d printable characters.", JOB_SPEC_MAX_SERIES);
	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	route_caller(req, who, sizeof(who));
	if ((rc = route_series_owner_check(req, name, "bisect")) == 0)
		rc = bisect_create(req->server, name, body, who, &out);
	cJSON_Delete(body);
	if (rc == LL_ECONFLICT) /* BISECT_MAX_RUNNING_PER_CREATOR */
		return reply_error(reply, 409, "too_many_bisections", "%s", err_message(rc));
	return route_reply(reply, rc, 201, out);
}

int route_bisect_get(struct http_request *req, struct http_reply *reply)
{
	cJSON *out = NULL;
	int rc = store_bisection_get(req->server->store, req->path_id, &out);

	return route_reply(reply, rc, 200, out);
}

int route_bisect_cancel(struct http_request *req, struct http_reply *reply)
{
	cJSON *out = NULL;
	int rc;

	if (route_empty_body(req, reply, "cancel request") < 0)
		return 0;
	if ((rc = store_bisection_get(req->server->store, req->path_id, &out)) < 0)
		return reply_from_err(reply, rc);
	rc = route_owner_check(
		req, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(out, "created_by")) ?: "",
		"This bisection");
	cJSON_Delete(out);
	out = NULL;
	if (rc == 0)
		rc = bisect_cancel(req->server, req->path_id, &out);
	return route_reply(reply, rc, 200, out);
}
