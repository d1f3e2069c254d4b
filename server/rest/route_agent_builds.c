/*
 * /api/v1/agent-builds: the agent binaries of loadlabd --agent-dir
 * (agent_builds/agent_builds.h; docs/agent.md, "Updates"): the list, one
 * OS/ARCH's wanted build's bytes, the fleet's pin, a rescan.
 */
#include "route_util.h"
#include "routes.h"

#include "agent_builds/agent_builds.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <string.h>

#define BUILDS_PREFIX "/api/v1/agent-builds/"

/* GET /api/v1/agent-builds: agent_builds_list(); the folder's path for
 * an admin only, its name for everyone else. */
int route_agent_builds_list(struct http_request *req, struct http_reply *reply)
{
	cJSON *list = NULL;
	bool admin = req->token.id != 0 && req->token.kind == STORE_TOKEN_ADMIN;
	int rc = agent_builds_list(req->server->agent_builds, admin, &list);

	return route_reply(reply, rc, 200, list);
}

/* GET /api/v1/agent-builds/OS/ARCH: the bytes of the build OS/ARCH is told
 * to run. No digest comes with them: the agent checks them against the
 * list it read, and against its release key (the list's "signature"). */
int route_agent_builds_get(struct http_request *req, struct http_reply *reply)
{
	char os[16], arch[16], sha256[65];
	const char *rest = req->path + strlen(BUILDS_PREFIX), *slash = strchr(rest, '/');
	long long size = 0;
	int fd = -1, rc;

	if (!slash || slash == rest || (size_t)(slash - rest) >= sizeof(os) || !slash[1] ||
	    strlen(slash + 1) >= sizeof(arch) || strchr(slash + 1, '/'))
		return reply_error(reply, 404, "not_found",
				   "No such agent build: use /api/v1/agent-builds/OS/ARCH.");
	memcpy(os, rest, (size_t)(slash - rest));
	os[slash - rest] = '\0';
	snprintf(arch, sizeof(arch), "%s", slash + 1);
	rc = agent_builds_open_wanted(req->server->agent_builds, os, arch, &fd, &size, sha256);
	return route_reply_file(reply, rc, fd, size);
}

/* PUT /api/v1/agent-builds/pin {"sha256": HEX} | {"version": V}: the
 * fleet's pin; answers the list. */
int route_agent_builds_pin(struct http_request *req, struct http_reply *reply)
{
	static const char *const keys[] = {"sha256", "version", NULL};
	const char *sha256 = NULL, *version = NULL;
	cJSON *body;
	int rc;

	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	if ((rc = json_check_keys(body, keys, "agent build pin")) < 0 ||
	    (rc = json_get_string(body, "sha256", 64, false, NULL, &sha256)) < 0 ||
	    (rc = json_get_string(body, "version", 64, false, NULL, &version)) < 0)
		goto out;
	if (!sha256 == !version) {
		rc = err_set(LL_EINVAL, "A pin is {\"sha256\": HEX} or {\"version\": V}, one of the two.");
		goto out;
	}
	rc = agent_builds_pin(req->server->agent_builds, sha256 ? "sha256" : "version",
			      sha256 ? sha256 : version);
out:
	cJSON_Delete(body);
	if (rc < 0)
		return reply_from_err(reply, rc);
	return route_agent_builds_list(req, reply);
}

/* DELETE /api/v1/agent-builds/pin: no pin; answers the list. */
int route_agent_builds_unpin(struct http_request *req, struct http_reply *reply)
{
	int rc = agent_builds_pin(req->server->agent_builds, NULL, NULL);

	if (rc < 0)
		return reply_from_err(reply, rc);
	return route_agent_builds_list(req, reply);
}

/* POST /api/v1/agent-builds/rescan: the folder read and hashed again;
 * answers the list. */
int route_agent_builds_rescan(struct http_request *req, struct http_reply *reply)
{
	int rc;

	if (route_empty_body(req, reply, "rescan") < 0)
		return 0;
	if ((rc = agent_builds_rescan(req->server->agent_builds)) < 0)
		return reply_from_err(reply, rc);
	return route_agent_builds_list(req, reply);
}
