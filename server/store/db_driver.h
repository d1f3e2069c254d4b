/*
 * db_driver.h - what a store driver implements for the statement layer
 * (db.h): a connection per thread, a commit strategy and a dialect, at
 * the level of statements, results and transactions, never of domain
 * operations (as Dovecot's sql-api-private.h). The backend names its
 * driver in its struct store_backend (.db); db.c reaches it from the
 * handle. Implemented by sqlite/sqlite_db.c and pg/pg_db.c.
 *
 * Connections: a driver picks the connection of a statement itself: the
 * write's when the calling thread runs a write (SQLite's writer thread,
 * PostgreSQL's pq_write()), else the read's the thread took with
 * read_begin().
 */
#ifndef LOADLAB_SERVER_STORE_DB_DRIVER_H
#define LOADLAB_SERVER_STORE_DB_DRIVER_H

#include "db.h"

#include <stdbool.h>
#include <stddef.h>

/* A driver's statements (its native statement type behind void *): what
 * db.c's db_stmt calls, and what the driver's own raw helpers (sq_int(),
 * pq_int()) bind and step with through db_args.h. */
struct db_stmt_ops {
	void (*bind_int64)(void *stmt, int i, long long v);
	void (*bind_double)(void *stmt, int i, double v);
	/* N bytes of TEXT (-1: up to its NUL), copied; TEXT NULL binds a NULL
	 * of text type (PostgreSQL must know it). */
	void (*bind_text)(void *stmt, int i, const char *text, int n);
	void (*bind_blob)(void *stmt, int i, const void *blob, int n);
	void (*bind_null)(void *stmt, int i);

	/* DB_ROW, DB_DONE, or a negative LL_E* code with its message (logged). */
	int (*step)(void *stmt);
	void (*reset)(void *stmt);
	bool (*column_null)(void *stmt, int col);
	long long (*column_int64)(void *stmt, int col);
	double (*column_double)(void *stmt, int col);
	const char *(*column_text)(void *stmt, int col);
	const void *(*column_blob)(void *stmt, int col, int *ret_len);

	/* A statement for SQL (a literal) on the driver's connection CONN
	 * (sqlite3 *, PGconn *) from its statement cache, NULL (logged) on
	 * failure; uncache() gives it back: the drivers' raw helpers on a
	 * connection of their own (db_args_run()). */
	void *(*cached)(void *conn, const char *sql);
	void (*uncache)(void *conn, void *stmt);
};

struct db_driver {
	enum db_dialect dialect;
	/* This daemon is the database's only writer (it may remember what it
	 * read: store_token_cache.h). */
	bool single_writer;
	/* Writes run at once and lock the rows they read to change
	 * (db_row_locks(): PostgreSQL's SELECT ... FOR UPDATE). */
	bool row_locks;

	/* Runs FN(S, ARG) in a write transaction, returning once it is
	 * committed: SQLite's writer thread (group commit), PostgreSQL's
	 * transaction with retries. */
	int (*write)(struct store *s, int (*fn)(struct store *, void *), void *arg);
	/* A read's connection on this thread (nested: the outer one's; inside
	 * a write: the write's); with SNAPSHOT, one read transaction too. */
	void (*read_begin)(struct store *s, bool snapshot);
	void (*read_end)(struct store *s, bool snapshot);
	/* The async call (db.h): the size of the backend's struct store_call,
	 * its X_begin() (store_call_submit() as sqlite_int.h has it) and
	 * X_end(). */
	size_t call_size;
	int (*call_submit)(struct store *s, struct store_call *call, int (*fn)(struct store *, void *),
			   void *arg, cJSON **out, void (*done)(void *context), void *context,
			   struct store_call **ret_call);
	int (*call_end)(struct store_call *call, cJSON **ret);
	/* db_call_result(): where the op's result (an int) sits in the
	 * backend's struct store_call, once DONE ran. */
	size_t call_rc_offset;
	/* db_before_commit()'s deferral; NULL: FN runs at once. */
	int (*before_commit)(struct store *s, int (*fn)(struct store *, long long key, long long now),
			     long long key, long long now);
	/* db_tasks_ready(); NULL for a store with one daemon. */
	int (*tasks_ready)(struct store *s);

	/* A statement for SQL (a literal) on this thread's connection; NULL
	 * with LL_ESTORE set (logged) on failure. release() gives it back. */
	void *(*prepare)(struct store *s, const char *sql);
	void (*release)(struct store *s, void *stmt);

	const struct db_stmt_ops *stmt;
	/* Rows the last statement of this thread's write changed. */
	long long (*changes)(struct store *s);
};

/* The members every driver's table has, for a driver whose static
 * functions have the members' names (read_begin, read_end, prepare,
 * release, changes) and whose struct store_call has its op's rc in op.rc:
 * DIALECT, its WRITE, the async call's SUBMIT and END, and its statements
 * STMT. The rest (single_writer, row_locks, tasks_ready) follow it. */
#define DB_DRIVER_TABLE(dialect_, write_, submit, end, stmt_)                                                \
	.dialect = dialect_, .write = write_, .call_size = sizeof(struct store_call), .call_submit = submit, \
	.call_end = end, .call_rc_offset = offsetof(struct store_call, op.rc), .stmt = stmt_,                \
	.read_begin = read_begin, .read_end = read_end, .prepare = prepare, .release = release,              \
	.changes = changes

/* A driver's struct db_stmt_ops, for a driver whose static functions
 * have the members' names (bind_int64, ..., column_blob, cached,
 * uncache): one list for every driver. */
#define DB_STMT_FUNCTIONS                                                                                    \
	{                                                                                                    \
		.bind_int64 = bind_int64, .bind_double = bind_double, .bind_text = bind_text,                \
		.bind_blob = bind_blob, .bind_null = bind_null, .step = step, .reset = reset,                \
		.column_null = column_null, .column_int64 = column_int64, .column_double = column_double,    \
		.column_text = column_text, .column_blob = column_blob, .cached = cached, .uncache = uncache \
	}

/* The drivers (their backends name them in store_backend.db). */
extern const struct db_driver db_driver_sqlite;
extern const struct db_driver db_driver_pg;

#endif
