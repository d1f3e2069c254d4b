#include "route_util.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int route_reply(struct http_reply *reply, int rc, int status, cJSON *body)
{
	return rc < 0 ? reply_from_err(reply, rc) : reply_json(reply, status, body);
}

int route_reply_file(struct http_reply *reply, int rc, int fd, long long size)
{
	if (rc < 0)
		return reply_from_err(reply, rc);
	reply->status = 200;
	reply->has_file = true;
	reply->file_fd = fd;
	reply->file_size = size;
	reply->content_type = "application/octet-stream";
	return 0;
}

int route_empty_body(struct http_request *req, struct http_reply *reply, const char *what)
{
	cJSON *body;
	int rc = http_body_object(req, reply, true, &body);

	if (rc < 0)
		return rc;
	rc = json_check_keys(body, (const char *const[]){NULL}, what);
	cJSON_Delete(body);
	if (rc < 0)
		reply_from_err(reply, rc);
	return rc;
}

int route_reply_list(struct http_request *req, struct http_reply *reply,
		     int (*list)(struct store *store, cJSON **ret_list))
{
	cJSON *out;
	int rc = list(req->server->store, &out);

	return route_reply(reply, rc, 200, out);
}

int route_reply_by_id(struct http_request *req, struct http_reply *reply,
		      int (*read)(struct store *store, long long id, cJSON **ret_body))
{
	cJSON *out;
	int rc = read(req->server->store, req->path_id, &out);

	return route_reply(reply, rc, 200, out);
}

const char *route_caller(const struct http_request *req, char *out, size_t size)
{
	if (req->token.id == 0)
		snprintf(out, size, "anonymous");
	else
		snprintf(out, size, "%s:%s", store_token_kind_name(req->token.kind), req->token.name);
	return out;
}

bool route_team_valid(const char *team)
{
	size_t n = strlen(team);

	if (n == 0 || n > ROUTE_TEAM_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)team[i]) && !strchr("._-", team[i]))
			return false;
	return true;
}

int route_owner_named(const struct http_request *req, const cJSON *body, char *owner)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(body, "owner");
	const char *text = cJSON_GetStringValue(item), *colon;

	if (!item)
		return 0;
	if (req->token.id == 0 || req->token.kind != STORE_TOKEN_ADMIN)
		return err_set(LL_EFORBIDDEN, "Only an admin names an owner.");
	colon = text ? strchr(text, ':') : NULL;
	if (!colon || strlen(text) > STORE_OWNER_MAX ||
	    (strncmp(text, "user:", 5) != 0 && strncmp(text, "admin:", 6) != 0 &&
	     strncmp(text, "team:", 5) != 0) ||
	    !colon[1] || strlen(colon + 1) > 64 ||
	    (strncmp(text, "team:", 5) == 0 && !route_team_valid(colon + 1)))
		return err_set(LL_EINVAL,
			       "Field 'owner' must be \"user:NAME\", \"admin:NAME\" or \"team:TEAM\".");
	memcpy(owner, text, strlen(text) + 1);
	return 0;
}

bool route_is_owner(const struct http_request *req, const char *owner)
{
	char who[ROUTE_CALLER_MAX];

	if (req->token.id == 0)
		return false;
	if (req->token.kind == STORE_TOKEN_ADMIN)
		return true;
	if (strncmp(owner, "team:", 5) == 0)
		return req->token.team[0] && strcmp(owner + 5, req->token.team) == 0;
	return owner[0] && strcmp(route_caller(req, who, sizeof(who)), owner) == 0;
}

int route_owner_check(const struct http_request *req, const char *owner, const char *what)
{
	if (!owner[0] || route_is_owner(req, owner))
		return 0;
	return err_set(LL_EFORBIDDEN, "%s belongs to %s: only its owner or an admin may change it.", what,
		       owner);
}

void route_alert_redact(cJSON *alert)
{
	cJSON *status = cJSON_GetObjectItemCaseSensitive(alert, "webhook");
	char *text = cJSON_GetStringValue(status), *colon;

	if (text && (colon = strchr(text, ':')))
		*colon = '\0';
}
