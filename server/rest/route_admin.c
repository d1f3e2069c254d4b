/* POST /api/v1/admin/compact: the store's maintenance now (maintenance.h):
 * {"pruned_results", "bytes_before", "bytes_after"}. */
#include "routes.h"
#include "schedules/maintenance.h"

#include "loadlab/clock.h"

int route_admin_compact(struct http_request *req, struct http_reply *reply)
{
	struct maintenance_outcome o;
	cJSON *out;
	int rc = maintenance_run(req->server->store, clock_now_ms(), &o);

	if (rc < 0)
		return reply_from_err(reply, rc);
	out = cJSON_CreateObject();
	cJSON_AddNumberToObject(out, "pruned_results", (double)o.pruned_results);
	cJSON_AddNumberToObject(out, "bytes_before", (double)o.bytes_before);
	cJSON_AddNumberToObject(out, "bytes_after", (double)o.bytes_after);
	return reply_json(reply, 200, out);
}
