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

static void bind_int64(void *stmt, int i, long long v)
{
	pgq_bind_int64(stmt, i, v);
}

static void bind_double(void *stmt, int i, double v)
{
	pgq_bind_double(stmt, i, v);
}

static void bind_text(void *stmt, int i, const char *text)
{
	pgq_bind_text(stmt, i, text, -1, PGQ_TRANSIENT);
}

static void bind_blob(void *stmt, int i, const void *blob, int n)
{
	pgq_bind_blob(stmt, i, blob, n, PGQ_TRANSIENT);
}

static void bind_null(void *stmt, int i)
{
	pgq_bind_null(stmt, i);
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

static long long column_int64(void *stmt, int col)
{
	return pgq_column_int64(stmt, col);
}

static double column_double(void *stmt, int col)
{
	return pgq_column_double(stmt, col);
}

static const char *column_text(void *stmt, int col)
{
	return pgq_column_text(stmt, col);
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

const struct db_driver db_driver_pg = {
	.dialect = DB_POSTGRESQL,
	.write = pq_write,
	.read_begin = read_begin,
	.read_end = read_end,
	.prepare = prepare,
	.release = release,
	.bind_int64 = bind_int64,
	.bind_double = bind_double,
	.bind_text = bind_text,
	.bind_blob = bind_blob,
	.bind_null = bind_null,
	.step = step,
	.column_null = column_null,
	.column_int64 = column_int64,
	.column_double = column_double,
	.column_text = column_text,
	.column_blob = column_blob,
	.changes = changes,
};
