/* /api/v1/tokens: the admin makes user and enrollment tokens (a user token
 * may be of a team: route_util.h, owners), lists and revokes them. */
#include "route_util.h"
#include "routes.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

#include <string.h>

int route_tokens_create(struct http_request *req, struct http_reply *reply)
{
	static const char *const keys[] = {"kind", "name", "team", NULL};
	unsigned char hash[STORE_TOKEN_HASH_SIZE];
	char token[AUTH_TOKEN_MAX + 1];
	enum store_token_kind kind = STORE_TOKEN_USER;
	const char *kind_name, *name, *team = NULL;
	cJSON *body, *out = NULL;
	int rc;

	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	if ((rc = json_check_keys(body, keys, "token request")) < 0 ||
	    (rc = json_get_string(body, "kind", 16, true, NULL, &kind_name)) < 0 ||
	    (rc = json_get_string(body, "name", 64, true, NULL, &name)) < 0 ||
	    (rc = json_get_string(body, "team", ROUTE_TEAM_MAX, false, NULL, &team)) < 0)
		goto out;
	if (team && (!route_team_valid(team) || strcmp(kind_name, "user") != 0)) {
		rc = err_set(LL_EINVAL, "Field 'team' is 1 to %d of A-Z a-z 0-9 . _ -, for a user token.",
			     ROUTE_TEAM_MAX);
		goto out;
	}
	if (strcmp(kind_name, "user") == 0)
		kind = STORE_TOKEN_USER;
	else if (strcmp(kind_name, "enroll") == 0)
		kind = STORE_TOKEN_ENROLL;
	else {
		rc = err_set(LL_EINVAL, "Field 'kind' must be user or enroll.");
		goto out;
	}
	if ((rc = auth_token_generate(kind == STORE_TOKEN_USER ? "llusr_" : "llenr_", token, sizeof(token))) <
	    0)
		goto out;
	auth_token_hash(token, hash);
	rc = store_token_create(req->server->store, kind, name, team, hash, clock_now_ms(), &out);
	if (rc == 0)
		cJSON_AddStringToObject(out, "token", token);
out:
	cJSON_Delete(body);
	return route_reply(reply, rc, 201, out);
}

int route_tokens_list(struct http_request *req, struct http_reply *reply)
{
	return route_reply_list(req, reply, store_token_list);
}

int route_tokens_revoke(struct http_request *req, struct http_reply *reply)
{
	cJSON *out;
	int rc;

	if (req->path_id == req->token.id)
		return reply_error(reply, 409, "conflict", "A token cannot revoke itself.");
	rc = store_token_revoke(req->server->store, req->path_id, clock_now_ms(), &out);
	return route_reply(reply, rc, 200, out);
}
