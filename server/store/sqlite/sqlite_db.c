/*
 * sqlite_db.c - SQLite's driver of the statement layer (db_driver.h): the
 * writer thread's connection inside a write (store_write(): group
 * commit), the reader under its lock elsewhere, the statement cache.
 */
#include "sqlite_int.h"

#include "store/db_driver.h"

#include "loadlab/err.h"

#include <string.h>

/* This thread's reads (nested ones share the outer's lock and snapshot). */
static __thread int read_depth;
static __thread bool read_snapshot;

static bool on_writer(const struct store *s)
{
	return pthread_equal(pthread_self(), s->writer_thread);
}

static sqlite3 *connection(struct store *s)
{
	return on_writer(s) ? s->writer : s->reader;
}

static void read_begin(struct store *s, bool snapshot)
{
	if (on_writer(s))
		return;
	if (read_depth++ == 0) {
		pthread_mutex_lock(&s->reader_lock);
		read_snapshot = snapshot && sq_exec(s->reader, "BEGIN") == 0;
	}
}

static void read_end(struct store *s, bool snapshot)
{
	(void)snapshot;
	if (on_writer(s) || --read_depth > 0)
		return;
	if (read_snapshot)
		sq_exec(s->reader, "COMMIT");
	read_snapshot = false;
	pthread_mutex_unlock(&s->reader_lock);
}

static void *prepare(struct store *s, const char *sql)
{
	sqlite3_stmt *stmt = sq_cached(connection(s), sql);

	if (!stmt)
		err_set(LL_ESTORE, "The store failed.");
	return stmt;
}

static void release(struct store *s, void *stmt)
{
	sq_release(connection(s), stmt);
}

static void bind_int64(void *stmt, int i, long long v)
{
	sqlite3_bind_int64(stmt, i, v);
}

static void bind_double(void *stmt, int i, double v)
{
	sqlite3_bind_double(stmt, i, v);
}

static void bind_text(void *stmt, int i, const char *text, int n)
{
	sqlite3_bind_text(stmt, i, text, n, SQLITE_TRANSIENT);
}

static void bind_blob(void *stmt, int i, const void *blob, int n)
{
	sqlite3_bind_blob(stmt, i, blob, n, SQLITE_TRANSIENT);
}

static void bind_null(void *stmt, int i)
{
	sqlite3_bind_null(stmt, i);
}

static int step(void *stmt)
{
	int rc = sqlite3_step(stmt);

	if (rc == SQLITE_ROW)
		return DB_ROW;
	if (rc == SQLITE_DONE)
		return DB_DONE;
	return sq_error(sqlite3_db_handle(stmt), sqlite3_sql(stmt));
}

static void reset(void *stmt)
{
	sqlite3_reset(stmt);
}

static bool column_null(void *stmt, int col)
{
	return sqlite3_column_type(stmt, col) == SQLITE_NULL;
}

static long long column_int64(void *stmt, int col)
{
	return sqlite3_column_int64(stmt, col);
}

static double column_double(void *stmt, int col)
{
	return sqlite3_column_double(stmt, col);
}

static const char *column_text(void *stmt, int col)
{
	return (const char *)sqlite3_column_text(stmt, col);
}

static const void *column_blob(void *stmt, int col, int *ret_len)
{
	const void *blob = sqlite3_column_blob(stmt, col);

	*ret_len = sqlite3_column_bytes(stmt, col);
	return blob;
}

static long long changes(struct store *s)
{
	return sqlite3_changes(s->writer);
}

static int call_result(const struct store_call *call)
{
	return call->op.rc;
}

const struct db_driver db_driver_sqlite = {
	.dialect = DB_SQLITE,
	.single_writer = true,
	.write = store_write,
	.call_size = sizeof(struct store_call),
	.call_submit = store_call_submit,
	.call_end = store_call_end,
	DB_DRIVER_FUNCTIONS,
};
