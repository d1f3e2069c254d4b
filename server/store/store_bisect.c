/* store_bisect.c - the bisections (store.h, "bisections"): one row each,
 * its progress one JSON document; on every driver (db.h). */
#include "db.h"
#include "store.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bisection_new {
	const char *series, *by;
	char *doc;
	int max_running;
	long long now, id;
};

static int op_bisection_create(struct store *s, void *arg)
{
	struct bisection_new *a = arg;
	long long running = 0;
	int rc;

	/* Replicas write at once (README "Scaling out"): on PostgreSQL the
	 * count and the insert hold a lock of this creator's till the commit
	 * (first key "bise" in ASCII, the second the creator's hashtext()). */
	if (a->max_running > 0 &&
	    ((rc = db_int(s, &running, 0,
			  db_sql(s, NULL,
				 "SELECT 0 FROM (SELECT pg_advisory_xact_lock(1651078245, hashtext(?))) AS "
				 "locked"),
			  "t", a->by)) < 0 ||
	     (rc = db_int(s, &running, 0,
			  "SELECT count(*) FROM bisections WHERE state = 'running' AND created_by = ?", "t",
			  a->by)) < 0))
		return rc;
	if (a->max_running > 0 && running >= a->max_running)
		return err_set(LL_ECONFLICT, "%s has %lld bisections running, at most %d.", a->by, running,
			       a->max_running);
	return db_int(s, &a->id, 0,
		      "INSERT INTO bisections (series, state, doc, created_by, created_at, updated_at)"
		      " VALUES (?, 'running', ?, ?, ?, ?) RETURNING id",
		      "tttii", a->series, a->doc, a->by, a->now, a->now);
}

int store_bisection_create(struct store *s, const char *series, const cJSON *doc, const char *by,
			   int max_running, long long now, long long *ret_id)
{
	struct bisection_new a = {series, by, cJSON_PrintUnformatted(doc), max_running, now, 0};
	int rc;

	if (!a.doc)
		return LL_ENOMEM;
	rc = db_write(s, op_bisection_create, &a);
	free(a.doc);
	if (rc == 0)
		*ret_id = a.id;
	return rc;
}

static int read_bisection(void *context, struct db_stmt *row)
{
	cJSON *o = db_column_json(row, 3), **ret = context;

	if (!o)
		return LL_ENOMEM;
	/* the row's own columns win over a document written back with them */
	static const char *const columns[] = {"id",         "series",     "state",
					      "created_by", "created_at", "updated_at"};
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(o, columns[i]);
	cJSON_AddNumberToObject(o, "id", (double)db_column_int64(row, 0));
	cJSON_AddStringToObject(o, "series", db_column_text(row, 1));
	cJSON_AddStringToObject(o, "state", db_column_text(row, 2));
	cJSON_AddStringToObject(o, "created_by", db_column_text(row, 4));
	db_add_time(o, "created_at", row, 5);
	db_add_time(o, "updated_at", row, 6);
	*ret = o;
	return 0;
}

int store_bisection_get(struct store *s, long long id, cJSON **ret_bisection)
{
	return db_row_read(s,
			   "SELECT id, series, state, doc, created_by, created_at, updated_at FROM bisections"
			   " WHERE id = ?",
			   id, "bisection", read_bisection, ret_bisection);
}

struct bisection_update {
	long long id;
	const char *expect, *state;
	char *doc;
	long long now;
};

static int read_state(void *context, struct db_stmt *row)
{
	const char *state = db_column_text(row, 0);

	snprintf(context, 32, "%s", state ? state : "");
	return 0;
}

static int op_bisection_update(struct store *s, void *arg)
{
	struct bisection_update *a = arg;
	char state[32];
	int rc;

	if ((rc = db_row_by_id(s, "SELECT state FROM bisections WHERE id = ?", a->id, "bisection", read_state,
			       state)) < 0)
		return rc;
	if (a->expect && strcmp(state, a->expect) != 0)
		return err_set(LL_ECONFLICT, "Bisection %lld is %s, not %s.", a->id, state, a->expect);
	if (a->doc)
		return db_run(s, "UPDATE bisections SET state = ?, doc = ?, updated_at = ? WHERE id = ?",
			      "ttii", a->state, a->doc, a->now, a->id);
	return db_run(s, "UPDATE bisections SET state = ?, updated_at = ? WHERE id = ?", "tii", a->state,
		      a->now, a->id);
}

int store_bisection_update(struct store *s, long long id, const char *expect, const char *state,
			   const cJSON *doc, long long now)
{
	struct bisection_update a = {id, expect, state, doc ? cJSON_PrintUnformatted(doc) : NULL, now};
	int rc;

	if (doc && !a.doc)
		return LL_ENOMEM;
	rc = db_write(s, op_bisection_update, &a);
	free(a.doc);
	return rc;
}

struct running {
	long long *ids;
	int max, count;
};

static void add_running(void *context, struct db_stmt *row)
{
	struct running *r = context;

	if (r->count < r->max)
		r->ids[r->count++] = db_column_int64(row, 0);
}

int store_bisections_running(struct store *s, long long *ret_ids, int max, int *ret_count)
{
	struct running r = {ret_ids, max, 0};
	int rc = db_read_rows(s, "SELECT id FROM bisections WHERE state = 'running' ORDER BY id", add_running,
			      &r, "");

	if (rc == 0)
		*ret_count = r.count;
	return rc;
}
