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
	return sq_stmt_ops.cached(connection(s), sql);
}

static void release(struct store *s, void *stmt)
{
	sq_release(connection(s), stmt);
}

static long long changes(struct store *s)
{
	return sqlite3_changes(s->writer);
}

const struct db_driver db_driver_sqlite = {
	DB_DRIVER_TABLE(DB_SQLITE, store_write, store_call_submit, store_call_end, &sq_stmt_ops),
	.single_writer = true,
};
