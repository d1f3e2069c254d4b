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

static long long changes(struct store *s)
{
	(void)s;
	return pgq_changes(pq_writer());
}

const struct db_driver db_driver_pg = {
	DB_DRIVER_TABLE(DB_POSTGRESQL, pq_write, pq_call_submit, pq_call_end, &pq_stmt_ops),
	.row_locks = true,
	.before_commit = pq_before_commit,
	.tasks_ready = pq_notify_tasks,
};
