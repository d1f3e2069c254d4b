/*
 * sqlite_results.c - the SQLite store's results and what reports read of them
 * (store.h, "reports"): result bodies, a job's rows with their cached
 * summaries, and the summaries' cache.
 */
#include "sqlite_int.h"

#include "loadlab/err.h"

#include <stdlib.h>
#include <string.h>

static int read_body(void *context, sqlite3_stmt *row)
{
	char **text = context;

	*text = strdup((const char *)sqlite3_column_text(row, 0));
	return *text ? 0 : LL_ENOMEM;
}

int sqlite_result_get(struct store *s, long long result_id, char **ret_text)
{
	int rc;

	pthread_mutex_lock(&s->reader_lock);
	rc = sq_row_by_id(s->reader, "SELECT body FROM results WHERE id = ?", result_id, "result", read_body,
			  ret_text);
	pthread_mutex_unlock(&s->reader_lock);
	return rc;
}

struct body_and_cell {
	char **body, **cell;
};

static int read_body_and_cell(void *context, sqlite3_stmt *row)
{
	struct body_and_cell *c = context;
	const char *cell = (const char *)sqlite3_column_text(row, 1);

	*c->body = strdup((const char *)sqlite3_column_text(row, 0));
	*c->cell = strdup(cell ? cell : "{}");
	if (*c->body && *c->cell)
		return 0;
	free(*c->body);
	free(*c->cell);
	*c->body = *c->cell = NULL;
	return LL_ENOMEM;
}

int sqlite_result_with_cell(struct store *s, long long result_id, char **ret_text, char **ret_cell)
{
	struct body_and_cell c = {ret_text, ret_cell};
	int rc;

	pthread_mutex_lock(&s->reader_lock);
	rc = sq_row_by_id(s->reader,
			  "SELECT r.body, t.cell FROM results r LEFT JOIN tasks t ON t.id = r.task_id"
			  " WHERE r.id = ?",
			  result_id, "result", read_body_and_cell, &c);
	pthread_mutex_unlock(&s->reader_lock);
	return rc;
}

/* The rows of JOB_ID from SQL (columns as store_report_row's, ?1 the
 * job, ?2 ARG) to FN: sqlite_job_report_rows(). */
static int job_rows(struct store *s, long long job_id, const char *sql, int arg,
		    int (*fn)(void *context, const struct store_report_row *row), void *context)
{
	sqlite3_stmt *stmt;
	long long exists = 0;
	int rc;

	pthread_mutex_lock(&s->reader_lock);
	sq_exec(s->reader, "BEGIN");
	rc = sq_int(s->reader, &exists, 0, "SELECT count(*) FROM jobs WHERE id = ?", "i", job_id);
	if (rc == 0 && !exists)
		rc = err_set(LL_ENOTFOUND, "No job has id %lld.", job_id);
	stmt = rc < 0 ? NULL : sq_cached(s->reader, sql);
	if (rc == 0 && !stmt)
		rc = LL_ESTORE;
	if (stmt) {
		sqlite3_bind_int64(stmt, 1, job_id);
		sqlite3_bind_int(stmt, 2, arg);
		while (rc == 0 && sqlite3_step(stmt) == SQLITE_ROW) {
			struct store_report_row row = {
				.task_id = sqlite3_column_int64(stmt, 0),
				.cell = (const char *)sqlite3_column_text(stmt, 1),
				.state = (const char *)sqlite3_column_text(stmt, 2),
				.last_error = (const char *)sqlite3_column_text(stmt, 3),
				.result_id = sqlite3_column_int64(stmt, 4),
				.summary = (const char *)sqlite3_column_text(stmt, 5),
				.summary_version = sqlite3_column_int(stmt, 6),
				.body = (const char *)sqlite3_column_text(stmt, 7),
				.compare = sqlite3_column_blob(stmt, 8),
				.compare_len = (size_t)sqlite3_column_bytes(stmt, 8),
			};
			rc = fn(context, &row);
		}
		sq_release(s->reader, stmt);
	}
	sq_exec(s->reader, "COMMIT");
	pthread_mutex_unlock(&s->reader_lock);
	return rc;
}

/* The rows of job ?1: each measuring task, its last result and that result's summary. */
#define JOB_ROWS_FROM                                                                       \
	" FROM tasks t"                                                                     \
	" LEFT JOIN results r ON r.id = (SELECT max(id) FROM results WHERE task_id = t.id)" \
	" LEFT JOIN result_summaries m ON m.result_id = r.id"                               \
	" WHERE t.job_id = ?1 AND t.kind = 'measure' ORDER BY t.id"

int sqlite_job_report_rows(struct store *s, long long job_id, bool with_bodies,
			   int (*fn)(void *context, const struct store_report_row *row), void *context)
{
	return job_rows(s, job_id,
			"SELECT t.id, t.cell, t.state, t.last_error, r.id, m.body, m.version,"
			" CASE WHEN ?2 OR m.body IS NULL OR m.compare IS NULL THEN r.body END,"
			" m.compare" JOB_ROWS_FROM,
			with_bodies, fn, context);
}

/* Compare reads no summary text (profiled: reading it was part of the
 * store's 16-26 % of a compare), and no compare data of another version. */
int sqlite_job_compare_rows(struct store *s, long long job_id, int version,
			    int (*fn)(void *context, const struct store_report_row *row), void *context)
{
	return job_rows(s, job_id,
			"SELECT t.id, t.cell, t.state, t.last_error, r.id, NULL, m.version,"
			" CASE WHEN m.compare IS NULL OR m.version IS NOT ?2 THEN r.body END,"
			" CASE WHEN m.version = ?2 THEN m.compare END" JOB_ROWS_FROM,
			version, fn, context);
}

/* Calls FN with the id of every row SQL (?1 VERSION, ?2 LIMIT) reads. */
static int result_ids(struct store *s, const char *sql, int version, long long limit,
		      void (*fn)(void *context, long long result_id), void *context)
{
	sqlite3_stmt *stmt;

	pthread_mutex_lock(&s->reader_lock);
	stmt = sq_cached(s->reader, sql);
	if (stmt) {
		sqlite3_bind_int(stmt, 1, version);
		sqlite3_bind_int64(stmt, 2, limit);
		while (sqlite3_step(stmt) == SQLITE_ROW)
			fn(context, sqlite3_column_int64(stmt, 0));
		sq_release(s->reader, stmt);
	}
	pthread_mutex_unlock(&s->reader_lock);
	return stmt ? 0 : LL_ESTORE;
}

int sqlite_results_unsummarized(struct store *s, int version, long long limit,
				void (*fn)(void *context, long long result_id), void *context)
{
	return result_ids(s,
			  "SELECT r.id FROM results r LEFT JOIN result_summaries m"
			  " ON m.result_id = r.id AND m.version = ?1"
			  " WHERE m.result_id IS NULL ORDER BY r.id LIMIT ?2",
			  version, limit, fn, context);
}

int sqlite_results_without_compare(struct store *s, int version, long long limit,
				   void (*fn)(void *context, long long result_id), void *context)
{
	return result_ids(s,
			  "SELECT result_id FROM result_summaries"
			  " WHERE version = ?1 AND compare IS NULL ORDER BY result_id LIMIT ?2",
			  version, limit, fn, context);
}

/* Summaries with their compare data (SUMMARIES set), or compare data
 * alone for the results whose summary of VERSION is stored (SUMMARIES
 * NULL; a NULL COMPARE[i] is passed over). */
struct summaries_put_op {
	size_t count;
	const long long *ids;
	int version;
	const char *const *summaries;
	const void *const *compare;
	const size_t *compare_len;
};

static int op_summaries_put(struct store *s, void *arg)
{
	struct summaries_put_op *a = arg;
	int rc = 0;
	sqlite3_stmt *stmt =
		a->summaries
			? sq_cached(s->writer,
				    "INSERT INTO result_summaries (result_id, version, body, compare)"
				    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (result_id) DO UPDATE SET"
				    " version = excluded.version, body = excluded.body,"
				    " compare = CASE WHEN excluded.compare IS NOT NULL THEN excluded.compare"
				    " WHEN result_summaries.version = excluded.version"
				    " THEN result_summaries.compare END")
			: sq_cached(s->writer, "UPDATE result_summaries SET compare = ?4"
					       " WHERE result_id = ?1 AND version = ?2");

	if (!stmt)
		return LL_ESTORE;
	for (size_t i = 0; i < a->count && rc == 0; i++) {
		const void *compare = a->compare ? a->compare[i] : NULL;
		if (!a->summaries && !compare)
			continue;
		sqlite3_bind_int64(stmt, 1, a->ids[i]);
		sqlite3_bind_int(stmt, 2, a->version);
		if (a->summaries)
			sqlite3_bind_text(stmt, 3, a->summaries[i], -1, SQLITE_STATIC);
		if (compare)
			sqlite3_bind_blob(stmt, 4, compare, (int)a->compare_len[i], SQLITE_STATIC);
		else
			sqlite3_bind_null(stmt, 4);
		if (sqlite3_step(stmt) != SQLITE_DONE)
			rc = err_set(LL_ESTORE, "Storing %s: %s", a->summaries ? "a summary" : "compare data",
				     sqlite3_errmsg(s->writer));
		sqlite3_reset(stmt);
	}
	sqlite3_clear_bindings(stmt);
	sq_release(s->writer, stmt);
	return rc;
}

int sqlite_summaries_put(struct store *s, size_t count, const long long *result_ids, int version,
			 const char *const *summaries, const void *const *compare, const size_t *compare_len)
{
	struct summaries_put_op a = {count, result_ids, version, summaries, compare, compare_len};

	return count ? store_write(s, op_summaries_put, &a) : 0;
}

int sqlite_compare_data_put(struct store *s, size_t count, const long long *result_ids, int version,
			    const void *const *compare, const size_t *compare_len)
{
	struct summaries_put_op a = {count, result_ids, version, NULL, compare, compare_len};

	return count ? store_write(s, op_summaries_put, &a) : 0;
}
