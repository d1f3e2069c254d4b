/*
 * store_results.c - the results and what reports read of them (store.h,
 * "reports"): result bodies, a job's rows with their cached summaries,
 * and the summaries' cache; on every driver (db.h).
 */
#include "db.h"
#include "store.h"

#include "loadlab/err.h"

#include <stdlib.h>
#include <string.h>

static int read_body(void *context, struct db_stmt *row)
{
	char **text = context;

	*text = strdup(db_column_text(row, 0));
	return *text ? 0 : LL_ENOMEM;
}

int store_result_get(struct store *s, long long result_id, char **ret_text)
{
	return db_row_read(s, "SELECT body FROM results WHERE id = ?", result_id, "result", read_body,
			   ret_text);
}

struct body_and_cell {
	char **body, **cell;
};

static int read_body_and_cell(void *context, struct db_stmt *row)
{
	struct body_and_cell *c = context;
	const char *cell = db_column_text(row, 1);

	*c->body = strdup(db_column_text(row, 0));
	*c->cell = strdup(cell ? cell : "{}");
	if (*c->body && *c->cell)
		return 0;
	free(*c->body);
	free(*c->cell);
	*c->body = *c->cell = NULL;
	return LL_ENOMEM;
}

int store_result_with_cell(struct store *s, long long result_id, char **ret_text, char **ret_cell)
{
	struct body_and_cell c = {ret_text, ret_cell};

	return db_row_read(s,
			   "SELECT r.body, t.cell FROM results r LEFT JOIN tasks t ON t.id = r.task_id"
			   " WHERE r.id = ?",
			   result_id, "result", read_body_and_cell, &c);
}

/* The rows of JOB_ID from SQL (columns as store_report_row's, ?1 the
 * job, ?2 ARG, ?3 VERSION) to FN, in one snapshot: store_job_report_rows(). */
static int job_rows(struct store *s, long long job_id, const char *sql, int arg, int version,
		    int (*fn)(void *context, const struct store_report_row *row), void *context)
{
	struct db_stmt st = {0};
	long long exists = 0;
	int rc;

	db_snapshot_begin(s);
	rc = db_int(s, &exists, 0, "SELECT count(*) FROM jobs WHERE id = ?", "i", job_id);
	if (rc == 0 && !exists)
		rc = err_set(LL_ENOTFOUND, "No job has id %lld.", job_id);
	if (rc == 0)
		rc = db_prepare(s, sql, &st);
	if (rc == 0) {
		db_bind(&st, "iii", job_id, (long long)arg, (long long)version);
		while (rc == 0 && db_step(&st) == DB_ROW) {
			struct store_report_row row = {
				.task_id = db_column_int64(&st, 0),
				.cell = db_column_text(&st, 1),
				.state = db_column_text(&st, 2),
				.last_error = db_column_text(&st, 3),
				.result_id = db_column_int64(&st, 4),
				.summary = db_column_text(&st, 5),
				.summary_version = (int)db_column_int64(&st, 6),
				.body = db_column_text(&st, 7),
			};
			int compare_len = 0;
			row.compare = db_column_blob(&st, 8, &compare_len);
			row.compare_len = (size_t)compare_len;
			rc = fn(context, &row);
		}
	}
	rc = db_finish_read(&st, rc);
	db_snapshot_end(s);
	return rc;
}

/* The rows of job ?1: each measuring task, its last result and that result's summary. */
#define JOB_ROWS_FROM                                                                       \
	" FROM tasks t"                                                                     \
	" LEFT JOIN results r ON r.id = (SELECT max(id) FROM results WHERE task_id = t.id)" \
	" LEFT JOIN result_summaries m ON m.result_id = r.id"                               \
	" WHERE t.job_id = ?1 AND t.kind = 'measure' ORDER BY t.id"

int store_job_report_rows(struct store *s, long long job_id, bool with_bodies, int version,
			  int (*fn)(void *context, const struct store_report_row *row), void *context)
{
	/* The body also where the cached summary is of another version: a
	 * release that changed the summary summarizes it again (test_upgrade). */
	return job_rows(s, job_id,
			"SELECT t.id, t.cell, t.state, t.last_error, r.id, m.body, m.version,"
			" CASE WHEN ?2 <> 0 OR m.body IS NULL OR m.compare IS NULL OR m.version <> ?3"
			" THEN r.body END,"
			" m.compare" JOB_ROWS_FROM,
			with_bodies, version, fn, context);
}

/* Compare reads no summary text (profiled: reading it was part of the
 * store's 16-26 % of a compare), and no compare data of another version. */
int store_job_compare_rows(struct store *s, long long job_id, int version,
			   int (*fn)(void *context, const struct store_report_row *row), void *context)
{
	return job_rows(s, job_id,
			"SELECT t.id, t.cell, t.state, t.last_error, r.id, NULL, m.version,"
			" CASE WHEN m.compare IS NULL OR m.version IS DISTINCT FROM ?2 THEN r.body END,"
			" CASE WHEN m.version = ?3 THEN m.compare END" JOB_ROWS_FROM,
			version, version, fn, context);
}

struct result_ids {
	void (*fn)(void *context, long long result_id);
	void *context;
};

static void add_result_id(void *context, struct db_stmt *row)
{
	struct result_ids *r = context;

	r->fn(r->context, db_column_int64(row, 0));
}

int store_results_unsummarized(struct store *s, int version, long long limit,
			       void (*fn)(void *context, long long result_id), void *context)
{
	struct result_ids r = {fn, context};

	return db_read_rows(s,
			    "SELECT r.id FROM results r LEFT JOIN result_summaries m"
			    " ON m.result_id = r.id AND m.version = ?1"
			    " WHERE m.result_id IS NULL ORDER BY r.id LIMIT ?2",
			    add_result_id, &r, "ii", (long long)version, limit);
}

int store_results_without_compare(struct store *s, int version, long long limit,
				  void (*fn)(void *context, long long result_id), void *context)
{
	struct result_ids r = {fn, context};

	return db_read_rows(s,
			    "SELECT result_id FROM result_summaries"
			    " WHERE version = ?1 AND compare IS NULL ORDER BY result_id LIMIT ?2",
			    add_result_id, &r, "ii", (long long)version, limit);
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
	struct db_stmt st;
	int rc = db_prepare(
		s,
		a->summaries ? "INSERT INTO result_summaries (result_id, version, body, compare)"
			       " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (result_id) DO UPDATE SET"
			       " version = excluded.version, body = excluded.body,"
			       " compare = CASE WHEN excluded.compare IS NOT NULL THEN excluded.compare"
			       " WHEN result_summaries.version = excluded.version"
			       " THEN result_summaries.compare END"
			     : "UPDATE result_summaries SET compare = ?4"
			       " WHERE result_id = ?1 AND version = ?2",
		&st);

	for (size_t i = 0; i < a->count && rc == 0; i++) {
		const void *compare = a->compare ? a->compare[i] : NULL;
		int step;
		if (!a->summaries && !compare)
			continue;
		db_bind_int64(&st, 1, a->ids[i]);
		db_bind_int64(&st, 2, a->version);
		if (a->summaries)
			db_bind_text(&st, 3, a->summaries[i]);
		if (compare)
			db_bind_blob(&st, 4, compare, (int)a->compare_len[i]);
		else
			db_bind_null(&st, 4);
		if ((step = db_step(&st)) != DB_DONE)
			rc = step < 0 ? step
				      : err_set(LL_ESTORE, "Storing %s gave a row.",
						a->summaries ? "a summary" : "compare data");
		db_reset(&st);
	}
	db_finish(&st);
	return rc;
}

int store_summaries_put(struct store *s, size_t count, const long long *result_ids, int version,
			const char *const *summaries, const void *const *compare, const size_t *compare_len)
{
	struct summaries_put_op a = {count, result_ids, version, summaries, compare, compare_len};

	return count ? db_write(s, op_summaries_put, &a) : 0;
}

int store_compare_data_put(struct store *s, size_t count, const long long *result_ids, int version,
			   const void *const *compare, const size_t *compare_len)
{
	struct summaries_put_op a = {count, result_ids, version, NULL, compare, compare_len};

	return count ? db_write(s, op_summaries_put, &a) : 0;
}
