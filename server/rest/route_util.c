#include "route_util.h"

#include "loadlab/json.h"

int route_reply(struct http_reply *reply, int rc, int status, cJSON *body)
{
	return rc < 0 ? reply_from_err(reply, rc) : reply_json(reply, status, body);
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
