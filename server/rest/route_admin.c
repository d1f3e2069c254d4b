/* POST /api/v1/admin/compact {"full": bool (false)}: the store's
 * maintenance now (schedules/maintenance.h): {"pruned_results",
 * "bytes_before", "bytes_after"}. */
#include "routes.h"
#include "schedules/maintenance.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

int route_admin_compact(struct http_request *req, struct http_reply *reply)
{
	static const char *const keys[] = {"full", NULL};
	struct maintenance_outcome o;
	const cJSON *full;
	cJSON *body, *out;
	int rc;

	if (http_body_object(req, reply, true, &body) < 0)
		return 0;
	full = cJSON_GetObjectItemCaseSensitive(body, "full");
	if ((rc = json_check_keys(body, keys, "a compaction")) == 0 && full && !cJSON_IsBool(full))
		rc = err_set(LL_EINVAL, "full must be true or false.");
	if (rc == 0)
		rc = maintenance_run(req->server->store, clock_now_ms(), cJSON_IsTrue(full), &o);
	cJSON_Delete(body);
	if (rc < 0)
		return reply_from_err(reply, rc);
	out = cJSON_CreateObject();
	cJSON_AddNumberToObject(out, "pruned_results", (double)o.pruned_results);
	cJSON_AddNumberToObject(out, "bytes_before", (double)o.bytes_before);
	cJSON_AddNumberToObject(out, "bytes_after", (double)o.bytes_after);
	return reply_json(reply, 200, out);
}
