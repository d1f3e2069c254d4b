/* /api/v1/agents: enroll, list, patch (labels, quarantine, builder), heartbeat. */
#include "route_util.h"
#include "routes.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <string.h>

#define AGENT_MAX_FACTS 64
#define AGENT_MAX_LABELS 32
#define AGENT_MAX_VALUE 256

static int check_string_value(const cJSON *item, const char *where)
{
	size_t n = strlen(item->valuestring);

	if (n > AGENT_MAX_VALUE)
		return err_set(LL_ERANGE, "%s '%s' is longer than %d bytes.", where, item->string,
			       AGENT_MAX_VALUE);
	return 0;
}

/* A fact's value: string | number | bool | [string...] (at most 32). */
static int check_fact_value(const cJSON *item, bool allow_null)
{
	const cJSON *element;

	(void)allow_null;
	if (cJSON_IsString(item))
		return check_string_value(item, "Fact");
	if (cJSON_IsArray(item)) {
		if (cJSON_GetArraySize(item) > 32)
			return err_set(LL_ERANGE, "Fact '%s' lists more than 32 values.", item->string);
		cJSON_ArrayForEach(element, item)
			if (!cJSON_IsString(element) || strlen(element->valuestring) > AGENT_MAX_VALUE)
				return err_set(LL_EINVAL, "Fact '%s' must list strings.", item->string);
		return 0;
	}
	if (!cJSON_IsNumber(item) && !cJSON_IsBool(item))
		return err_set(LL_EINVAL, "Fact '%s' must be a string, number, boolean or list of strings.",
			       item->string);
	return 0;
}

/* A label's value: a non-empty string (or null to remove, when ALLOW_NULL). */
static int check_label_value(const cJSON *item, bool allow_null)
{
	if (cJSON_IsNull(item) && allow_null)
		return 0;
	if (!cJSON_IsString(item) || !item->valuestring[0])
		return err_set(LL_EINVAL, "Label '%s' must be a non-empty string%s.", item->string,
			       allow_null ? " or null" : "");
	return check_string_value(item, "Label");
}

/* What an agent's facts and its labels must be: an object, field FIELD,
 * of at most MAX members ("An agent VERB at most MAX FIELD."), each named
 * by a key (NOUN in messages) and with a value CHECK_VALUE accepts. */
struct member_rules {
	const char *field, *verb, *noun;
	int max;
	int (*check_value)(const cJSON *item, bool allow_null);
};

static const struct member_rules fact_rules = {"facts", "reports", "Fact", AGENT_MAX_FACTS, check_fact_value};
static const struct member_rules label_rules = {"labels", "has", "Label", AGENT_MAX_LABELS,
						check_label_value};

/* Checks OBJECT by RULES, member by member: count, name, value. */
static int check_members(const cJSON *object, const struct member_rules *rules, bool allow_null)
{
	const cJSON *item;
	int n = 0, rc;

	if (!cJSON_IsObject(object))
		return err_set(LL_EINVAL, "Field '%s' must be an object.", rules->field);
	cJSON_ArrayForEach(item, object) {
		if (++n > rules->max)
			return err_set(LL_ERANGE, "An agent %s at most %d %s.", rules->verb, rules->max,
				       rules->field);
		if (!job_spec_key_valid(item->string))
			return err_set(LL_EINVAL, "%s name '%s' must match [a-z][a-z0-9_]{0,31}.",
				       rules->noun, item->string);
		if ((rc = rules->check_value(item, allow_null)) < 0)
			return rc;
	}
	return 0;
}

int route_agents_enroll(struct http_request *req, struct http_reply *reply)
{
	static const char *const keys[] = {"name", "facts", "labels", NULL};
	unsigned char hash[STORE_TOKEN_HASH_SIZE];
	char token[AUTH_TOKEN_MAX + 1];
	const cJSON *facts, *labels;
	cJSON *body, *empty = cJSON_CreateObject(), *out;
	const char *name;
	long long id;
	int rc;

	if (http_body_object(req, reply, false, &body) < 0) {
		cJSON_Delete(empty);
		return 0;
	}
	facts = cJSON_GetObjectItemCaseSensitive(body, "facts");
	labels = cJSON_GetObjectItemCaseSensitive(body, "labels");
	if ((rc = json_check_keys(body, keys, "enrollment")) < 0 ||
	    (rc = json_get_string(body, "name", JOB_SPEC_MAX_AGENT_NAME, true, NULL, &name)) < 0 ||
	    (rc = job_spec_agent_name_check(name, "name")) < 0 ||
	    (rc = check_members(facts ? facts : empty, &fact_rules, false)) < 0 ||
	    (rc = check_members(labels ? labels : empty, &label_rules, false)) < 0 ||
	    (rc = auth_token_generate("llagt_", token, sizeof(token))) < 0)
		goto out;
	auth_token_hash(token, hash);
	rc = store_agent_enroll(req->server->store, name, facts ? facts : empty, labels ? labels : empty,
				hash, clock_now_ms(), &id);
out:
	cJSON_Delete(body);
	cJSON_Delete(empty);
	if (rc < 0)
		return reply_from_err(reply, rc);
	/* A build held for want of a measurer (store_build_hold.h) may be
	 * one this agent can measure: the parked polls look again. */
	http_waiters_wake_all(req->server);
	out = cJSON_CreateObject();
	cJSON_AddNumberToObject(out, "id", (double)id);
	cJSON_AddStringToObject(out, "token", token);
	return reply_json(reply, 201, out);
}

int route_agents_list(struct http_request *req, struct http_reply *reply)
{
	cJSON *list;
	int rc = store_agent_list(req->server->store, clock_now_ms(), &list);

	/* The daemon's version beside its agents' (docs/operations.md, "Upgrades"). */
	if (rc == 0)
		cJSON_AddStringToObject(list, "daemon_version", LOADLAB_VERSION);
	return route_reply(reply, rc, 200, list);
}

/* GET /api/v1/agents/{id}: one AGENT, as the list shows it. */
int route_agents_get(struct http_request *req, struct http_reply *reply)
{
	cJSON *agent = NULL;
	int rc = store_agent_get(req->server->store, req->path_id, clock_now_ms(), &agent);

	return route_reply(reply, rc, 200, agent);
}

/* The boolean KEY of BODY into *RET_SWITCH as 0 or 1; -1 when absent. */
static int patch_switch(const cJSON *body, const char *key, int *ret_switch)
{
	bool on;
	int rc;

	if (!cJSON_GetObjectItemCaseSensitive(body, key)) {
		*ret_switch = -1;
		return 0;
	}
	if ((rc = json_get_bool(body, key, true, false, &on)) < 0)
		return rc;
	*ret_switch = on;
	return 0;
}

/* Admin only (route_table.c): "builder" lets the agent lease build tasks,
 * whose files every measuring agent runs (docs/builds.md); the agent's
 * enrollment and its own reports can never set it. */
int route_agents_patch(struct http_request *req, struct http_reply *reply)
{
	static const char *const keys[] = {"labels", "quarantined", "builder", NULL};
	struct store_agent_change change = {NULL, -1, -1};
	cJSON *body, *agent = NULL;
	int rc;

	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	change.labels = cJSON_GetObjectItemCaseSensitive(body, "labels");
	if ((rc = json_check_keys(body, keys, "agent patch")) < 0 ||
	    (change.labels && (rc = check_members(change.labels, &label_rules, true)) < 0) ||
	    (rc = patch_switch(body, "quarantined", &change.quarantined)) < 0 ||
	    (rc = patch_switch(body, "builder", &change.builder)) < 0)
		goto out;
	rc = store_agent_patch(req->server->store, req->path_id, &change, clock_now_ms(), &agent);
out:
	cJSON_Delete(body);
	if (rc < 0)
		return reply_from_err(reply, rc);
	http_waiters_wake_all(req->server);
	return reply_json(reply, 200, agent);
}

int route_agents_heartbeat(struct http_request *req, struct http_reply *reply)
{
	cJSON *out;
	int rc;

	if (req->write_call) { /* committed */
		rc = store_agent_heartbeat_end(req->write_call, &out);
		req->write_call = NULL;
		return route_reply(reply, rc, 200, out);
	}
	if (req->path_id != req->token.agent_id)
		return reply_error(reply, 403, "forbidden", "An agent may only send its own heartbeat.");
	if (route_empty_body(req, reply, "heartbeat") < 0)
		return 0;
	/* The connection waits for the commit, suspended. */
	rc = store_agent_heartbeat_begin(req->server->store, req->token.agent_id, clock_now_ms(),
					 http_write_committed, req, &req->write_call);
	return rc < 0 ? reply_from_err(reply, rc) : HTTP_SUSPEND_WRITE;
}
