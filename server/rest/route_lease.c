/* POST /api/v1/lease: long-poll for a task the calling agent may run. A
 * parked poll checks its token again each time it wakes: one revoked
 * meanwhile gets 401, never a task. */
#include "routes.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

#include <microhttpd.h>
#include <string.h>

/* The agent's "agent_version" and "agent_sha256" of BODY, when it sends
 * them (once per start: docs/agent.md, "Updates"), recorded as what it
 * runs. Both or neither; the version 1..64 printable ASCII bytes, the
 * digest 64 lowercase hex digits. */
static int record_agent_build(struct http_request *req, const cJSON *body)
{
	const char *version = NULL, *sha256 = NULL;
	int rc;

	if ((rc = json_get_string(body, "agent_version", 64, false, NULL, &version)) < 0 ||
	    (rc = json_get_string(body, "agent_sha256", 64, false, NULL, &sha256)) < 0)
		return rc;
	if (!version && !sha256)
		return 0;
	if (!version || !sha256 || !*version)
		return err_set(LL_EINVAL, "A lease request gives agent_version and agent_sha256 together.");
	for (const char *c = version; *c; c++)
		if (*c < 0x21 || *c > 0x7e)
			return err_set(LL_EINVAL, "agent_version must be printable ASCII without spaces.");
	if (strlen(sha256) != 64 || strspn(sha256, "0123456789abcdef") != 64)
		return err_set(LL_EINVAL, "agent_sha256 must be 64 lowercase hex digits.");
	return store_agent_build_set(req->server->store, req->token.agent_id, version, sha256);
}

/* The agent's "agent_update" of BODY, when it sends it (after each
 * change: docs/agent.md, "Signed builds"), recorded as it is:
 * {"state": "on"|"off"|"refused", "reason": 1..300 bytes without
 * control characters, "sha256": HEX|null}, nothing else. */
static int record_agent_update(struct http_request *req, const cJSON *body)
{
	static const char *const keys[] = {"state", "reason", "sha256", NULL};
	const cJSON *update = cJSON_GetObjectItemCaseSensitive(body, "agent_update");
	const char *state = NULL, *reason = NULL, *sha256 = NULL;
	int rc;

	if (!update)
		return 0;
	if (!cJSON_IsObject(update))
		return err_set(LL_EINVAL,
			       "agent_update must be an object {\"state\", \"reason\", \"sha256\"}.");
	if ((rc = json_check_keys(update, keys, "agent_update")) < 0 ||
	    (rc = json_get_string(update, "state", 16, true, NULL, &state)) < 0 ||
	    (rc = json_get_string(update, "reason", 300, true, NULL, &reason)) < 0 ||
	    (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(update, "sha256")) &&
	     (rc = json_get_string(update, "sha256", 64, false, NULL, &sha256)) < 0))
		return rc;
	if (strcmp(state, "on") != 0 && strcmp(state, "off") != 0 && strcmp(state, "refused") != 0)
		return err_set(LL_EINVAL, "agent_update's state must be \"on\", \"off\" or \"refused\".");
	for (const char *c = reason; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return err_set(LL_EINVAL, "agent_update's reason must hold no control characters.");
	if (sha256 && (strlen(sha256) != 64 || strspn(sha256, "0123456789abcdef") != 64))
		return err_set(LL_EINVAL, "agent_update's sha256 must be 64 lowercase hex digits or null.");
	return store_agent_update_set(req->server->store, req->token.agent_id, update);
}

/* The second half of a lease: the committed write's answer, or, without
 * a task, 204 at the deadline or the request parked until tasks come. */
static int lease_answer(struct http_request *req, struct http_reply *reply)
{
	struct server *server = req->server;
	cJSON *lease;
	int rc = store_task_lease_end(req->write_call, &lease);

	req->write_call = NULL;
	if (rc < 0)
		return reply_from_err(reply, rc);
	if (lease) {
		metrics_add(&server->metrics.leases_granted, 1);
		return reply_json(reply, 200, lease);
	}
	if (clock_now_ms() >= req->wait_deadline_ms || atomic_load(&server->stopping)) {
		reply->status = 204;
		return 0;
	}
	if (!http_long_poll_begin(req)) {
		reply->status = 204;
		reply->retry_after = CAPACITY_RETRY_AFTER_SECONDS;
		return 0;
	}
	return HTTP_SUSPEND;
}

int route_lease(struct http_request *req, struct http_reply *reply)
{
	struct server *server = req->server;
	long long now = clock_now_ms();
	int rc;

	if (req->write_call)
		return lease_answer(req, reply);
	if (req->calls > 0) {
		/* Woken after a wait: the token may have been revoked since. */
		struct store_token token;
		err_clear();
		rc = auth_check(server->store, req->route->auth, false, false,
				MHD_lookup_connection_value(req->connection, MHD_HEADER_KIND,
							    MHD_HTTP_HEADER_AUTHORIZATION),
				&token);
		if (rc < 0)
			return reply_from_err(reply, rc);
	}
	if (req->calls == 0) {
		static const char *const keys[] = {"wait", "agent_version", "agent_sha256", "agent_update",
						   NULL};
		long long wait;
		cJSON *body;
		if (http_body_object(req, reply, true, &body) < 0)
			return 0;
		if ((rc = json_check_keys(body, keys, "lease request")) < 0 ||
		    (rc = json_get_int(body, "wait", 0, server->config.max_wait_seconds, false, 0, &wait)) <
			    0 ||
		    (rc = record_agent_build(req, body)) < 0 || (rc = record_agent_update(req, body)) < 0) {
			cJSON_Delete(body);
			return reply_from_err(reply, rc);
		}
		cJSON_Delete(body);
		req->wait_deadline_ms = now + wait * 1000;
	}
	/* The connection waits for the commit, suspended (lease_answer()). */
	rc = store_task_lease_begin(server->store, req->token.agent_id, now, http_write_committed, req,
				    &req->write_call);
	return rc < 0 ? reply_from_err(reply, rc) : HTTP_SUSPEND_WRITE;
}
