/* /api/v1/alerts: regressions found when a series' new job was compared
 * with the one before (scheduler.h). */
#include "route_util.h"
#include "routes.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <string.h>

/* The owner of ALERT's series into OWNER (STORE_OWNER_MAX + 1 bytes). */
static int alert_owner(struct http_request *req, const cJSON *alert, char *owner)
{
	struct store_series_settings settings;
	const char *series = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(alert, "series"));
	int rc = store_series_settings_get(req->server->store, series ? series : "", &settings);

	if (rc == 0)
		memcpy(owner, settings.owner, sizeof(settings.owner));
	return rc;
}

/* ?open=true lists only the unacknowledged ones. Only the owner of an
 * alert's series (and admins) see why its webhook failed. */
int route_alerts_list(struct http_request *req, struct http_reply *reply)
{
	const char *open = http_query(req, "open");
	cJSON *list;
	int rc;

	if (open && strcmp(open, "true") != 0 && strcmp(open, "false") != 0)
		return reply_error(reply, 400, "invalid_argument", "open must be true or false.");
	rc = store_alert_list(req->server->store, open && strcmp(open, "true") == 0, &list);
	if (rc == 0) {
		char owner[STORE_OWNER_MAX + 1];
		const char *series, *last = NULL; /* alerts of one series come in runs */
		bool mine = false;
		cJSON *alert;
		cJSON_ArrayForEach(alert, cJSON_GetObjectItemCaseSensitive(list, "alerts")) {
			series = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(alert, "series"));
			if (!last || !series || strcmp(series, last) != 0)
				mine = alert_owner(req, alert, owner) == 0 && route_is_owner(req, owner);
			last = series;
			if (!mine)
				route_alert_redact(alert);
		}
	}
	return route_reply(reply, rc, 200, list);
}

/* Only the owner of the alert's series, or an admin. */
int route_alerts_ack(struct http_request *req, struct http_reply *reply)
{
	cJSON *alert = NULL;
	char who[ROUTE_CALLER_MAX], owner[STORE_OWNER_MAX + 1];
	int rc;

	if (route_empty_body(req, reply, "acknowledgement") < 0)
		return 0;
	if ((rc = store_alert_get(req->server->store, req->path_id, &alert)) < 0 ||
	    (rc = alert_owner(req, alert, owner)) < 0 ||
	    (rc = route_owner_check(req, owner, "The series of this alert")) < 0) {
		cJSON_Delete(alert);
		return reply_from_err(reply, rc);
	}
	cJSON_Delete(alert);
	rc = store_alert_ack(req->server->store, req->path_id, route_caller(req, who, sizeof(who)),
			     clock_now_ms(), &alert);
	return route_reply(reply, rc, 200, alert);
}
