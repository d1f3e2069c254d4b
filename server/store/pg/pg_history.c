/*
 * pg_history.c - the PostgreSQL backend's history of repeated jobs
 * (store.h, "history of repeated jobs"): earlier jobs of a family, and the
 * calibrations each agent's results gave.
 */
#include "pg_int.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <stdlib.h>
#include <string.h>

int pg_job_history(struct store *s, const char *family, long long before, int limit,
		   int (*fn)(void *context, long long job_id, const char *spec, const char *series),
		   void *context)
{
	struct pgq *stmt;
	int rc = 0;

	pq_read_begin(s);
	pq_exec(pq_reader(), "BEGIN");
	stmt = pq_prepare(pq_reader(), "SELECT id, spec, series FROM jobs"
				       " WHERE family = ?1 AND state = 'done' AND id < ?2"
				       " ORDER BY id DESC LIMIT ?3");
	if (stmt) {
		pgq_bind_text(stmt, 1, family, -1, PGQ_TRANSIENT);
		pgq_bind_int64(stmt, 2, before);
		pgq_bind_int64(stmt, 3, limit);
		while (rc == 0 && pgq_step(stmt) == PGQ_ROW)
			rc = fn(context, pgq_column_int64(stmt, 0), (const char *)pgq_column_text(stmt, 1),
				(const char *)pgq_column_text(stmt, 2));
	}
	pgq_free(stmt);
	pq_exec(pq_reader(), "COMMIT");
	pq_read_end(s);
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
		return pq_run(
			pq_writer(),
			"UPDATE agents SET last_calibration = ? WHERE id = ? AND (last_calibration IS NULL"
			" OR (last_calibration::jsonb ->> 'result_id')::float8 <= ?)",
			"tii", a->text, a->agent_id, a->result_id);
	return pq_run(pq_writer(),
		      "INSERT INTO calibrations (result_id, agent_id, body) VALUES (?, ?, ?)"
		      " ON CONFLICT (result_id) DO NOTHING",
		      "iit", a->result_id, a->agent_id, a->text);
}

int pg_calibration_write(struct store *s, long long agent_id, long long result_id, const cJSON *calibration,
			 bool last)
{
	struct calibration_op a = {agent_id, result_id, pq_json_text(calibration), last};
	int rc = a.text ? pq_write(s, op_calibration, &a) : LL_ENOMEM;

	free((char *)a.text);
	return rc;
}

int pg_calibration_add(struct store *s, long long agent_id, long long result_id, const cJSON *calibration)
{
	return pg_calibration_write(s, agent_id, result_id, calibration, false);
}

struct history_reader {
	void (*fn)(void *context, const cJSON *calibration);
	void *context;
};

static void history_row(void *context, struct pgq *row)
{
	struct history_reader *h = context;
	cJSON *c = pq_column_json(row, 0);

	h->fn(h->context, c);
	cJSON_Delete(c);
}

int pg_calibration_history(struct store *s, long long agent_id, long long before_result_id,
			   double injected_us, const char *family, const char *runner, int limit,
			   void (*fn)(void *context, const cJSON *calibration), void *context)
{
	struct history_reader h = {fn, context};

	return pq_reader_rows(s,
			      "SELECT body FROM calibrations"
			      " WHERE agent_id = ?1 AND result_id < ?2"
			      " AND (body::jsonb ->> 'injected_us')::float8 = ?3"
			      " AND (body::jsonb ->> 'family') = ?4"
			      " AND (body::jsonb ->> 'runner') IS NOT DISTINCT FROM ?5"
			      " ORDER BY result_id DESC LIMIT ?6",
			      history_row, &h, "iidtti", agent_id, before_result_id, injected_us, family,
			      runner, (long long)limit);
}
