/*
 * store_history.c - the history of repeated jobs (store.h, "history of
 * repeated jobs"): earlier jobs of a family, and the calibrations each
 * agent's results gave, its last one among them; on every driver (db.h).
 */
#include "db.h"
#include "store.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <stdlib.h>

int store_job_history(struct store *s, const char *family, long long before, int limit,
		      int (*fn)(void *context, long long job_id, const char *spec, const char *series),
		      void *context)
{
	struct db_stmt st;
	int rc;

	db_snapshot_begin(s);
	rc = db_prepare(s,
			"SELECT id, spec, series FROM jobs"
			" WHERE family = ?1 AND state = 'done' AND id < ?2"
			" ORDER BY id DESC LIMIT ?3",
			&st);
	if (rc == 0) {
		db_bind(&st, "tii", family, before, (long long)limit);
		while (rc == 0 && db_step(&st) == DB_ROW)
			rc = fn(context, db_column_int64(&st, 0), db_column_text(&st, 1),
				db_column_text(&st, 2));
	}
	rc = db_finish_read(&st, rc);
	db_snapshot_end(s);
	return rc;
}

struct calibration_op {
	long long agent_id, result_id;
	const char *text;
	bool last;
};

static int op_calibration(struct store *s, void *arg)
{
	struct calibration_op *a = arg;

	/* A calibration whose result came earlier never replaces a later one. */
	if (a->last)
		return db_run(s,
			      db_sql(s,
				     "UPDATE agents SET last_calibration = ? WHERE id = ? AND "
				     "(last_calibration IS NULL"
				     " OR json_extract(last_calibration, '$.result_id') <= ?)",
				     "UPDATE agents SET last_calibration = ? WHERE id = ? AND "
				     "(last_calibration IS NULL"
				     " OR (last_calibration::jsonb ->> 'result_id')::float8 <= ?)"),
			      "tii", a->text, a->agent_id, a->result_id);
	return db_run(s,
		      "INSERT INTO calibrations (result_id, agent_id, body) VALUES (?, ?, ?)"
		      " ON CONFLICT (result_id) DO NOTHING",
		      "iit", a->result_id, a->agent_id, a->text);
}

/* Stores CALIBRATION: in the agent's history of calibrations, or as its
 * last one (LAST), which a calibration whose result came earlier never
 * replaces. */
static int calibration_write(struct store *s, long long agent_id, long long result_id,
			     const cJSON *calibration, bool last)
{
	struct calibration_op a = {agent_id, result_id, json_print(calibration), last};
	int rc = a.text ? db_write(s, op_calibration, &a) : LL_ENOMEM;

	free((char *)a.text);
	return rc;
}

int store_calibration_add(struct store *s, long long agent_id, long long result_id, const cJSON *calibration)
{
	return calibration_write(s, agent_id, result_id, calibration, false);
}

int store_agent_calibration_put(struct store *s, long long agent_id, const cJSON *calibration)
{
	const cJSON *result_id = cJSON_GetObjectItemCaseSensitive(calibration, "result_id");

	return calibration_write(s, agent_id,
				 cJSON_IsNumber(result_id) ? (long long)result_id->valuedouble : 0,
				 calibration, true);
}

struct history_reader {
	void (*fn)(void *context, const cJSON *calibration);
	void *context;
};

static void history_row(void *context, struct db_stmt *row)
{
	struct history_reader *h = context;
	cJSON *c = db_column_json(row, 0);

	h->fn(h->context, c);
	cJSON_Delete(c);
}

int store_calibration_history(struct store *s, long long agent_id, long long before_result_id,
			      double injected_us, const char *family, const char *runner, int limit,
			      void (*fn)(void *context, const cJSON *calibration), void *context)
{
	struct history_reader h = {fn, context};

	return db_read_rows(s,
			    db_sql(s,
				   "SELECT body FROM calibrations"
				   " WHERE agent_id = ?1 AND result_id < ?2"
				   " AND json_extract(body, '$.injected_us') = ?3"
				   " AND json_extract(body, '$.family') = ?4"
				   " AND json_extract(body, '$.runner') IS ?5"
				   " ORDER BY result_id DESC LIMIT ?6",
				   "SELECT body FROM calibrations"
				   " WHERE agent_id = ?1 AND result_id < ?2"
				   " AND (body::jsonb ->> 'injected_us')::float8 = ?3"
				   " AND (body::jsonb ->> 'family') = ?4"
				   " AND (body::jsonb ->> 'runner') IS NOT DISTINCT FROM ?5"
				   " ORDER BY result_id DESC LIMIT ?6"),
			    history_row, &h, "iidtti", agent_id, before_result_id, injected_us, family,
			    runner, (long long)limit);
}
