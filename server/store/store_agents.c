/*
 * store_agents.c - the agents (store.h, "agents"): enrollment,
 * listing, labels and quarantine, and heartbeats, which renew the leases
 * an agent holds.
 */
#include "db.h"
#include "store_agents.h"
#include "store_backend.h"
#include "store_cache.h"

#include "store/queue.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct agent_enroll_op {
	const char *name;
	char *facts, *labels;
	const unsigned char *hash;
	long long now, id;
};

static int op_agent_enroll(struct store *s, void *arg)
{
	struct agent_enroll_op *a = arg;
	int rc;

	rc = db_int(s, &a->id, 0,
		    "INSERT INTO agents (name, facts, labels, created_at, last_seen) VALUES (?, ?, ?, ?, ?)"
		    " RETURNING id",
		    "tttii", a->name, a->facts, a->labels, a->now, a->now);
	if (rc < 0)
		return rc;
	return db_run(
		s, "INSERT INTO tokens (kind, name, hash, agent_id, created_at) VALUES ('agent', ?, ?, ?, ?)",
		"tbii", a->name, a->hash, a->id, a->now);
}

int store_agent_enroll(struct store *s, const char *name, const cJSON *facts, const cJSON *labels,
		       const unsigned char hash[STORE_TOKEN_HASH_SIZE], long long now,
		       long long *ret_agent_id)
{
	struct agent_enroll_op a = {name, json_print(facts), json_print(labels), hash, now, 0};
	int rc = (a.facts && a.labels) ? db_write(s, op_agent_enroll, &a) : LL_ENOMEM;

	free(a.facts);
	free(a.labels);
	if (rc < 0)
		return rc;
	*ret_agent_id = a.id;
	return 0;
}

#define AGENT_COLUMNS                                                                          \
	"a.id, a.name, a.facts, a.labels, a.quarantined, a.last_seen, a.created_at,"           \
	" (SELECT min(t.id) FROM tasks t WHERE t.lease_holder = a.id AND t.state = 'leased')," \
	" a.last_calibration, a.agent_version, a.agent_sha256, a.agent_update, a.builder"

static cJSON *agent_from_row(struct store *s, struct db_stmt *stmt, long long now)
{
	cJSON *a = cJSON_CreateObject();

	cJSON_AddNumberToObject(a, "id", (double)db_column_int64(stmt, 0));
	cJSON_AddStringToObject(a, "name", db_column_text(stmt, 1));
	cJSON_AddItemToObject(a, "facts", db_column_json(stmt, 2));
	cJSON_AddItemToObject(a, "labels", db_column_json(stmt, 3));
	cJSON_AddStringToObject(a, "state",
				queue_agent_state((int)db_column_int64(stmt, 4) != 0,
						  !db_column_null(stmt, 5), db_column_int64(stmt, 5), now,
						  store_options_of(s)->offline_after_ms));
	db_add_time(a, "last_seen", stmt, 5);
	db_add_int_or_null(a, "current_task", stmt, 7);
	db_add_time(a, "created_at", stmt, 6);
	if (db_column_null(stmt, 8))
		cJSON_AddNullToObject(a, "last_calibration");
	else
		cJSON_AddItemToObject(a, "last_calibration", db_column_json(stmt, 8));
	for (int column = 9; column <= 10; column++) {
		const char *key = column == 9 ? "agent_version" : "agent_sha256";
		if (db_column_null(stmt, column))
			cJSON_AddNullToObject(a, key);
		else
			cJSON_AddStringToObject(a, key, db_column_text(stmt, column));
	}
	if (db_column_null(stmt, 11))
		cJSON_AddNullToObject(a, "agent_update");
	else
		cJSON_AddItemToObject(a, "agent_update", db_column_json(stmt, 11));
	/* an admin's mark (queue_build.h), never the agent's own word */
	cJSON_AddBoolToObject(a, "builder", (int)db_column_int64(stmt, 12) != 0);
	return a;
}

/* The context of agent_from_row() called by db_read_each() and
 * db_row_by_id(). */
struct agent_rows {
	struct store *store;
	long long now;
	cJSON *list;  /* listing: the array to fill */
	cJSON *agent; /* by id: the agent read */
};

static void add_agent(void *context, struct db_stmt *row)
{
	struct agent_rows *c = context;

	cJSON_AddItemToArray(c->list, agent_from_row(c->store, row, c->now));
}

int store_agent_list(struct store *s, long long now, cJSON **ret_list)
{
	cJSON *out = cJSON_CreateObject();
	struct agent_rows c = {s, now, cJSON_AddArrayToObject(out, "agents"), NULL};
	int rc = db_read_each(s, "SELECT " AGENT_COLUMNS " FROM agents a ORDER BY a.id", add_agent, &c);

	return db_answer(rc, out, ret_list);
}

static int read_agent(void *context, struct db_stmt *row)
{
	struct agent_rows *c = context;

	c->agent = agent_from_row(c->store, row, c->now);
	return 0;
}

/* Reads one agent with the writer's connection (inside an op). */
static int writer_agent_get(struct store *s, long long id, long long now, cJSON **ret)
{
	struct agent_rows c = {s, now, NULL, NULL};
	int rc = db_row_by_id(s, "SELECT " AGENT_COLUMNS " FROM agents a WHERE a.id = ?", id, "agent",
			      read_agent, &c);

	if (rc == 0)
		*ret = c.agent;
	return rc;
}

int store_agent_get(struct store *s, long long agent_id, long long now, cJSON **ret_agent)
{
	struct agent_rows c = {s, now, NULL, NULL};
	int rc;

	db_read_begin(s);
	rc = db_row_by_id(s, "SELECT " AGENT_COLUMNS " FROM agents a WHERE a.id = ?", agent_id, "agent",
			  read_agent, &c);
	db_read_end(s);
	if (rc == 0)
		*ret_agent = c.agent;
	return rc;
}

struct agent_patch_op {
	long long id;
	const struct store_agent_change *change;
	long long now;
	cJSON *out;
};

static int op_agent_patch(struct store *s, void *arg)
{
	struct agent_patch_op *a = arg;
	cJSON *agent = NULL, *labels;
	const cJSON *item;
	char *text;
	int rc;

	if ((rc = writer_agent_get(s, a->id, a->now, &agent)) < 0)
		return rc;
	labels = cJSON_GetObjectItemCaseSensitive(agent, "labels");
	cJSON_ArrayForEach(item, a->change->labels) {
		cJSON_DeleteItemFromObjectCaseSensitive(labels, item->string);
		if (cJSON_IsString(item))
			cJSON_AddStringToObject(labels, item->string, item->valuestring);
	}
	if (cJSON_GetArraySize(labels) > 32) {
		cJSON_Delete(agent);
		return err_set(LL_ERANGE, "An agent has at most 32 labels.");
	}
	text = json_print(labels);
	cJSON_Delete(agent);
	rc = db_run(s, "UPDATE agents SET labels = ? WHERE id = ?", "ti", text, a->id);
	free(text);
	if (rc == 0 && a->change->quarantined >= 0)
		rc = db_run(s, "UPDATE agents SET quarantined = ? WHERE id = ?", "ii",
			    (long long)a->change->quarantined, a->id);
	if (rc == 0 && a->change->builder >= 0)
		rc = db_run(s, "UPDATE agents SET builder = ? WHERE id = ?", "ii",
			    (long long)a->change->builder, a->id);
	/* New labels, a quarantine lifted or a builder marked may match
	 * queued tasks: the agent may be parked on another daemon. */
	if (rc == 0)
		rc = db_tasks_ready(s);
	if (rc == 0)
		rc = writer_agent_get(s, a->id, a->now, &a->out);
	return rc;
}

int store_agent_patch(struct store *s, long long agent_id, const struct store_agent_change *change,
		      long long now, cJSON **ret_agent)
{
	struct agent_patch_op a = {agent_id, change, now, NULL};

	return db_write_answer(s, op_agent_patch, &a, &a.out, ret_agent);
}

struct heartbeat_op {
	long long agent_id, now;
	cJSON *out;
};

/* Adds the task at ROW of a heartbeat's listing to TASKS. */
static void add_heartbeat_task(cJSON *tasks, struct db_stmt *row, bool cancelled)
{
	cJSON *t = task_attempt_json(db_column_int64(row, 0), db_column_int64(row, 1),
				     cancelled ? "cancelled" : "leased");

	cJSON_AddBoolToObject(t, "cancelled", cancelled);
	if (cancelled)
		cJSON_AddNullToObject(t, "lease_expires_at");
	else
		db_add_time(t, "lease_expires_at", row, 2);
	cJSON_AddItemToArray(tasks, t);
}

static int op_agent_heartbeat(struct store *s, void *arg)
{
	struct heartbeat_op *a = arg;
	long long expires = a->now + store_options_of(s)->lease_ms;
	struct db_stmt leased_buf, cancelled_buf, *leased, *cancelled;
	bool has_leased, has_cancelled, cancelled_listed = false;
	cJSON *tasks;
	int rc;

	if ((rc = store_agent_touch(s, a->agent_id, a->now)) < 0 ||
	    (rc = db_run(s, "UPDATE tasks SET lease_expires = ? WHERE lease_holder = ? AND state = 'leased'",
			 "ii", expires, a->agent_id)) < 0)
		return rc;
	a->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(a->out, "agent_id", (double)a->agent_id);
	tasks = cJSON_AddArrayToObject(a->out, "tasks");
	/* Two seeks of tasks_held (state, lease_holder), each in id
	 * order, merged by id. One statement with "state = 'leased' OR
	 * (state = 'cancelled' AND ...)" walked every task the agent ever
	 * held (its done ones too): a heartbeat cost grew with its history. */
	leased = db_statement(s, &leased_buf,
			      "SELECT id, attempt, lease_expires FROM tasks"
			      " WHERE lease_holder = ? AND state = 'leased' ORDER BY id");
	cancelled = db_statement(s, &cancelled_buf,
				 "SELECT id, attempt FROM tasks WHERE lease_holder = ?"
				 " AND state = 'cancelled' AND cancel_notified = 0 ORDER BY id");
	if (!leased || !cancelled) {
		db_finish(leased);
		db_finish(cancelled);
		return LL_ESTORE;
	}
	db_bind_int64(leased, 1, a->agent_id);
	db_bind_int64(cancelled, 1, a->agent_id);
	has_leased = db_step(leased) == DB_ROW;
	has_cancelled = db_step(cancelled) == DB_ROW;
	while (has_leased || has_cancelled) {
		if (has_cancelled &&
		    (!has_leased || db_column_int64(cancelled, 0) < db_column_int64(leased, 0))) {
			add_heartbeat_task(tasks, cancelled, true);
			cancelled_listed = true;
			has_cancelled = db_step(cancelled) == DB_ROW;
		} else {
			add_heartbeat_task(tasks, leased, false);
			has_leased = db_step(leased) == DB_ROW;
		}
	}
	/* A failed step fails the heartbeat: never a short list. */
	if ((rc = db_finish_read(cancelled, db_finish(leased))) < 0)
		return rc;
	/* Only a cancelled task just listed has cancel_notified = 0. */
	if (!cancelled_listed)
		return 0;
	return db_run(s,
		      "UPDATE tasks SET cancel_notified = 1 WHERE lease_holder = ? AND state = 'cancelled'"
		      " AND cancel_notified = 0",
		      "i", a->agent_id);
}

int store_agent_heartbeat_begin(struct store *s, long long agent_id, long long now, store_done_fn done,
				void *context, struct store_call **ret_call)
{
	struct heartbeat_op a = {agent_id, now, NULL};

	return db_call_start(s, &a, sizeof(a), offsetof(struct heartbeat_op, out), op_agent_heartbeat, done,
			     context, ret_call);
}

int store_agent_heartbeat_end(struct store_call *call, cJSON **ret_body)
{
	return db_call_end(call, ret_body);
}

/* ------------------------------------------------------------ calibration */

struct calibration_spec {
	long long job_id;
	cJSON *spec;
};

static int read_calibration_spec(void *context, struct db_stmt *row)
{
	struct calibration_spec *c = context;

	c->job_id = db_column_int64(row, 0);
	c->spec = db_column_json(row, 1);
	return c->spec ? 0 : LL_ENOMEM;
}

int store_task_calibration_spec(struct store *s, long long task_id, long long *ret_job_id, cJSON **ret_spec)
{
	struct calibration_spec c = {0, NULL};
	int rc;

	db_read_begin(s);
	rc = db_row_by_id(s,
			  db_sql(s,
				 "SELECT j.id, j.spec FROM tasks t JOIN jobs j ON j.id = t.job_id"
				 " WHERE t.id = ? AND json_extract(j.spec, '$.calibration') IS NOT NULL",
				 "SELECT j.id, j.spec FROM tasks t JOIN jobs j ON j.id = t.job_id"
				 " WHERE t.id = ? AND (j.spec::jsonb ->> 'calibration') IS NOT NULL"),
			  task_id, NULL, read_calibration_spec, &c);
	db_read_end(s);
	if (rc == LL_ENOTFOUND)
		rc = 0;
	if (rc < 0)
		return rc;
	*ret_job_id = c.job_id;
	*ret_spec = c.spec;
	return 0;
}

int store_agent_builds(struct store *s, long long agent_id, bool *ret_builds)
{
	long long held = 0;
	int rc;

	db_read_begin(s);
	rc = db_int(
		s, &held, 0,
		"SELECT count(*) FROM tasks WHERE lease_holder = ? AND state = 'leased' AND kind = 'build'",
		"i", agent_id);
	db_read_end(s);
	*ret_builds = rc == 0 && held > 0;
	return rc;
}

struct agent_build_op {
	long long agent_id;
	const char *version, *sha256;
};

static int op_agent_build_set(struct store *s, void *arg)
{
	struct agent_build_op *b = arg;

	return db_run(s, "UPDATE agents SET agent_version = ?, agent_sha256 = ? WHERE id = ?", "tti",
		      b->version, b->sha256, b->agent_id);
}

int store_agent_build_set(struct store *s, long long agent_id, const char *version, const char *sha256)
{
	struct agent_build_op b = {agent_id, version, sha256};

	return db_write(s, op_agent_build_set, &b);
}

struct agent_update_op {
	long long agent_id;
	const char *update;
};

static int op_agent_update_set(struct store *s, void *arg)
{
	struct agent_update_op *u = arg;

	return db_run(s, "UPDATE agents SET agent_update = ? WHERE id = ?", "ti", u->update, u->agent_id);
}

int store_agent_update_set(struct store *s, long long agent_id, const cJSON *update)
{
	char *text = json_print(update);
	struct agent_update_op u = {agent_id, text};
	int rc = text ? db_write(s, op_agent_update_set, &u) : LL_ENOMEM;

	free(text);
	return rc;
}

/* store_agent_touch()'s longest wait between two writes of an agent's
 * last_seen: each write cost about 10k instructions of SQLite's writer,
 * three times per lease, heartbeat and result (tests/bench/README.md,
 * pass 6); a burst of one agent's requests writes its row once. */
#define AGENT_TOUCH_MAX_MS 1000

int store_agent_touch(struct store *s, long long agent_id, long long now)
{
	struct store_cache *cache = ((struct store_base *)s)->cache;
	long long window = store_options_of(s)->offline_after_ms / 8;
	int rc;

	if (window <= 0 || window > AGENT_TOUCH_MAX_MS)
		window = AGENT_TOUCH_MAX_MS;
	if (!store_cache_agent_touch_due(cache, agent_id, now, window))
		return 0;
	/* GREATEST: another daemon's later touch stays. */
	rc = db_run(s,
		    db_sql(s, "UPDATE agents SET last_seen = ? WHERE id = ?",
			   "UPDATE agents SET last_seen = GREATEST(coalesce(last_seen, 0), ?) WHERE id = ?"),
		    "ii", now, agent_id);
	if (rc == 0)
		store_cache_agent_touch_put(cache, agent_id, now);
	return rc;
}

cJSON *task_attempt_json(long long task_id, long long attempt, const char *state)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "task_id", (double)task_id);
	cJSON_AddNumberToObject(o, "attempt", (double)attempt);
	cJSON_AddStringToObject(o, "state", state);
	return o;
}
