/*
 * sqlite_int.h - what the files of the SQLite backend (store_backend.h)
 * share: the struct behind store.h's handle, the writer's queue of
 * operations, the SQL and JSON helpers, and each file's operations for
 * sqlite_backend.c's table. Only store/sqlite/ includes it.
 *
 * Files: sqlite_writer.c (opening, migrations, the writer and syncer
 * threads, stats), sqlite_sql.c (SQL and JSON helpers), one file per
 * resource (sqlite_tokens.c, sqlite_agents.c, sqlite_jobs.c,
 * sqlite_tasks.c, sqlite_results.c, sqlite_series.c, sqlite_schedules.c,
 * sqlite_blobs.c), and sqlite_backend.c, the table that names them.
 *
 * Threads: s->writer is used only inside an op run by the writer thread
 * (store_write()); s->reader only with s->reader_lock held.
 */
#ifndef LOADLAB_SERVER_STORE_INT_H
#define LOADLAB_SERVER_STORE_INT_H

#include "store/store_backend.h"
#include "store/store_cache.h"

#include <pthread.h>
#include <sqlite3.h>

/* At most this many writes share one transaction. */
#define STORE_BATCH_MAX 256
/* The lease scan looks at this many ready tasks per call. */
#define STORE_LEASE_SCAN 500

/* The writer checkpoints its WAL into the database once it holds this
 * many pages (32 MiB; SQLite's default is 1,000): the same hot pages
 * (the tasks' indexes, the agents) are rewritten by every batch, and a
 * checkpoint copies each once, so rarer checkpoints copy far less. */
#define STORE_CHECKPOINT_PAGES_TEXT "8000"

/* Live tokens remembered by store_token_find(): slots, chosen by the
 * hash's first two bytes (about 570 KiB). With 64 slots a third of 32
 * agents shared a slot with another and missed on every other request. */
#define STORE_TOKEN_CACHE_SLOTS 4096

/* A token found live while token_generation was GENERATION; it stands only
 * while the generation has not moved (every token write moves it). */
struct token_cache_entry {
	bool used;
	unsigned long long generation;
	unsigned char hash[STORE_TOKEN_HASH_SIZE];
	struct store_token token;
};

/* One write waiting for the writer thread. */
struct store_op {
	int (*fn)(struct store *store, void *arg);
	void *arg;
	int rc;
	bool done;
	pthread_cond_t done_cond; /* store_write(): signalled when done */
	store_done_fn notify;     /* store_submit() of a call: called instead */
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

	/* The writer thread's only: printed "job" members of leases,
	 * agent_touch()'s latest writes. */
	struct store_cache cache;

	pthread_mutex_t token_cache_lock; /* guards the two below */
	unsigned long long token_generation;
	struct token_cache_entry token_cache[STORE_TOKEN_CACHE_SLOTS];
};

/* --- the backend's operations (sqlite_backend.c names them) --- */

/* store.h's store_open() .. store_stats(), store_async.h's store_call_free(),
 * for this backend (sqlite_writer.c). */
int sqlite_open(const char *path, const struct store_options *options, struct store **ret_store);
void sqlite_close(struct store *s);
int sqlite_check(struct store *s);
int sqlite_integrity_check(struct store *s);
int sqlite_stats(struct store *s, long long now, struct store_stats *ret);
void sqlite_call_free(struct store_call *call);

/* Each resource file's operations. */
extern const struct store_token_ops sqlite_token_ops;
extern const struct store_agent_ops sqlite_agent_ops;
extern const struct store_job_ops sqlite_job_ops;
extern const struct store_task_ops sqlite_task_ops;
extern const struct store_result_ops sqlite_result_ops;
extern const struct store_series_ops sqlite_series_ops;
extern const struct store_schedule_ops sqlite_schedule_ops;
extern const struct store_blob_ops sqlite_blob_ops;

/* --- the writer (sqlite_writer.c) --- */

/* Runs FN(store, ARG) in the writer's next transaction, inside its own
 * savepoint, and waits until it is committed. Returns FN's result, or
 * LL_ESTORE if the commit failed; on failure the message is copied to the
 * calling thread. */
int store_write(struct store *store, int (*fn)(struct store *, void *), void *arg);

/* Runs CALL's op: without DONE, as store_write() (returns once it is
 * committed, with its result); with DONE, queues it and returns 0 at once,
 * and the writer thread calls DONE(CONTEXT) once the op is committed or
 * failed. On a refusal (the store is closing) CALL is freed and DONE never
 * called. Either way store_call_end() then gives the result. */
int store_call_submit(struct store *store, struct store_call *call, store_done_fn done, void *context);

/* The result of CALL's committed op (its message set on this thread on
 * failure) and its answer to *RET (NULL on failure); frees CALL. */
int store_call_end(struct store_call *call, cJSON **ret);

/* store_write() for an op that builds its answer in *OUT: on success the
 * answer goes to *RET, on failure it is deleted. */
int store_write_answer(struct store *store, int (*fn)(struct store *, void *), void *arg, cJSON **out,
		       cJSON **ret);

/* --- SQL helpers (sqlite_sql.c) --- */

/* Logs the SQLite error of DB and returns LL_ESTORE with a message. */
int db_error(sqlite3 *db, const char *what);

/* Runs SQL text without arguments or rows (BEGIN, PRAGMA, DDL). */
int db_exec(sqlite3 *db, const char *sql);

/* A prepared statement for SQL, NULL (logged) on failure; the caller
 * finalizes it. */
sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql);

/* Keeps the statements of connection DB prepared between calls (after
 * it is opened), or stops and finalizes them (before it is closed). A
 * connection that finds no free slot prepares every time. */
void db_cache_attach(sqlite3 *db);
void db_cache_detach(sqlite3 *db);

/* A statement for SQL, which must be a string literal (its address is the
 * key), from DB's cache when it has one that is not in use, else newly
 * prepared; NULL (logged) on failure. Give it back with db_release(),
 * which resets it and clears its bindings (or finalizes a statement the
 * cache did not keep); never finalize it. */
sqlite3_stmt *db_cached(sqlite3 *db, const char *sql);
void db_release(sqlite3 *db, sqlite3_stmt *stmt);

/* db_exec() of a literal without arguments through the cache. */
int db_exec_cached(sqlite3 *db, const char *sql);

/* Arguments, given by TYPES, one letter each: 'i' long long, 'n' long long
 * where 0 binds NULL, 'd' double (NaN binds NULL, as SQLite does), 't' text
 * (NULL binds NULL), 'b' a STORE_TOKEN_HASH_SIZE-byte blob. */

/* db_run(), db_int(), db_row_by_id() and db_reader_each() take SQL
 * literals and use the statement cache. */

/* Runs a statement that returns no rows. */
int db_run(sqlite3 *db, const char *sql, const char *types, ...);

/* A single integer from a query (first column of first row);
 * DEFAULT_VALUE when there is no row or it is NULL. */
int db_int(sqlite3 *db, long long *ret, long long default_value, const char *sql, const char *types, ...);

/* Fetches one row by id: runs SQL (its one parameter is ID) and calls
 * READ(CONTEXT, row) on the first row, returning READ's result. Without a
 * row: LL_ENOTFOUND, with the message "No WHAT has id ID." when WHAT is
 * not NULL. LL_ESTORE when the statement cannot be prepared. */
int db_row_by_id(sqlite3 *db, const char *sql, long long id, const char *what,
		 int (*read)(void *context, sqlite3_stmt *row), void *context);

/* Calls ADD(CONTEXT, row) for every row of SQL (no parameters) on the
 * reader, under its lock; 0 or LL_ESTORE. */
int db_reader_each(struct store *store, const char *sql, void (*add)(void *context, sqlite3_stmt *row),
		   void *context);

/* --- JSON from columns (sqlite_sql.c) --- */

/* The JSON text of column COL parsed; an empty object when NULL or bad. */
cJSON *column_json(sqlite3_stmt *stmt, int col);

/* OBJ[KEY] = column COL as an RFC 3339 time, or null. */
void add_time(cJSON *obj, const char *key, sqlite3_stmt *stmt, int col);
/* OBJ[KEY] = MS as an RFC 3339 time. */
void add_time_value(cJSON *obj, const char *key, long long ms);
/* OBJ[KEY] = column COL as text, or null. */
void add_text_or_null(cJSON *obj, const char *key, sqlite3_stmt *stmt, int col);
/* OBJ[KEY] = column COL as a number, or null. */
void add_int_or_null(cJSON *obj, const char *key, sqlite3_stmt *stmt, int col);

/* How add_columns() turns a column into a member. */
enum column_kind {
	COLUMN_INT,          /* a number */
	COLUMN_TEXT,         /* a string */
	COLUMN_TEXT_OR_NULL, /* add_text_or_null() */
	COLUMN_INT_OR_NULL,  /* add_int_or_null() */
	COLUMN_TIME,         /* add_time() */
};

struct column {
	const char *key;
	enum column_kind kind;
};

/* Adds the columns of ROW, from FIRST on, to OBJ in order: column FIRST + i
 * becomes member COLUMNS[i], up to the entry whose key is NULL. */
void add_columns(cJSON *obj, sqlite3_stmt *row, int first, const struct column *columns);

/* The end of a function that built OUT for its caller: OUT goes to *RET
 * when RC is not negative, else it is deleted; returns RC, or 0. */
int store_answer(int rc, cJSON *out, cJSON **ret);

/* Unformatted JSON text of ITEM (free()), NULL when out of memory. */
char *json_text(const cJSON *item);

/* Logs a state change EVENT of the object ID_KEY=ID; REASON may be NULL. */
void log_state(const char *event, const char *id_key, long long id, const char *from, const char *to,
	       const char *reason);

/* --- shared between resources --- */

/* Re-derives job JOB_ID's state from its tasks (queue_job_state()) and
 * stores it when it changed (sqlite_jobs.c). */
int job_refresh_state(struct store *store, long long job_id, long long now);

/* A new object {"task_id", "attempt", "state"} that begins the answers
 * about one attempt of a task (sqlite_sql.c: heartbeats and leases). */
cJSON *task_attempt_json(long long task_id, long long attempt, const char *state);

/* Marks agent AGENT_ID seen at NOW (sqlite_agents.c). last_seen is written
 * at most once per AGENT_TOUCH_MAX_MS (or an eighth of offline_after_ms,
 * if less) an agent: a touch sooner after the last one written changes
 * nothing, so last_seen may be that much older than the agent's last
 * request. Writer thread. */
int agent_touch(struct store *store, long long agent_id, long long now);

#endif
