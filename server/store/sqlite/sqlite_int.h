/*
 * sqlite_int.h - what the files of the SQLite backend (store_backend.h)
 * share: the struct behind store.h's handle, the writer's queue of
 * operations, the SQL helpers, and each file's operations for
 * sqlite_backend.c's table. Only store/sqlite/ includes it.
 *
 * Files: sqlite_writer.c (opening, the writer and syncer threads, stats),
 * sqlite_migrate.c (the schema), sqlite_sql.c (SQL helpers, the
 * statement cache), sqlite_db.c (the statement layer's driver, db_driver.h,
 * over which store/store_<resource>.c are written once), the webhook queue
 * (sqlite_webhooks.c), backup and restore (sqlite_backup.c), retention
 * and compaction (sqlite_retention.c, sqlite_auto_vacuum.c), and
 * sqlite_backend.c, the table that names them.
 *
 * Threads: s->writer is used only inside an op run by the writer thread
 * (store_write()); s->reader only with s->reader_lock held.
 */
#ifndef LOADLAB_SERVER_STORE_INT_H
#define LOADLAB_SERVER_STORE_INT_H

#include "store/db.h"
#include "store/db_args.h"
#include "store/store_agents.h"
#include "store/store_jobs.h"
#include "store/store_backend.h"
#include "store/store_cache.h"

#include <pthread.h>
#include <sqlite3.h>

/* At most this many writes share one transaction. */
#define STORE_BATCH_MAX 256

/* The writer checkpoints its WAL into the database once it holds this
 * many pages (32 MiB; SQLite's default is 1,000): the same hot pages
 * (the tasks' indexes, the agents) are rewritten by every batch, and a
 * checkpoint copies each once, so rarer checkpoints copy far less. */
#define STORE_CHECKPOINT_PAGES_TEXT "8000"

/* One write waiting for the writer thread. */
struct store_op {
	int (*fn)(struct store *store, void *arg);
	void *arg;
	int rc;
	bool done;
	pthread_cond_t done_cond; /* store_write(): signalled when done */
	store_done_fn notify;     /* store_submit() of a call: called instead */
	bool alone;               /* store_write_alone(): run outside any transaction */
	void *notify_context;
	char message[256];
	struct store_op *next;
};

/* A write that does not block its caller (store_async.h): the op, and
 * where its fn builds the answer (deleted with the call unless taken). */
struct store_call {
	struct store_base base; /* first: the backend (store_backend.h) */
	struct store_op op;
	cJSON **out;
};

struct store {
	struct store_base base; /* first: the backend (store_backend.h) */
	sqlite3 *writer;
	sqlite3 *reader;
	pthread_mutex_t reader_lock;
	struct store_options options;

	pthread_t writer_thread;
	pthread_mutex_t queue_lock;
	pthread_cond_t queue_cond;
	struct store_op *head, *tail;
	bool stopping;
	long long commits, committed_ops, syncs;

	/* Committed batches waiting for the syncer's fsync (queue_lock). */
	pthread_t syncer_thread;
	pthread_cond_t sync_cond;
	struct store_op *sync_head, *sync_tail;
	bool sync_stopping;
	bool syncing;      /* the syncer is making a batch durable */
	sqlite3_file *wal; /* the writer's WAL, which the syncer fsyncs */
};

/* sqlite_migrate.c: the schema's versions. sqlite_refuse_newer() is
 * LL_ESTORE, naming both versions, when DB was written by a newer loadlabd
 * (checked before anything is written to it); sqlite_migrate() applies
 * the migrations past DB's user_version, each in its own transaction. */
int sqlite_refuse_newer(sqlite3 *db);
int sqlite_migrate(sqlite3 *db);

/* --- the backend's operations (sqlite_backend.c names them) --- */

/* store.h's store_open() .. store_stats(), store_async.h's store_call_free(),
 * for this backend (sqlite_writer.c). */
STORE_HANDLE_DECLARE(sqlite);

/* sqlite_backup.c: store_backup(), store_restore() */
int sqlite_backup(const char *location, const char *to, struct store_counts *ret_counts);
int sqlite_restore(const char *from, const char *location, struct store_counts *ret_counts);

/* sqlite_webhooks.c */
int sqlite_webhook_due(struct store *store, long long now, int limit, cJSON **ret_due);

/* sqlite_retention.c */
int sqlite_retention_apply(struct store *store, long long now, int limit, int *ret_pruned);
int sqlite_compact(struct store *store, bool full, long long *ret_bytes_before, long long *ret_bytes_after);
/* Makes a store made without auto_vacuum=INCREMENTAL (by an earlier
 * loadlabd) one whose free pages a compaction can return, by one VACUUM,
 * logged (store_vacuumed), which rewrites the whole file once; a store in
 * that mode already is left alone (sqlite_auto_vacuum.c). */
int compaction_prepare(sqlite3 *db);

/* --- the writer (sqlite_writer.c) --- */

/* Runs FN(store, ARG) in the writer's next transaction, inside its own
 * savepoint, and waits until it is committed. Returns FN's result, or
 * LL_ESTORE if the commit failed; on failure the message is copied to the
 * calling thread. */
int store_write(struct store *store, int (*fn)(struct store *, void *), void *arg);

/* store_write() of an op that must run outside a transaction (VACUUM):
 * the writer runs it alone, between two batches; the writes queued behind
 * it wait until it ends. */
int store_write_alone(struct store *store, int (*fn)(struct store *, void *), void *arg);

/* Runs FN(store, ARG) as CALL's op, its answer built in *OUT: without DONE,
 * as store_write() (returns once it is committed, with its result); with
 * DONE, queues it and returns 0 at once, and the writer thread calls
 * DONE(CONTEXT) once the op is committed or failed. *RET_CALL is CALL
 * then, and store_call_end() gives the result. On a refusal (the store is
 * closing) CALL is freed, DONE never called and the error returned: the
 * X_begin() of every store_async.h call. */
int store_call_submit(struct store *store, struct store_call *call, int (*fn)(struct store *, void *),
		      void *arg, cJSON **out, store_done_fn done, void *context,
		      struct store_call **ret_call);

/* The result of CALL's committed op (its message set on this thread on
 * failure) and its answer to *RET (NULL on failure); frees CALL. */
int store_call_end(struct store_call *call, cJSON **ret);

/* --- SQL helpers (sqlite_sql.c) --- */

/* The message of a write refused because the store's disk is full. */
#define STORE_FULL_MESSAGE                                                                            \
	"The disk that holds the store is full: the write was refused and nothing of it was stored; " \
	"try again once space is freed."

/* True when DB's last error says its disk (or the user's quota) is full:
 * SQLITE_FULL, or an I/O error whose errno is ENOSPC or EDQUOT. */
bool sq_disk_full(sqlite3 *db);

/* Logs the SQLite error of DB and returns LL_ESTORE with a message
 * (LL_ENOSPACE when sq_disk_full()). */
int sq_error(sqlite3 *db, const char *what);

/* Runs SQL text without arguments or rows (BEGIN, PRAGMA, DDL). */
int sq_exec(sqlite3 *db, const char *sql);

/* A prepared statement for SQL, NULL (logged) on failure; the caller
 * finalizes it. */
sqlite3_stmt *sq_prepare(sqlite3 *db, const char *sql);

/* Keeps the statements of connection DB prepared between calls (after
 * it is opened), or stops and finalizes them (before it is closed). A
 * connection that finds no free slot prepares every time. */
void sq_cache_attach(sqlite3 *db);
void sq_cache_detach(sqlite3 *db);

/* A statement for SQL, which must be a string literal (its address is the
 * key), from DB's cache when it has one that is not in use, else newly
 * prepared; NULL (logged) on failure. Give it back with sq_release(),
 * which resets it and clears its bindings (or finalizes a statement the
 * cache did not keep); never finalize it. */
sqlite3_stmt *sq_cached(sqlite3 *db, const char *sql);
void sq_release(sqlite3 *db, sqlite3_stmt *stmt);

/* sq_exec() of a literal without arguments through the cache. */
int sq_exec_cached(sqlite3 *db, const char *sql);

/* SQLite's statements for the statement layer (db_driver.h), used by
 * sqlite_db.c's driver and sq_run()/sq_int(). */
extern const struct db_stmt_ops sq_stmt_ops;

/* sq_run() and sq_int() take SQL literals and use the statement cache
 * (db_args_on()), with
 * the arguments of TYPES (db.h's db_bind()). */

/* Runs a statement that returns no rows. */
#define sq_run(db, sql, ...) db_args_on(&sq_stmt_ops, db, NULL, 0, sql, __VA_ARGS__)

/* A single integer from a query (first column of first row);
 * DEFAULT_VALUE when there is no row or it is NULL. */
#define sq_int(db, ret, default_value, sql, ...) \
	db_args_on(&sq_stmt_ops, db, ret, default_value, sql, __VA_ARGS__)

#endif
