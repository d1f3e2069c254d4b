/* /api/v1/alerts: regressions found when a series' new job was compared
 * with the one before (scheduler.h). */
#include "route_util.h"
#include "routes.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <string.h>

/* ?open=true lists only the unacknowledged ones. */
int route_alerts_list(struct http_request *req, struct http_reply *reply)
{
	const char *open = http_query(req, "open");
	cJSON *list;
	int rc;

	if (open && strcmp(open, "true") != 0 && strcmp(open, "false") != 0)
		return reply_error(reply, 400, "invalid_argument", "open must be true or false.");
	rc = store_alert_list(req->server->store, open && strcmp(open, "true") == 0, &list);
	return route_reply(reply, rc, 200, list);
}

int route_alerts_ack(struct http_request *req, struct http_reply *reply)
{
	cJSON *alert;
	char who[96];
	int rc;

	if (route_empty_body(req, reply, "acknowledgement") < 0)
		return 0;
	snprintf(who, sizeof(who), "%s:%s", store_token_kind_name(req->token.kind), req->token.name);
	rc = store_alert_ack(req->server->store, req->path_id, who, clock_now_ms(), &alert);
	return route_reply(reply, rc, 200, alert);
}
