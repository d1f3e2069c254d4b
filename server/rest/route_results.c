/* GET /api/v1/results/{id}: a stored result body, as the agent sent it. */
#include "routes.h"

/* The dashboard draws each variant's raw samples from here; the id is the
 * task's "result_id" (GET /api/v1/jobs/{id}). */
int route_results_get(struct http_request *req, struct http_reply *reply)
{
	char *text;
	int rc = store_result_get(req->server->store, req->path_id, &text);

	if (rc < 0)
		return reply_from_err(reply, rc);
	return reply_text(reply, 200, "application/json; charset=utf-8", text);
}
