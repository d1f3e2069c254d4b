/*
 * pg_sql.c - the statements of the PostgreSQL backend (struct pgq, pg_int.h)
 * on libpq, and the connections of this thread's write and read.
 */
#include "pg_int.h"

#include "store/db_driver.h"

#include "loadlab/err.h"
#include "loadlab/log.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PostgreSQL's type oids (pg_type.h) of the parameters bound. */
#define OID_BYTEA 17
#define OID_INT8 20
#define OID_TEXT 25
#define OID_FLOAT8 701

struct pgq {
	PGconn *conn;
	struct pq_session *session; /* NULL: run unnamed (PQexecParams) */
	struct pq_text *text;       /* the session's entry of sql */
	char *sql;                  /* the text with $N parameters (the entry's when text) */
	int nparams;
	unsigned used; /* the parameters the text names, by bit */
	Oid types[PGQ_PARAMS_MAX];
	char *values[PGQ_PARAMS_MAX];
	int lengths[PGQ_PARAMS_MAX];
	int formats[PGQ_PARAMS_MAX];
	PGresult *res;
	int row; /* the current row, -1 before the first step */
	unsigned char *blob;
	size_t blob_len;
};

/* This thread's: the last statement's changed rows. */
static __thread long long last_changes;

/* This thread's connections: its write's (pq_write()), its read's. */
static __thread PGconn *tls_writer;
static __thread PGconn *tls_reader;
static __thread int tls_read_depth;
static __thread bool tls_reader_borrowed;

static int unreachable(void)
{
	return err_set(LL_ESTORE, "The store's database cannot be reached.");
}

int pq_exec(PGconn *conn, const char *sql)
{
	PGresult *res;
	int rc = 0;

	if (!conn)
		return unreachable();
	if (conn == tls_reader && tls_read_depth > 0 && (!strcmp(sql, "BEGIN") || !strcmp(sql, "COMMIT"))) {
		if (tls_reader_borrowed)
			return 0;          /* a read inside a write: the write's transaction */
		if (!strcmp(sql, "BEGIN")) /* one snapshot for the read's statements */
			sql = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
	}
	if (pq_pipelined(conn)) { /* the write's: COMMIT reads it all, the rest is queued */
		if (!strcmp(sql, "COMMIT"))
			return pq_pipeline_commit(conn);
		if (!strcmp(sql, "ROLLBACK"))
			pq_pipeline_abort(conn); /* then the ROLLBACK below */
		else
			return pq_pipeline_send(conn, NULL, sql, 0, NULL, NULL, NULL, NULL, NULL);
	}
	res = PQexec(conn, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = pq_result_error(conn, res, sql);
	PQclear(res);
	return rc;
}

/* The name under which Q's text is prepared with Q's types on its
 * connection (pq_session_prepared()); NULL when it cannot be (then Q runs
 * unnamed), or with *RET_FAILED set when the PREPARE failed (logged). */
static const char *prepared_name(struct pgq *q, bool *ret_failed)
{
	PGresult *failed = NULL;
	const char *name = pq_session_prepared(q->session, q->text, q->conn, q->types, &failed);

	*ret_failed = failed != NULL;
	if (failed) {
		pq_result_error(q->conn, failed, q->text->sql);
		PQclear(failed);
	}
	return name;
}

/* pgq_step()'s first step of Q in this thread's pipelined write
 * (pg_pipeline.c): a statement that returns no rows is queued (DONE at
 * once, its failure seen by the next statement read or the COMMIT), any
 * other is sent with what is queued and read. A text new to the
 * connection is PREPAREd outside the pipeline first (once per
 * connection). */
static int step_pipelined(struct pgq *q)
{
	bool rowless = q->text ? q->text->rowless : pq_sql_rowless(q->sql);
	const char *name = NULL;
	bool failed = false;
	int rc;

	if (q->text && !(name = pq_session_find(q->text, q->types)) &&
	    q->text->variant_count < PQ_TEXT_VARIANTS) {
		if ((rc = pq_pipeline_pause(q->conn)) == 0)
			name = prepared_name(q, &failed);
		if (pq_pipeline_resume(q->conn) < 0 || rc < 0 || failed)
			return LL_ESTORE;
	}
	rc = pq_pipeline_send(q->conn, name, q->sql, q->nparams, q->types, (const char *const *)q->values,
			      q->lengths, q->formats, q->text ? q->text->sql : NULL);
	if (rc < 0)
		return rc;
	if (rowless) {
		last_changes = -1; /* not read: pgq_changes() reads it */
		return PGQ_DONE;
	}
	if ((rc = pq_pipeline_result(q->conn, &q->res)) < 0)
		return rc;
	last_changes = atoll(PQcmdTuples(q->res));
	q->row = 0;
	return PQntuples(q->res) > 0 ? PGQ_ROW : PGQ_DONE;
}

struct pgq *pq_prepare(PGconn *conn, const char *sql)
{
	struct pgq *q;

	if (!conn) {
		unreachable();
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q && (q->session = pq_session_of(conn)) && (q->text = pq_session_text(q->session, sql))) {
		q->sql = q->text->sql;
		q->nparams = q->text->nparams;
		q->used = q->text->used;
	} else if (q) {
		q->session = NULL;
	}
	if (!q || (!q->text && !(q->sql = pq_convert_params(sql, &q->nparams, &q->used))) ||
	    q->nparams > PGQ_PARAMS_MAX) {
		log_event(LOG_ERROR, "store_error", "sql", sql, "postgresql", "cannot prepare", NULL);
		pgq_free(q);
		err_set(LL_ESTORE, "The store failed.");
		return NULL;
	}
	q->conn = conn;
	q->row = -1;
	return q;
}

struct pgq *pq_cached(PGconn *conn, const char *sql)
{
	return pq_prepare(conn, sql);
}

void pq_release(PGconn *conn, struct pgq *stmt)
{
	(void)conn;
	pgq_free(stmt);
}

static void bind_value(struct pgq *q, int i, Oid type, char *value, int length, int format)
{
	if (i < 1 || i > PGQ_PARAMS_MAX) {
		free(value);
		return;
	}
	free(q->values[i - 1]);
	q->types[i - 1] = type;
	q->values[i - 1] = value;
	q->lengths[i - 1] = length;
	q->formats[i - 1] = format;
}

void pgq_bind_int64(struct pgq *q, int i, long long v)
{
	char text[24];

	snprintf(text, sizeof(text), "%lld", v);
	bind_value(q, i, OID_INT8, strdup(text), 0, 0);
}

void pgq_bind_double(struct pgq *q, int i, double v)
{
	char text[40];

	if (isnan(v)) {
		bind_value(q, i, OID_FLOAT8, NULL, 0, 0);
		return;
	}
	snprintf(text, sizeof(text), "%.17g", v);
	bind_value(q, i, OID_FLOAT8, strdup(text), 0, 0);
}

void pgq_bind_text(struct pgq *q, int i, const char *text, int n, void *destructor)
{
	(void)destructor;
	bind_value(q, i, OID_TEXT, text ? strndup(text, n < 0 ? strlen(text) : (size_t)n) : NULL, 0, 0);
}

void pgq_bind_blob(struct pgq *q, int i, const void *blob, int n, void *destructor)
{
	char *copy = blob ? malloc(n > 0 ? (size_t)n : 1) : NULL;

	(void)destructor;
	if (copy && n > 0)
		memcpy(copy, blob, (size_t)n);
	bind_value(q, i, OID_BYTEA, copy, n, 1);
}

void pgq_bind_null(struct pgq *q, int i)
{
	bind_value(q, i, 0, NULL, 0, 0);
}

int pgq_step(struct pgq *q)
{
	ExecStatusType status;

	if (q->res)
		return ++q->row < PQntuples(q->res) ? PGQ_ROW : PGQ_DONE;
	for (int i = 0; i < q->nparams; i++)
		if (!(q->used & 1u << i))
			q->types[i] = OID_TEXT; /* a number SQLite's text skipped: any type */
	const char *name = NULL;
	bool failed = false;
	if (pq_pipelined(q->conn))
		return step_pipelined(q);
	if (q->text && !(name = prepared_name(q, &failed)) && failed)
		return LL_ESTORE;
	if (name)
		q->res = PQexecPrepared(q->conn, name, q->nparams, (const char *const *)q->values, q->lengths,
					q->formats, 0);
	else
		q->res = PQexecParams(q->conn, q->sql, q->nparams, q->types, (const char *const *)q->values,
				      q->lengths, q->formats, 0);
	status = PQresultStatus(q->res);
	if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
		int rc = pq_result_error(q->conn, q->res, q->sql);
		PQclear(q->res);
		q->res = NULL;
		return rc;
	}
	last_changes = atoll(PQcmdTuples(q->res));
	q->row = 0;
	return PQntuples(q->res) > 0 ? PGQ_ROW : PGQ_DONE;
}

void pgq_reset(struct pgq *q)
{
	PQclear(q->res);
	q->res = NULL;
	q->row = -1;
}

void pgq_clear_bindings(struct pgq *q)
{
	for (int i = 0; i < PGQ_PARAMS_MAX; i++) {
		free(q->values[i]);
		q->values[i] = NULL;
		q->types[i] = 0;
	}
}

void pgq_free(struct pgq *q)
{
	if (!q)
		return;
	pgq_reset(q);
	pgq_clear_bindings(q);
	PQfreemem(q->blob);
	if (!q->text)
		free(q->sql);
	free(q);
}

/* Whether the current row has column COL. */
static bool has_value(struct pgq *q, int col)
{
	return q->res && q->row >= 0 && q->row < PQntuples(q->res) && col < PQnfields(q->res) &&
	       !PQgetisnull(q->res, q->row, col);
}

int pgq_column_type(struct pgq *q, int col)
{
	return has_value(q, col) ? PGQ_VALUE : PGQ_NULL;
}

long long pgq_column_int64(struct pgq *q, int col)
{
	const char *v;

	if (!has_value(q, col))
		return 0;
	v = PQgetvalue(q->res, q->row, col);
	if (v[0] == 't' || v[0] == 'f') /* a boolean, as SQLite's 1 or 0 */
		return v[0] == 't';
	return strchr(v, '.') || strchr(v, 'e') ? (long long)strtod(v, NULL) : strtoll(v, NULL, 10);
}

double pgq_column_double(struct pgq *q, int col)
{
	return has_value(q, col) ? strtod(PQgetvalue(q->res, q->row, col), NULL) : 0.0;
}

const char *pgq_column_text(struct pgq *q, int col)
{
	return has_value(q, col) ? PQgetvalue(q->res, q->row, col) : NULL;
}

const void *pgq_column_blob(struct pgq *q, int col)
{
	PQfreemem(q->blob);
	q->blob = NULL;
	q->blob_len = 0;
	if (!has_value(q, col))
		return NULL;
	q->blob = PQunescapeBytea((const unsigned char *)PQgetvalue(q->res, q->row, col), &q->blob_len);
	return q->blob;
}

int pgq_column_bytes(struct pgq *q, int col)
{
	size_t n = 0;
	unsigned char *b;

	if (!has_value(q, col))
		return 0;
	b = PQunescapeBytea((const unsigned char *)PQgetvalue(q->res, q->row, col), &n);
	PQfreemem(b);
	return (int)n;
}

long long pgq_changes(PGconn *conn)
{
	if (last_changes < 0 && pq_pipelined(conn))
		pq_pipeline_changes(conn, &last_changes);
	return last_changes < 0 ? 0 : last_changes;
}

/* ----------------------------------------------- this thread's connections */

PGconn *pq_writer(void)
{
	return tls_writer;
}

PGconn *pq_reader(void)
{
	return tls_reader;
}

void pq_writer_set(PGconn *conn)
{
	tls_writer = conn;
}

void pq_read_begin(struct store *s)
{
	if (tls_read_depth++ > 0)
		return;
	tls_reader_borrowed = tls_writer != NULL;
	tls_reader = tls_writer ? tls_writer : pg_pool_take(&s->pool);
}

void pq_read_end(struct store *s)
{
	if (--tls_read_depth > 0)
		return;
	if (!tls_reader_borrowed && tls_reader)
		pg_pool_give(&s->pool, tls_reader, false);
	tls_reader = NULL;
	tls_reader_borrowed = false;
}

/* ------------------------------------------------------- the helpers */

/* ---------------------------------------- the driver's statements */

/* The driver's statement functions are pg_sql.c's (struct pgq *). */
#define PGQ_CALL(name, params, args) \
	static void name params      \
	{                            \
		pgq_##name args;     \
	}
PGQ_CALL(bind_int64, (void *q, int i, long long v), (q, i, v))
PGQ_CALL(bind_double, (void *q, int i, double v), (q, i, v))
PGQ_CALL(bind_null, (void *q, int i), (q, i))
PGQ_CALL(reset, (void *q), (q))
#define PGQ_COLUMN(type, name)             \
	static type name(void *q, int col) \
	{                                  \
		return pgq_##name(q, col); \
	}
PGQ_COLUMN(long long, column_int64)
PGQ_COLUMN(double, column_double)
PGQ_COLUMN(const char *, column_text)

static void bind_text(void *stmt, int i, const char *text, int n)
{
	pgq_bind_text(stmt, i, text, n, PGQ_TRANSIENT);
}

static void bind_blob(void *stmt, int i, const void *blob, int n)
{
	pgq_bind_blob(stmt, i, blob, n, PGQ_TRANSIENT);
}

static int step(void *stmt)
{
	int rc = pgq_step(stmt);

	return rc == PGQ_ROW ? DB_ROW : rc == PGQ_DONE ? DB_DONE : rc;
}

static bool column_null(void *stmt, int col)
{
	return pgq_column_type(stmt, col) == PGQ_NULL;
}

static const void *column_blob(void *stmt, int col, int *ret_len)
{
	*ret_len = pgq_column_bytes(stmt, col);
	return pgq_column_blob(stmt, col);
}

static void *cached(void *conn, const char *sql)
{
	return pq_cached(conn, sql);
}

static void uncache(void *conn, void *stmt)
{
	pq_release(conn, stmt);
}

const struct db_stmt_ops pq_stmt_ops = DB_STMT_FUNCTIONS;
