/*
 * db.h - the statement layer the store's resources are written on once,
 * for every driver (db_driver.h: SQLite's, PostgreSQL's): statements bound
 * by position, rows read into struct column tables, read and write
 * transactions. A resource file (store_<resource>.c) includes this header
 * and store_backend.h, never a driver's.
 *
 * SQL is written once, with '?' or '?N' parameters (a driver turns them
 * into its own), in forms both dialects take (INSERT ... RETURNING, ON
 * CONFLICT, ...). Where the text really differs (JSON extraction, row
 * locks), db_sql() picks the dialect's text; a statement one dialect
 * does not need is NULL there, and db_run() of NULL does nothing.
 *
 * Connections: inside a write (db_write(), run by the driver: SQLite's
 * writer thread, PostgreSQL's transaction on the caller's thread) every
 * statement uses the write's connection; elsewhere a statement needs a
 * read, db_read_begin() .. db_read_end() (db_read_rows() and db_row_read()
 * take one of their own). Errors: 0 or a negative LL_E* code with its
 * message set (err.h); a failed statement is logged by its driver.
 *
 * A failed step is sticky: the statement and the read keep the first
 * failure of their steps, and their ends return it (db_finish(),
 * db_read_end(), db_snapshot_end()), so that a reader looping "while
 * (db_step(st) == DB_ROW)" learns that its list was cut short instead of
 * answering part of it as the whole.
 *
 * Typical use:
 *	static int op(struct store *s, void *arg) { return db_run(s, "UPDATE t SET a = ? WHERE id = ?",
 *	                                                          "ti", text, id); }
 *	rc = db_write(s, op, &args);
 */
#ifndef LOADLAB_SERVER_STORE_DB_H
#define LOADLAB_SERVER_STORE_DB_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct store;
struct db_driver;

/* db_step()'s answers besides a negative LL_E* code. */
#define DB_ROW 100
#define DB_DONE 101

/* A statement (on the stack): what db_prepare() made on this thread's
 * connection, and its driver. The members are the layer's own. */
struct db_stmt {
	struct store *store;
	const struct db_driver *driver;
	void *native; /* the driver's statement; NULL when none was made */
	int failed;   /* the first failed step's code; 0 when none */
};

/* The dialect of S's driver. */
enum db_dialect {
	DB_SQLITE,
	DB_POSTGRESQL,
};
enum db_dialect db_dialect(const struct store *s);

/* The text for S's dialect: SQLITE's or POSTGRESQL's (literals, or NULL
 * for "nothing to run there"). */
const char *db_sql(const struct store *s, const char *sqlite, const char *postgresql);

/* Whether S's writes run at once (PostgreSQL's transactions, of this
 * daemon and of others), so that a write reads the rows it will change
 * with a row lock: DB_SQL_FOR_UPDATE() waits for the transaction that
 * holds the row, DB_SQL_SKIP_LOCKED() passes it by. SQLite's writer
 * thread runs one write at a time: the same text without the lock. SQL
 * must be a string literal (the result is one too). */
bool db_row_locks(const struct store *s);
#define DB_SQL_FOR_UPDATE(s, sql) (db_row_locks(s) ? sql " FOR UPDATE" : sql)
#define DB_SQL_SKIP_LOCKED(s, sql) (db_row_locks(s) ? sql " FOR UPDATE SKIP LOCKED" : sql)

/* Whether this daemon is S's only writer (SQLite): no other daemon is told
 * of anything (db_tasks_ready() does nothing). */
bool db_single_writer(const struct store *s);

/* --- transactions --- */

/* Runs FN(S, ARG) in a write transaction and returns once it is committed
 * (FN's result), or rolled back when FN returns a negative code. */
int db_write(struct store *s, int (*fn)(struct store *, void *), void *arg);

/* db_write() for an FN that builds its answer in *OUT: on success the
 * answer goes to *RET, on failure it is deleted. */
int db_write_answer(struct store *s, int (*fn)(struct store *, void *), void *arg, cJSON **out, cJSON **ret);

/* The async call (store_async.h's X_begin() and X_end()): db_call_start()
 * makes a call whose op's argument is a copy of the ARG_SIZE bytes at ARG,
 * and runs FN(S, copy) as a write that does not block its caller when DONE
 * is given (DONE(CONTEXT) once it is committed or failed), or as
 * db_write() without; the answer FN builds in the cJSON * member at
 * OUT_OFFSET of the copy (offsetof()). On a refusal (out of memory, the
 * store closing) the call is freed and the error returned.
 * db_call_arg() is the argument of CALL, for X_end(); db_call_end() gives
 * the op's result and answer and frees CALL. */
struct store_call;
int db_call_start(struct store *s, const void *arg, size_t arg_size, size_t out_offset,
		  int (*fn)(struct store *, void *), void (*done)(void *context), void *context,
		  struct store_call **ret_call);
void *db_call_arg(struct store_call *call);
int db_call_end(struct store_call *call, cJSON **ret);
/* The result of CALL's op once DONE ran (committed, or failed): what
 * db_call_end() will return. */
int db_call_result(const struct store_call *call);

/* A read on this thread: its statements until db_read_end() use one
 * connection (a write's, inside one). Nested reads share the outer one.
 * db_read_end() returns the first failure of a step since the outermost
 * read began (a negative LL_E* code), else 0. */
void db_read_begin(struct store *s);
int db_read_end(struct store *s);

/* db_read_begin() with one snapshot for all its statements (a read
 * transaction); db_snapshot_end() ends both. */
void db_snapshot_begin(struct store *s);
int db_snapshot_end(struct store *s);

/* Says, inside a write, that it makes tasks ready to lease: other
 * daemons sharing the database hear of it at the commit (PostgreSQL's
 * NOTIFY); nothing to do for a store with one daemon. */
int db_tasks_ready(struct store *s);

/* Runs FN(S, KEY, NOW) in this write, now or just before it commits:
 * a driver with several writers on one database (PostgreSQL) defers it
 * and runs it once per (FN, KEY) asked in the write's transaction (a
 * batch of calls: once for all), in increasing KEY order, with the
 * latest NOW; a driver with one writer (SQLite) runs it at once. For work
 * that locks a row other writes share (a job's, job_refresh_state()) and
 * whose effect the write does not read back: taken last and in one
 * order, such locks are held only for the commit and never deadlock.
 * FN's failure fails the write. */
int db_before_commit(struct store *s, int (*fn)(struct store *, long long key, long long now), long long key,
		     long long now);

/* --- statements --- */

/* Prepares SQL (a literal: drivers cache by its address) on this thread's
 * connection into *RET: 0, or LL_ESTORE (RET->native NULL). */
int db_prepare(struct store *s, const char *sql, struct db_stmt *ret);
/* db_prepare() into BUF: BUF, or NULL on failure (BUF->native NULL). */
struct db_stmt *db_statement(struct store *s, struct db_stmt *buf, const char *sql);
/* Gives ST back (reset, bindings cleared); nothing for a failed prepare
 * or a NULL ST. Returns the first failure of ST's steps (a negative LL_E*
 * code), else 0. */
int db_finish(struct db_stmt *st);
/* db_finish() at the end of a read that has RC so far: RC when it is
 * negative, else db_finish()'s answer. */
int db_finish_read(struct db_stmt *st, int rc);

/* Parameters by position from 1. Text is copied; NULL text binds NULL. */
void db_bind_int64(struct db_stmt *st, int i, long long v);
void db_bind_double(struct db_stmt *st, int i, double v);
void db_bind_text(struct db_stmt *st, int i, const char *text);
/* The N bytes of TEXT (no NUL among them; N below INT_MAX), copied. */
void db_bind_text_len(struct db_stmt *st, int i, const char *text, size_t n);
void db_bind_blob(struct db_stmt *st, int i, const void *blob, int n);
void db_bind_null(struct db_stmt *st, int i);

/* Parameters 1.. by TYPES, one letter each: 'i' long long, 'n' long long
 * where 0 binds NULL, 'd' double (NaN binds NULL), 't' text (NULL binds
 * NULL), 'b' a STORE_TOKEN_HASH_SIZE-byte blob. */
void db_bind(struct db_stmt *st, const char *types, ...);

/* DB_ROW (a row to read), DB_DONE, or a negative LL_E* code (logged; kept
 * by ST and the read as their first failure). */
int db_step(struct db_stmt *st);
/* Makes ST ready to run again: its bindings stay until bound anew. */
void db_reset(struct db_stmt *st);

/* The current row's column COL (from 0). */
bool db_column_null(const struct db_stmt *st, int col);
long long db_column_int64(const struct db_stmt *st, int col);
double db_column_double(const struct db_stmt *st, int col);
/* NULL for a NULL column; valid until the next step or db_finish(). */
const char *db_column_text(const struct db_stmt *st, int col);
/* A blob column's bytes and their count; valid as db_column_text(). */
const void *db_column_blob(const struct db_stmt *st, int col, int *ret_len);

/* Rows the last statement of this thread's write changed. */
long long db_changes(struct store *s);

/* --- statements in one call (SQL a literal, arguments by TYPES as db_bind()) --- */

/* Runs a statement that returns no rows; SQL NULL does nothing (0). */
int db_run(struct store *s, const char *sql, const char *types, ...);

/* A single integer from a query (first column of first row) in *RET;
 * DEFAULT_VALUE when there is no row or it is NULL. */
int db_int(struct store *s, long long *ret, long long default_value, const char *sql, const char *types, ...);

/* Runs SQL (its one parameter is ID) and calls READ(CONTEXT, row) on the
 * first row, returning READ's result. Without a row: LL_ENOTFOUND, with
 * the message "No WHAT has id ID." when WHAT is not NULL. db_row_read()
 * does it in a read of its own. */
int db_row_by_id(struct store *s, const char *sql, long long id, const char *what,
		 int (*read)(void *context, struct db_stmt *row), void *context);
int db_row_read(struct store *s, const char *sql, long long id, const char *what,
		int (*read)(void *context, struct db_stmt *row), void *context);

/* Calls ADD(CONTEXT, row) for every row of SQL with the arguments of
 * TYPES, in a read of its own (the write's inside one); 0 or the failure. */
int db_read_rows(struct store *s, const char *sql, void (*add)(void *context, struct db_stmt *row),
		 void *context, const char *types, ...);
/* db_read_rows() of SQL without parameters. */
int db_read_each(struct store *s, const char *sql, void (*add)(void *context, struct db_stmt *row),
		 void *context);

/* --- JSON from columns --- */

/* The JSON text of column COL parsed; an empty object when NULL or bad. */
cJSON *db_column_json(const struct db_stmt *row, int col);

/* OBJ[KEY] = column COL as an RFC 3339 time (ms since the epoch), or null. */
void db_add_time(cJSON *obj, const char *key, const struct db_stmt *row, int col);
/* OBJ[KEY] = MS as an RFC 3339 time. */
void db_add_time_value(cJSON *obj, const char *key, long long ms);
/* OBJ[KEY] = column COL as text, or null. */
void db_add_text_or_null(cJSON *obj, const char *key, const struct db_stmt *row, int col);
/* OBJ[KEY] = column COL as a number, or null. */
void db_add_int_or_null(cJSON *obj, const char *key, const struct db_stmt *row, int col);

/* How db_add_columns() turns a column into a member. */
enum column_kind {
	COLUMN_INT,          /* a number */
	COLUMN_TEXT,         /* a string */
	COLUMN_TEXT_OR_NULL, /* db_add_text_or_null() */
	COLUMN_INT_OR_NULL,  /* db_add_int_or_null() */
	COLUMN_TIME,         /* db_add_time() */
};

struct column {
	const char *key;
	enum column_kind kind;
};

/* Adds the columns of ROW, from FIRST on, to OBJ in order: column FIRST + i
 * becomes member COLUMNS[i], up to the entry whose key is NULL. */
void db_add_columns(cJSON *obj, const struct db_stmt *row, int first, const struct column *columns);

/* The end of a function that built OUT for its caller: OUT goes to *RET
 * when RC is not negative, else it is deleted; returns RC, or 0. */
int db_answer(int rc, cJSON *out, cJSON **ret);

/* Logs a state change EVENT of the object ID_KEY=ID; REASON may be NULL. */
void db_log_state(const char *event, const char *id_key, long long id, const char *from, const char *to,
		  const char *reason);

#endif
