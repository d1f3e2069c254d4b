/*
 * pg_int.h - what the files of the PostgreSQL backend (store_backend.h)
 * share: the struct behind store.h's handle, the pool of connections, the
 * statement layer (struct pgq), and each file's
 * operations for pg_backend.c's table. Only store/pg/ includes it.
 *
 * Files: pg_conn.c (the pool: bounded, reconnecting with backoff),
 * pg_migrate.c (the schema versions, under an advisory lock), pg_store.c
 * (open, close, checks, stats), pg_write.c (the transactions of writes,
 * and what they defer to their commit), pg_pipeline.c (a write's
 * statements in libpq's pipeline mode), pg_sql.c (statements), pg_error.c (failures: the log, the SQLSTATE), pg_session.c
 * (each pool connection's prepared statements), pg_db.c (the statement layer's
 * driver, db_driver.h, over which store/store_<resource>.c are written
 * once), the webhook queue's claims (pg_webhooks.c), pg_watch.c (LISTEN/NOTIFY:
 * the task watch), pg_role.c (roles held by one daemon: advisory locks),
 * and pg_backend.c, the table.
 *
 * Threads: every op but the async calls (store_async.h: the writer
 * thread, struct pg_writer) runs on its caller's thread with a connection
 * of the pool. A write takes one for its transaction (pq_write(): BEGIN, the op,
 * what it deferred (pq_before_commit()), COMMIT, or ROLLBACK when it
 * fails; pipelined), which the op reaches as pq_writer();
 * a read takes one between pq_read_begin() and pq_read_end(), reached as
 * pq_reader() (a read inside a write uses the write's). Both are the
 * calling thread's own (thread-local), so that the resources' code reads
 * as SQLite's, whose writer thread and reader lock they replace. Several
 * daemons may share the database: a lease takes its task with SELECT ...
 * FOR UPDATE SKIP LOCKED, and every later write of an attempt names the
 * attempt (store/store_lease.c, store/store_tasks.c).
 */
#ifndef LOADLAB_SERVER_STORE_PG_INT_H
#define LOADLAB_SERVER_STORE_PG_INT_H

#include "store/db_args.h"
#include "store/store_backend.h"
#include "store/store_jobs.h"
#include "store/store_cache.h"

#include <libpq-fe.h>
#include <pthread.h>

/* Connections a daemon keeps at most (its pool); the default, and what
 * the URI's "pool_size=N" parameter may ask for (1..PG_POOL_MAX). */
#define PG_POOL_DEFAULT 8
#define PG_POOL_MAX 64
/* Seconds libpq waits for a connection (connect_timeout), and the
 * statement_timeout every session sets, in ms. */
#define PG_CONNECT_TIMEOUT_S 3
#define PG_STATEMENT_TIMEOUT_MS 10000
/* How long an op waits for a free connection of the pool. */
#define PG_POOL_WAIT_MS 5000
/* After a failed connection, none is tried for this long, doubling per
 * failure up to the max: requests meanwhile fail at once (503). */
#define PG_BACKOFF_MIN_MS 100
#define PG_BACKOFF_MAX_MS 5000

/* The backoff after one more failure to connect, from MS: doubled, at
 * most PG_BACKOFF_MAX_MS (the pool, the task watch and the roles). */
static inline long long pg_backoff_next(long long ms)
{
	return ms * 2 > PG_BACKOFF_MAX_MS ? PG_BACKOFF_MAX_MS : ms * 2;
}
/* A write that meets a deadlock or a serialization failure (another
 * replica's transaction) runs again, this many times at most. */
#define PG_WRITE_RETRIES 3

/* Webhook deliveries one daemon holds claimed at most (the delivery
 * pool asks for at most 64 at a time, webhook_delivery.c). */
#define PG_WEBHOOK_CLAIMS_MAX 256

struct pg_pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *conninfo; /* libpq's URI or key=value string */
	int size;       /* connections at most */
	int open;       /* connections made (idle and taken) */
	int idle_count;
	PGconn *idle[PG_POOL_MAX];
	long long retry_at_ms; /* no connection tried before (backoff) */
	long long backoff_ms;
	long long connects, connect_failures;
};

/* A new connection to the pool's database outside the pool (the task
 * watch's, pg_watch.c); NULL (logged) when it cannot be made. Its notices
 * go to the log (pg_notices_to_log()). The pool's connections are made
 * by it too. */
PGconn *pg_pool_connect(const struct pg_pool *pool);

/* Sends what the server says on CONN outside a result (NOTICE, WARNING:
 * "relation ... already exists, skipping") to the log as one event
 * "store_notice" {"severity", "message"} (warn for a WARNING, info
 * otherwise), instead of libpq's raw line on stderr; the passwords of
 * CONNINFO (borrowed for CONN's life) hidden in it (redact.h). Every
 * connection loadlabd opens calls it. */
void pg_notices_to_log(PGconn *conn, const char *conninfo);

/* The channel that writes making tasks ready NOTIFY (pg_watch.c). */
#define PG_TASKS_CHANNEL "loadlab_tasks"

/* The task watch (store_watch_tasks()): one connection outside the pool
 * that LISTENs on PG_TASKS_CHANNEL, on a thread of its own (pg_watch.c). */
struct pg_watch {
	pthread_mutex_t lock; /* start and stop */
	pthread_t thread;
	bool running;
	int stop_pipe[2]; /* written to stop the thread */
	store_watch_fn fn;
	void *arg;
	/* This daemon's notifications' payload: its own are not news to it
	 * (the writer's caller wakes its waiters). */
	char token[48];
};

/* The roles this daemon holds (store_role_take()): advisory locks on one
 * connection outside the pool (pg_role.c). */
#define PG_ROLES_MAX 4
struct pg_roles {
	pthread_mutex_t lock;
	PGconn *conn;
	char held[PG_ROLES_MAX][32];
	int held_count;
	long long retry_at_ms, backoff_ms;
};

void pg_roles_init(struct store *s);
void pg_roles_close(struct store *s);
int pg_role_take(struct store *s, const char *role, bool *ret_held);

/* Sets up S's watch (not running) and its token; pg_watch_stop() ends it. */
void pg_watch_init(struct store *s);
void pg_watch_stop(struct store *s);
int pg_watch_tasks(struct store *s, store_watch_fn fn, void *arg);
/* NOTIFY PG_TASKS_CHANNEL in the write running on this thread (delivered
 * at its commit, once per transaction however often it is called). */
int pq_notify_tasks(struct store *s);

/* Makes the pool for CONNINFO of SIZE connections (none made yet). */
int pg_pool_init(struct pg_pool *pool, const char *conninfo, int size);
void pg_pool_destroy(struct pg_pool *pool);
/* A connection of the pool (an idle one, or a new one while fewer than
 * SIZE are open), waiting up to PG_POOL_WAIT_MS for one to be given back;
 * NULL with LL_ESTORE set when the database cannot be reached (within the
 * backoff after a failure, at once). */
PGconn *pg_pool_take(struct pg_pool *pool);
/* Gives CONN back; a connection that is broken (or BROKEN) is closed. */
void pg_pool_give(struct pg_pool *pool, PGconn *conn, bool broken);

/* The prepared statements of a connection of the pool (pg_session.c):
 * made when the pool opens CONN, dropped before it closes it. pq_cached()
 * prepares each text once per connection; on a connection without a
 * session (the watch's, the roles', migrate's, import's) it runs unnamed. */
void pq_session_open(PGconn *conn);
void pq_session_close(PGconn *conn);

/* Brings the database to the latest schema version, once per database
 * for all daemons (pg_advisory_lock) (pg_migrate.c). */
int pg_migrate(PGconn *conn);
/* The schema version pg_migrate() gives. */
int pg_schema_latest(void);

/* One write (pq_write()): its result, its message. */
struct store_op {
	int rc;
	char message[256];
};

/* A write that does not block its caller (store_async.h): the op's result
 * and the answer it built (deleted with the call unless taken). The write
 * runs within X_begin(), and DONE is called before X_begin() returns
 * (http_write_committed() takes either order). */
struct store_call {
	struct store_base base; /* first: the backend (store_backend.h) */
	struct store_op op;
	cJSON **out;
	/* queued for the writer (pg_write.c) */
	int (*fn)(struct store *, void *);
	void *arg;
	store_done_fn done;
	void *context;
	struct store_call *next;
};

/* The async calls' writer (pg_write.c): one lane per kind of call (its
 * op function: leases, heartbeats, results), up to PG_WRITER_LANES, each a
 * queue and PG_LANE_THREADS threads, each of which takes up to
 * PG_BATCH_MAX queued calls at once and runs them in ONE transaction, one
 * commit (one WAL flush) for all; DONE of each after the commit. An HTTP
 * thread only queues. A batch where a call fails is rolled back whole and
 * its calls run again each alone (pq_write()), so a call fails only for
 * itself. Threads of one lane do not deadlock on the jobs' rows: a
 * batch locks those last, in id order (job_refresh_state() through
 * pq_before_commit()); before that, two batches of results locked the
 * same jobs in different orders (PostgreSQL's deadlock_timeout, 1 s, per
 * deadlock). One thread a lane: two (one batch running while the other's
 * commit waits for its flush) measured no faster in bench_pg (pg1 0.31x
 * against 0.33x SQLite, pg3 0.21x against 0.20x) and split the batches
 * (test_pg_speed: 1.2 writes a commit). */
#define PG_WRITER_LANES 3
#define PG_LANE_THREADS 1
#define PG_BATCH_MAX 32
/* Calls queued at most, all lanes; X_begin() fails with LL_ESTORE beyond
 * (503). */
#define PG_QUEUE_MAX 4096

struct pg_writer_lane {
	struct store *store;
	int (*fn)(struct store *, void *); /* its kind; NULL: free */
	pthread_cond_t wake;
	bool cond_made;
	struct store_call *head, *tail;
	int started; /* threads */
	pthread_t threads[PG_LANE_THREADS];
};

struct pg_writer {
	pthread_mutex_t lock; /* all lanes' queues */
	int queued;
	bool stopping, running;
	struct pg_writer_lane lanes[PG_WRITER_LANES];
};

/* Starts S's writer threads; pg_writer_stop() runs what is queued, then
 * ends them. */
int pg_writer_start(struct store *s);
void pg_writer_stop(struct store *s);

/* The channel a token write notifies (store_tokens.c, in its transaction),
 * heard by the task watch's connection: every daemon then forgets the
 * tokens its check remembers (store_token_cache.h). */
#define PG_TOKENS_CHANNEL "loadlab_tokens"

struct store {
	struct store_base base; /* first: the backend (store_backend.h) */
	struct pg_pool pool;
	struct store_options options;
	long long commits, committed_ops; /* under shared_lock */

	/* The counts above and the claims below, which the threads share. */
	pthread_mutex_t shared_lock;

	/* Webhook deliveries this daemon claimed (pg_webhook_due()) and has
	 * not reported on yet, under shared_lock: given back at close. */
	long long claims[PG_WEBHOOK_CLAIMS_MAX];
	int claim_count;

	struct pg_watch watch;
	struct pg_roles roles;
	struct pg_writer writer;
};

/* Gives the deliveries S claimed back to the queue (pg_webhooks.c; at close). */
void pg_webhook_claims_release(struct store *s);

/* --- the backend's operations (pg_backend.c names them) --- */

/* store.h's store_open() .. store_stats(), store_async.h's store_call_free(),
 * for this backend (pg_store.c). */
STORE_HANDLE_DECLARE(pg);

/* pg_webhooks.c */
int pg_alert_webhook_status(struct store *store, long long id, const char *status, long long retry_at_ms);
int pg_webhook_due(struct store *store, long long now, int limit, cJSON **ret_due);

/* --- the writes (pg_write.c) --- */

/* Runs FN(store, ARG) in a transaction of its own on a connection of the
 * pool (pq_writer()), committed when FN returns 0 or more, rolled back
 * otherwise; again (up to PG_WRITE_RETRIES) after a deadlock or a
 * serialization failure. Returns FN's result, or LL_ESTORE when the
 * database cannot be reached or the commit failed. */
int pq_write(struct store *store, int (*fn)(struct store *, void *), void *arg);

/* db_before_commit() (db.h) on PostgreSQL: FN(S, KEY, NOW) deferred to
 * the end of this thread's write (once per FN and KEY, in KEY order,
 * before the COMMIT of pq_write() or of a writer's batch); at once
 * outside a write. */
int pq_before_commit(struct store *s, int (*fn)(struct store *, long long key, long long now), long long key,
		     long long now);

/* Queues FN(store, ARG) as CALL's op for the writer (struct pg_writer),
 * its answer built in *OUT; the writer calls DONE(CONTEXT) once the op's
 * transaction committed or the op failed. *RET_CALL is CALL, and
 * pq_call_end() gives the result: the X_begin() of every store_async.h
 * call. On a negative return (closing, queue full) CALL is freed. */
int pq_call_submit(struct store *store, struct store_call *call, int (*fn)(struct store *, void *), void *arg,
		   cJSON **out, store_done_fn done, void *context, struct store_call **ret_call);

/* The result of CALL's committed op (its message set on this thread on
 * failure) and its answer to *RET (NULL on failure); frees CALL. */
int pq_call_end(struct store_call *call, cJSON **ret);

/* --- statements (pg_sql.c) ---
 *
 * struct pgq is a statement as SQLite's API has them, on libpq: made by
 * pq_cached() (or pq_prepare()) from SQL whose parameters are '?' or '?N'
 * (numbered as SQLite does, turned into $N), bound by index from 1, run
 * by the first pgq_step() (PQexecParams: the values go apart from the
 * text), whose rows the next steps walk. pgq_reset() runs it again with
 * its bindings changed. A statement on a NULL connection (the database
 * could not be reached) fails with LL_ESTORE. */
struct pgq;

#define PGQ_ROW 100
#define PGQ_DONE 101
#define PGQ_NULL 5
#define PGQ_VALUE 1
#define PGQ_TRANSIENT NULL
#define PGQ_PARAMS_MAX 16

void pgq_bind_int64(struct pgq *q, int i, long long v);
void pgq_bind_double(struct pgq *q, int i, double v);
/* TEXT of N bytes (-1: up to its NUL); DESTRUCTOR is ignored (copied). */
void pgq_bind_text(struct pgq *q, int i, const char *text, int n, void *destructor);
void pgq_bind_blob(struct pgq *q, int i, const void *blob, int n, void *destructor);
void pgq_bind_null(struct pgq *q, int i);
/* PGQ_ROW, PGQ_DONE, or a negative LL_ESTORE (logged). */
int pgq_step(struct pgq *q);
void pgq_reset(struct pgq *q);
void pgq_clear_bindings(struct pgq *q);
void pgq_free(struct pgq *q);
int pgq_column_type(struct pgq *q, int col);
long long pgq_column_int64(struct pgq *q, int col);
double pgq_column_double(struct pgq *q, int col);
const char *pgq_column_text(struct pgq *q, int col);
/* A bytea column's bytes, decoded (kept until the next step or free). */
const void *pgq_column_blob(struct pgq *q, int col);
int pgq_column_bytes(struct pgq *q, int col);
/* Rows the last statement on CONN changed (this thread's). */
long long pgq_changes(PGconn *conn);
/* The SQLSTATE of this thread's last failed statement ("" when none). */
const char *pgq_last_sqlstate(void);
void pgq_clear_sqlstate(void);

/* The connections of this thread's write and read (pq_write(), pq_read_begin()). */
PGconn *pq_writer(void);
PGconn *pq_reader(void);
/* Sets this thread's write connection (pq_write(); NULL after it). */
void pq_writer_set(PGconn *conn);
/* Takes a connection for reads on this thread (the write's when inside
 * one); pq_reader() is NULL when the database cannot be reached. */
void pq_read_begin(struct store *s);
void pq_read_end(struct store *s);

/* A session's statements (pg_session.c): one entry per text, one
 * prepared statement per set of parameter types (PQ_TEXT_VARIANTS). */
#define PQ_TEXT_VARIANTS 4

struct pq_variant {
	Oid types[PGQ_PARAMS_MAX];
	char name[16];
};

struct pq_text {
	struct pq_text *next; /* in its bucket */
	unsigned long hash;
	char *given; /* the text as given ('?' parameters) */
	char *sql;   /* the text with $N parameters */
	int nparams;
	unsigned used;
	bool rowless; /* pq_sql_rowless(): queued in a pipelined write */
	int variant_count;
	struct pq_variant variants[PQ_TEXT_VARIANTS];
};

struct pq_session;

/* CONN's session, NULL when it has none (not the pool's). */
struct pq_session *pq_session_of(PGconn *conn);
/* SESSION's entry of SQL, made when new; NULL when SESSION is full or out
 * of memory (the statement then runs unnamed). Only the thread that holds
 * SESSION's connection touches it. */
struct pq_text *pq_session_text(struct pq_session *session, const char *sql);
/* The name under which TEXT is prepared with TYPES, NULL when it is not
 * yet. */
const char *pq_session_find(const struct pq_text *text, const Oid *types);
/* The name of TEXT prepared with TYPES (PGQ_PARAMS_MAX of them) on CONN,
 * PREPAREd first when new; NULL when it cannot be (run it unnamed), or
 * with *RET_FAILED the failed PREPARE's result (the caller clears it). */
const char *pq_session_prepared(struct pq_session *session, struct pq_text *text, PGconn *conn,
				const Oid *types, PGresult **ret_failed);
/* Whether SQL returns no rows (UPDATE, INSERT, DELETE without
 * RETURNING, NOTIFY): queued in a pipelined write (pg_pipeline.c). */
bool pq_sql_rowless(const char *sql);
/* SQL with SQLite's parameters ('?', '?N') as PostgreSQL's ($N), outside
 * quotes (malloc()); *RET_COUNT the highest number, *RET_USED the numbers
 * named, by bit. */
char *pq_convert_params(const char *sql, int *ret_count, unsigned *ret_used);

/* Logs the error of CONN and returns LL_ESTORE with a message. */
int pq_error(PGconn *conn, const char *what);
/* Notes the failure of RES (NULL: CONN's error) of SQL on this thread:
 * logged, its SQLSTATE kept (pgq_last_sqlstate()); LL_ESTORE. */
int pq_result_error(PGconn *conn, PGresult *res, const char *sql);

/* --- the write's pipeline (pg_pipeline.c) ---
 *
 * A write's transaction runs in libpq's pipeline mode: BEGIN and every
 * statement that returns no rows (pq_sql_rowless(): UPDATE, INSERT,
 * DELETE without RETURNING, NOTIFY) are queued, not waited for; the next
 * statement whose rows are read takes them to the server with it and
 * reads their results first, and the COMMIT the rest, with a sync: one
 * round trip each instead of one a statement. A queued statement's
 * failure fails the next one read, or the COMMIT (the transaction is
 * aborted anyway), logged once with its SQLSTATE. One pipelined write per
 * thread, on its connection; pgq_step() and pq_exec() on that connection
 * go through it. */

/* Enters pipeline mode on CONN for this thread's write and queues BEGIN. */
int pq_pipeline_begin(PGconn *conn);
/* Whether CONN is this thread's pipelined write. */
bool pq_pipelined(const PGconn *conn);
/* Whether a statement of this thread's pipelined write failed. */
bool pq_pipeline_failed(void);
/* Queues a statement: the prepared NAME, or SQL unnamed (NAME NULL);
 * LOGGED_SQL (NULL, or a text that outlives the write) names it in the
 * log when it fails. Fails at once when one queued before failed. */
int pq_pipeline_send(PGconn *conn, const char *name, const char *sql, int nparams, const Oid *types,
		     const char *const *values, const int *lengths, const int *formats,
		     const char *logged_sql);
/* Sends the queue and reads it: the last statement's result to *RET (the
 * caller clears it); LL_ESTORE (NULL) when it or one before failed. */
int pq_pipeline_result(PGconn *conn, PGresult **ret);
/* Reads every queued statement's result: 0 or the first failure. */
int pq_pipeline_settle(PGconn *conn);
/* pq_pipeline_settle(), and the rows the last statement changed. */
int pq_pipeline_changes(PGconn *conn, long long *ret);
/* COMMIT, a sync and every result read; leaves pipeline mode. 0 only
 * when every statement and the COMMIT succeeded. */
int pq_pipeline_commit(PGconn *conn);
/* Reads what is left (up to a sync) and leaves pipeline mode, before a
 * ROLLBACK. */
void pq_pipeline_abort(PGconn *conn);
/* Leaves pipeline mode for a while (a PREPARE) after a sync, and enters
 * it again: the write's transaction goes on. */
int pq_pipeline_pause(PGconn *conn);
int pq_pipeline_resume(PGconn *conn);

/* Runs SQL text without arguments or rows (BEGIN, DDL; several
 * statements may be given). */
int pq_exec(PGconn *conn, const char *sql);

/* A statement for SQL; NULL (logged) when CONN is NULL or out of memory.
 * Give it back with pq_release(). */
struct pgq *pq_prepare(PGconn *conn, const char *sql);
struct pgq *pq_cached(PGconn *conn, const char *sql);
void pq_release(PGconn *conn, struct pgq *stmt);

/* PostgreSQL's statements (struct pgq) for the statement layer
 * (db_driver.h), used by pg_db.c's driver and pq_int(). */
extern const struct db_stmt_ops pq_stmt_ops;

/* A single integer from a query (first column of first row), SQL a
 * literal through the statement cache (db_args_on()), arguments by TYPES
 * (db.h's db_bind()); DEFAULT_VALUE when
 * there is no row or it is NULL. */
#define pq_int(conn, ret, default_value, sql, ...) \
	db_args_on(&pq_stmt_ops, conn, ret, default_value, sql, __VA_ARGS__)

#endif
