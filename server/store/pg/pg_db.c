/*
 * pg_db.c - PostgreSQL's driver of the statement layer (db_driver.h), on
 * pg_sql.c's statements: this thread's write connection inside a write
 * (pq_write(): a transaction of its own, retried), a connection of the
 * pool for a read, '?' parameters turned into $N by pg_sql.c.
 */
#include "pg_int.h"

#include "store/db_driver.h"

/* This thread's reads (nested ones share the outer's snapshot). */
static __thread int read_depth;
static __thread bool read_snapshot;

static PGconn *connection(void)
{
	return pq_writer() ? pq_writer() : pq_reader();
}

static void read_begin(struct store *s, bool snapshot)
{
	pq_read_begin(s);
	if (read_depth++ == 0)
		read_snapshot = snapshot && pq_exec(pq_reader(), "BEGIN") == 0;
}

static void read_end(struct store *s, bool snapshot)
{
	(void)snapshot;
	if (--read_depth == 0 && read_snapshot) {
		pq_exec(pq_reader(), "COMMIT");
		read_snapshot = false;
	}
	pq_read_end(s);
}

static void *prepare(struct store *s, const char *sql)
{
	(void)s;
	return pq_cached(connection(), sql);
}

static void release(struct store *s, void *stmt)
{
	(void)s;
	pq_release(connection(), stmt);
}

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

static long long changes(struct store *s)
{
	(void)s;
	return pgq_changes(pq_writer());
}

static int call_result(const struct store_call *call)
{
	return call->op.rc;
}

const struct db_driver db_driver_pg = {
	.dialect = DB_POSTGRESQL,
	.row_locks = true,
	.write = pq_write,
	.call_size = sizeof(struct store_call),
	.call_submit = pq_call_submit,
	.call_end = pq_call_end,
	.before_commit = pq_before_commit,
	.tasks_ready = pq_notify_tasks,
	DB_DRIVER_FUNCTIONS,
};
