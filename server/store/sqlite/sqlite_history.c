/*
 * sqlite_history.c - the SQLite backend's history of repeated jobs
 * (store.h, "history of repeated jobs"): earlier jobs of a family, and the
 * calibrations each agent's results gave.
 */
#include "sqlite_int.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <stdlib.h>
#include <string.h>

int sqlite_job_history(struct store *s, const char *family, long long before, int limit,
		       int (*fn)(void *context, long long job_id, const char *spec, const char *series),
		       void *context)
{
	sqlite3_stmt *stmt;
	int rc = 0;

	pthread_mutex_lock(&s->reader_lock);
	db_exec(s->reader, "BEGIN");
	stmt = db_prepare(s->reader, "SELECT id, spec, series FROM jobs"
				     " WHERE family = ?1 AND state = 'done' AND id < ?2"
				     " ORDER BY id DESC LIMIT ?3");
	if (stmt) {
		sqlite3_bind_text(stmt, 1, family, -1, SQLITE_STATIC);
		sqlite3_bind_int64(stmt, 2, before);
		sqlite3_bind_int(stmt, 3, limit);
		while (rc == 0 && sqlite3_step(stmt) == SQLITE_ROW)
			rc = fn(context, sqlite3_column_int64(stmt, 0),
				(const char *)sqlite3_column_text(stmt, 1),
				(const char *)sqlite3_column_text(stmt, 2));
	}
	sqlite3_finalize(stmt);
	db_exec(s->reader, "COMMIT");
	pthread_mutex_unlock(&s->reader_lock);
	return stmt ? rc : LL_ESTORE;
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
		return db_run(
			s->writer,
			"UPDATE agents SET last_calibration = ? WHERE id = ? AND (last_calibration IS NULL"
			" OR json_extract(last_calibration, '$.result_id') <= ?)",
			"tii", a->text, a->agent_id, a->result_id);
	return db_run(s->writer,
		      "INSERT INTO calibrations (result_id, agent_id, body) VALUES (?, ?, ?)"
		      " ON CONFLICT (result_id) DO NOTHING",
		      "iit", a->result_id, a->agent_id, a->text);
}

int sqlite_calibration_write(struct store *s, long long agent_id, long long result_id,
			     const cJSON *calibration, bool last)
{
	struct calibration_op a = {agent_id, result_id, json_text(calibration), last};
	int rc = a.text ? store_write(s, op_calibration, &a) : LL_ENOMEM;

	free((char *)a.text);
	return rc;
}

int sqlite_calibration_add(struct store *s, long long agent_id, long long result_id, const cJSON *calibration)
{
	return sqlite_calibration_write(s, agent_id, result_id, calibration, false);
}

struct history_reader {
	void (*fn)(void *context, const cJSON *calibration);
	void *context;
};

static void history_row(void *context, sqlite3_stmt *row)
{
	struct history_reader *h = context;
	cJSON *c = column_json(row, 0);

	h->fn(h->context, c);
	cJSON_Delete(c);
}

int sqlite_calibration_history(struct store *s, long long agent_id, long long before_result_id,
			       double injected_us, const char *family, const char *runner, int limit,
			       void (*fn)(void *context, const cJSON *calibration), void *context)
{
	struct history_reader h = {fn, context};

	return db_reader_rows(s,
			      "SELECT body FROM calibrations"
			      " WHERE agent_id = ?1 AND result_id < ?2"
			      " AND json_extract(body, '$.injected_us') = ?3"
			      " AND json_extract(body, '$.family') = ?4"
			      " AND json_extract(body, '$.runner') IS ?5"
			      " ORDER BY result_id DESC LIMIT ?6",
			      history_row, &h, "iidtti", agent_id, before_result_id, injected_us, family,
			      runner, (long long)limit);
}
