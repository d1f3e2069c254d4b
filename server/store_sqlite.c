/*
 * store_sqlite.c - the SQLite implementation of store.h.
 *
 * Two connections: one writer, used only by the writer thread, and one
 * reader guarded by a mutex. WAL lets the reader see the last commit while
 * the writer works. Every change is a store_write() op: the caller queues
 * it and sleeps; the writer takes every queued op, runs each inside its own
 * SAVEPOINT of one transaction, commits once (one fsync for the batch:
 * group commit), then wakes the callers. An op that fails is rolled back
 * to its savepoint without disturbing the others in its batch.
 */
#include "store.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"
#include "loadlab/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* At most this many writes share one transaction. */
#define STORE_BATCH_MAX 256
/* The lease scan looks at this many ready tasks per call. */
#define STORE_LEASE_SCAN 500

struct store_op {
	int (*fn)(struct store *store, void *arg);
	void *arg;
	int rc;
	bool done;
	char message[256];
	struct store_op *next;
};

struct store {
	sqlite3 *writer;
	sqlite3 *reader;
	pthread_mutex_t reader_lock;
	struct store_options options;

	pthread_t writer_thread;
	pthread_mutex_t queue_lock;
	pthread_cond_t queue_cond;
	pthread_cond_t done_cond;
	struct store_op *head, *tail;
	bool stopping;
	long long commits, committed_ops;
};

/* Schema migrations: entry N takes user_version N to N+1. */
static const char *const migrations[] = {
	"CREATE TABLE tokens ("
	"  id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL,"
	"  hash BLOB NOT NULL UNIQUE, agent_id INTEGER,"
	"  created_at INTEGER NOT NULL, revoked_at INTEGER);"
	"CREATE TABLE agents ("
	"  id INTEGER PRIMARY KEY, name TEXT NOT NULL, facts TEXT NOT NULL,"
	"  labels TEXT NOT NULL, quarantined INTEGER NOT NULL DEFAULT 0,"
	"  created_at INTEGER NOT NULL, last_seen INTEGER);"
	"CREATE TABLE jobs ("
	"  id INTEGER PRIMARY KEY, name TEXT NOT NULL, family TEXT NOT NULL,"
	"  spec TEXT NOT NULL, priority INTEGER NOT NULL, state TEXT NOT NULL,"
	"  submitted_by TEXT NOT NULL, created_at INTEGER NOT NULL,"
	"  updated_at INTEGER NOT NULL);"
	"CREATE INDEX jobs_by_state ON jobs(state, id);"
	"CREATE TABLE tasks ("
	"  id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES jobs(id),"
	"  cell TEXT NOT NULL, pinned_agent INTEGER, state TEXT NOT NULL,"
	"  priority INTEGER NOT NULL, attempt INTEGER NOT NULL DEFAULT 0,"
	"  lease_holder INTEGER, lease_expires INTEGER, not_before INTEGER NOT NULL DEFAULT 0,"
	"  phase TEXT, percent INTEGER, last_error TEXT,"
	"  cancel_notified INTEGER NOT NULL DEFAULT 1,"
	"  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
	"CREATE INDEX tasks_by_job ON tasks(job_id);"
	"CREATE INDEX tasks_ready ON tasks(state, priority DESC, id);"
	"CREATE INDEX tasks_by_holder ON tasks(lease_holder, state);"
	"CREATE TABLE task_attempts ("
	"  task_id INTEGER NOT NULL, attempt INTEGER NOT NULL, agent_id INTEGER NOT NULL,"
	"  leased_at INTEGER NOT NULL, ended_at INTEGER, outcome TEXT,"
	"  PRIMARY KEY (task_id, attempt));"
	"CREATE TABLE results ("
	"  id INTEGER PRIMARY KEY, task_id INTEGER NOT NULL, attempt INTEGER NOT NULL,"
	"  agent_id INTEGER NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL,"
	"  UNIQUE (task_id, attempt));",
	/* 2: per-result summaries cached for reports */
	"CREATE TABLE result_summaries ("
	"  result_id INTEGER PRIMARY KEY REFERENCES results(id),"
	"  version INTEGER NOT NULL, body TEXT NOT NULL);",
};

/* ---------------------------------------------------------------- helpers */

static int db_error(sqlite3 *db, const char *what)
{
	log_event(LOG_ERROR, "store_error", "what", what, "sqlite", sqlite3_errmsg(db), NULL);
	return err_set(LL_ESTORE, "The store failed (%s).", what);
}

static int db_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		log_event(LOG_ERROR, "store_error", "sql", sql, "sqlite", msg, NULL);
		sqlite3_free(msg);
		return err_set(LL_ESTORE, "The store failed.");
	}
	return 0;
}

/* Prepares SQL, cached by the connection (SQLITE_PREPARE_PERSISTENT is a
 * hint only; statements are finalized by the caller). */
static sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *stmt = NULL;

	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL) != SQLITE_OK) {
		log_event(LOG_ERROR, "store_error", "sql", sql, "sqlite", sqlite3_errmsg(db), NULL);
		return NULL;
	}
	return stmt;
}

/* Binds arguments given by a format: 'i' long long, 't' text (NULL binds
 * NULL), 'b' a STORE_TOKEN_HASH_SIZE-byte blob. */
static void db_bind(sqlite3_stmt *stmt, const char *types, va_list ap)
{
	for (int i = 0; types[i]; i++) {
		if (types[i] == 'i') {
			sqlite3_bind_int64(stmt, i + 1, va_arg(ap, long long));
		} else if (types[i] == 't') {
			const char *t = va_arg(ap, const char *);
			if (t)
				sqlite3_bind_text(stmt, i + 1, t, -1, SQLITE_TRANSIENT);
			else
				sqlite3_bind_null(stmt, i + 1);
		} else {
			sqlite3_bind_blob(stmt, i + 1, va_arg(ap, const unsigned char *),
					  STORE_TOKEN_HASH_SIZE, SQLITE_TRANSIENT);
		}
	}
}

/* Runs a statement that returns no rows, with arguments as in db_bind(). */
static int db_run(sqlite3 *db, const char *sql, const char *types, ...)
{
	sqlite3_stmt *stmt = db_prepare(db, sql);
	va_list ap;
	int rc;

	if (!stmt)
		return err_set(LL_ESTORE, "The store failed.");
	va_start(ap, types);
	db_bind(stmt, types, ap);
	va_end(ap);
	rc = sqlite3_step(stmt);
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_error(db, sql);
	return 0;
}

/* A single integer from a query (first column of first row); DEFAULT_VALUE
 * when there is no row. */
static int db_int(sqlite3 *db, long long *ret, long long default_value, const char *sql,
		  const char *types, ...)
{
	sqlite3_stmt *stmt = db_prepare(db, sql);
	va_list ap;
	int rc;

	if (!stmt)
		return err_set(LL_ESTORE, "The store failed.");
	va_start(ap, types);
	db_bind(stmt, types, ap);
	va_end(ap);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*ret = sqlite3_column_type(stmt, 0) == SQLITE_NULL ? default_value
								    : sqlite3_column_int64(stmt, 0);
	else if (rc == SQLITE_DONE)
		*ret = default_value;
	sqlite3_finalize(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_error(db, sql);
	return 0;
}

static cJSON *column_json(sqlite3_stmt *stmt, int col)
{
	const char *text = (const char *)sqlite3_column_text(stmt, col);
	cJSON *v = text ? cJSON_Parse(text) : NULL;

	return v ? v : cJSON_CreateObject();
}

static void add_time(cJSON *obj, const char *key, sqlite3_stmt *stmt, int col)
{
	char text[32];

	if (sqlite3_column_type(stmt, col) == SQLITE_NULL)
		cJSON_AddNullToObject(obj, key);
	else
		cJSON_AddStringToObject(obj, key,
					clock_format_rfc3339(sqlite3_column_int64(stmt, col), text));
}

static void add_time_value(cJSON *obj, const char *key, long long ms)
{
	char text[32];

	cJSON_AddStringToObject(obj, key, clock_format_rfc3339(ms, text));
}

static void add_text_or_null(cJSON *obj, const char *key, sqlite3_stmt *stmt, int col)
{
	if (sqlite3_column_type(stmt, col) == SQLITE_NULL)
		cJSON_AddNullToObject(obj, key);
	else
		cJSON_AddStringToObject(obj, key, (const char *)sqlite3_column_text(stmt, col));
}

static void add_int_or_null(cJSON *obj, const char *key, sqlite3_stmt *stmt, int col)
{
	if (sqlite3_column_type(stmt, col) == SQLITE_NULL)
		cJSON_AddNullToObject(obj, key);
	else
		cJSON_AddNumberToObject(obj, key, (double)sqlite3_column_int64(stmt, col));
}

static void log_state(const char *event, const char *id_key, long long id, const char *from,
		      const char *to, const char *reason);

static char *json_text(const cJSON *item)
{
	return cJSON_PrintUnformatted(item);
}

/* ------------------------------------------------------ the writer thread */

static void *writer_main(void *arg)
{
	struct store *s = arg;

	pthread_mutex_lock(&s->queue_lock);
	for (;;) {
		struct store_op *batch, *op;
		int n = 0, rc;

		while (!s->head && !s->stopping)
			pthread_cond_wait(&s->queue_cond, &s->queue_lock);
		if (!s->head)
			break;
		batch = s->head;
		for (op = batch; op->next && n < STORE_BATCH_MAX - 1; op = op->next)
			n++;
		s->head = op->next;
		if (!s->head)
			s->tail = NULL;
		op->next = NULL;
		pthread_mutex_unlock(&s->queue_lock);

		rc = db_exec(s->writer, "BEGIN IMMEDIATE");
		for (op = batch; op; op = op->next) {
			if (rc < 0) {
				op->rc = rc;
				continue;
			}
			err_clear();
			if (db_exec(s->writer, "SAVEPOINT op") < 0) {
				op->rc = LL_ESTORE;
				continue;
			}
			op->rc = op->fn(s, op->arg);
			if (op->rc < 0) {
				snprintf(op->message, sizeof(op->message), "%s", err_message(op->rc));
				db_exec(s->writer, "ROLLBACK TO op");
			}
			db_exec(s->writer, "RELEASE op");
		}
		if (rc == 0 && db_exec(s->writer, "COMMIT") < 0) {
			db_exec(s->writer, "ROLLBACK");
			for (op = batch; op; op = op->next)
				if (op->rc >= 0) {
					op->rc = LL_ESTORE;
					snprintf(op->message, sizeof(op->message), "The store could not commit.");
				}
		}

		pthread_mutex_lock(&s->queue_lock);
		s->commits++;
		for (op = batch; op; op = op->next) {
			s->committed_ops++;
			op->done = true;
		}
		pthread_cond_broadcast(&s->done_cond);
	}
	pthread_mutex_unlock(&s->queue_lock);
	return NULL;
}

/* Runs FN(store, ARG) in the writer's next transaction and waits until it
 * is committed. Returns FN's result, or LL_ESTORE if the commit failed; on
 * failure the message is copied to the calling thread. */
static int store_write(struct store *s, int (*fn)(struct store *, void *), void *arg)
{
	struct store_op op = {.fn = fn, .arg = arg};

	pthread_mutex_lock(&s->queue_lock);
	if (s->stopping) {
		pthread_mutex_unlock(&s->queue_lock);
		return err_set(LL_ESTORE, "The store is closing.");
	}
	if (s->tail)
		s->tail->next = &op;
	else
		s->head = &op;
	s->tail = &op;
	pthread_cond_signal(&s->queue_cond);
	while (!op.done)
		pthread_cond_wait(&s->done_cond, &s->queue_lock);
	pthread_mutex_unlock(&s->queue_lock);
	if (op.rc < 0)
		err_set(op.rc, "%s", op.message);
	return op.rc;
}

/* store_write() for an op that builds its answer in *OUT: on success the
 * answer goes to *RET, on failure it is deleted. */
static int store_write_answer(struct store *s, int (*fn)(struct store *, void *), void *arg,
			      cJSON **out, cJSON **ret)
{
	int rc = store_write(s, fn, arg);

	if (rc < 0) {
		cJSON_Delete(*out);
		*out = NULL;
		return rc;
	}
	*ret = *out;
	return 0;
}

/* ------------------------------------------------------------ open, close */

static int open_connection(const char *path, sqlite3 **ret)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		int rc = err_set(LL_ESTORE, "Cannot open the store at %s: %s.", path,
				 db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return rc;
	}
	sqlite3_busy_timeout(db, 10000);
	if (db_exec(db, "PRAGMA journal_mode=WAL") < 0 ||
	    db_exec(db, "PRAGMA synchronous=FULL") < 0 ||
	    db_exec(db, "PRAGMA foreign_keys=ON") < 0) {
		sqlite3_close(db);
		return err_set(LL_ESTORE, "Cannot configure the store at %s.", path);
	}
	*ret = db;
	return 0;
}

static int migrate(sqlite3 *db)
{
	long long version;
	const int latest = (int)(sizeof(migrations) / sizeof(migrations[0]));
	char sql[64];

	if (db_int(db, &version, 0, "PRAGMA user_version", "") < 0)
		return LL_ESTORE;
	if (version > latest)
		return err_set(LL_ESTORE,
			       "The store has schema version %lld, newer than this loadlabd knows (%d).",
			       version, latest);
	for (int v = (int)version; v < latest; v++) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", v + 1);
		if (db_exec(db, "BEGIN IMMEDIATE") < 0)
			return LL_ESTORE;
		if (db_exec(db, migrations[v]) < 0 || db_exec(db, sql) < 0) {
			db_exec(db, "ROLLBACK");
			return LL_ESTORE;
		}
		if (db_exec(db, "COMMIT") < 0)
			return LL_ESTORE;
		log_event(LOG_INFO, "store_migrated", "schema_version", sql + 20, NULL);
	}
	return 0;
}

int store_open(const char *path, const struct store_options *options, struct store **ret_store)
{
	struct store *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return LL_ENOMEM;
	s->options = *options;
	pthread_mutex_init(&s->reader_lock, NULL);
	pthread_mutex_init(&s->queue_lock, NULL);
	pthread_cond_init(&s->queue_cond, NULL);
	pthread_cond_init(&s->done_cond, NULL);
	if ((rc = open_connection(path, &s->writer)) < 0 || (rc = migrate(s->writer)) < 0 ||
	    (rc = open_connection(path, &s->reader)) < 0)
		goto fail;
	if (pthread_create(&s->writer_thread, NULL, writer_main, s) != 0) {
		rc = err_set(LL_ENOMEM, "Cannot start the store's writer thread.");
		goto fail;
	}
	*ret_store = s;
	return 0;
fail:
	sqlite3_close(s->reader);
	sqlite3_close(s->writer);
	free(s);
	return rc;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->queue_lock);
	s->stopping = true;
	pthread_cond_signal(&s->queue_cond);
	pthread_mutex_unlock(&s->queue_lock);
	pthread_join(s->writer_thread, NULL);
	sqlite3_close(s->reader);
	sqlite3_close(s->writer);
	pthread_mutex_destroy(&s->reader_lock);
	pthread_mutex_destroy(&s->queue_lock);
	pthread_cond_destroy(&s->queue_cond);
	pthread_cond_destroy(&s->done_cond);
	free(s);
}

int store_check(struct store *s)
{
	long long one = 0;
	int rc;

	pthread_mutex_lock(&s->reader_lock);
	rc = db_int(s->reader, &one, 0, "SELECT 1", "");
	pthread_mutex_unlock(&s->reader_lock);
	return rc < 0 || one != 1 ? LL_ESTORE : 0;
}

int store_integrity_check(struct store *s)
{
	sqlite3_stmt *stmt;
	int rc = LL_ESTORE;

	pthread_mutex_lock(&s->reader_lock);
	stmt = db_prepare(s->reader, "PRAGMA integrity_check");
	if (stmt && sqlite3_step(stmt) == SQLITE_ROW &&
	    strcmp((const char *)sqlite3_column_text(stmt, 0), "ok") == 0)
		rc = 0;
	sqlite3_finalize(stmt);
	pthread_mutex_unlock(&s->reader_lock);
	return rc;
}

/* ------------------------------------------------------------------ tokens */

static const char *const token_kind_names[] = {"admin", "user", "enroll", "agent"};

const char *store_token_kind_name(enum store_token_kind kind)
{
	return token_kind_names[kind];
}

int store_token_kind_parse(const char *name, enum store_token_kind *ret_kind)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(name, token_kind_names[i]) == 0) {
			*ret_kind = (enum store_token_kind)i;
			return 0;
		}
	return err_set(LL_EINVAL, "Unknown token kind '%s'.", name);
}

int store_token_count(struct store *s, enum store_token_kind kind, long long *ret_count)
{
	int rc;

	pthread_mutex_lock(&s->reader_lock);
	rc = db_int(s->reader, ret_count, 0,
		    "SELECT count(*) FROM tokens WHERE kind = ? AND revoked_at IS NULL", "t",
		    store_token_kind_name(kind));
	pthread_mutex_unlock(&s->reader_lock);
	return rc;
}

struct token_create_op {
	enum store_token_kind kind;
	const char *name;
	const unsigned char *hash;
	long long now;
	cJSON *out;
};

static int op_token_create(struct store *s, void *arg)
{
	struct token_create_op *a = arg;
	long long id;
	int rc;

	rc = db_run(s->writer,
		    "INSERT INTO tokens (kind, name, hash, created_at) VALUES (?, ?, ?, ?)"
		    " ON CONFLICT (hash) DO UPDATE SET revoked_at = NULL, kind = excluded.kind",
		    "ttbi", store_token_kind_name(a->kind), a->name, a->hash, a->now);
	if (rc < 0)
		return rc;
	if ((rc = db_int(s->writer, &id, 0, "SELECT id FROM tokens WHERE hash = ?", "b", a->hash)) < 0)
		return rc;
	a->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(a->out, "id", (double)id);
	cJSON_AddStringToObject(a->out, "kind", store_token_kind_name(a->kind));
	cJSON_AddStringToObject(a->out, "name", a->name);
	add_time_value(a->out, "created_at", a->now);
	return 0;
}

int store_token_create(struct store *s, enum store_token_kind kind, const char *name,
		       const unsigned char hash[STORE_TOKEN_HASH_SIZE], long long now,
		       cJSON **ret_token)
{
	struct token_create_op a = {kind, name, hash, now, NULL};
	cJSON *answer = NULL;
	int rc = store_write_answer(s, op_token_create, &a, &a.out, &answer);

	if (rc == 0 && ret_token)
		*ret_token = answer;
	else
		cJSON_Delete(answer);
	return rc;
}

/* Constant-time comparison, so that how long a lookup takes says nothing
 * about how much of a hash matched. */
static bool hash_equal(const unsigned char *a, const unsigned char *b)
{
	unsigned char diff = 0;

	for (int i = 0; i < STORE_TOKEN_HASH_SIZE; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

int store_token_find(struct store *s, const unsigned char hash[STORE_TOKEN_HASH_SIZE],
		     struct store_token *ret_token)
{
	sqlite3_stmt *stmt;
	struct store_token t = {0};
	int rc = LL_ENOTFOUND;

	pthread_mutex_lock(&s->reader_lock);
	stmt = db_prepare(s->reader, "SELECT id, kind, agent_id, name, hash FROM tokens"
				     " WHERE hash = ? AND revoked_at IS NULL");
	if (!stmt) {
		pthread_mutex_unlock(&s->reader_lock);
		return LL_ESTORE;
	}
	sqlite3_bind_blob(stmt, 1, hash, STORE_TOKEN_HASH_SIZE, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW &&
	    sqlite3_column_bytes(stmt, 4) == STORE_TOKEN_HASH_SIZE &&
	    hash_equal(sqlite3_column_blob(stmt, 4), hash) &&
	    store_token_kind_parse((const char *)sqlite3_column_text(stmt, 1), &t.kind) == 0) {
		t.id = sqlite3_column_int64(stmt, 0);
		t.agent_id = sqlite3_column_int64(stmt, 2);
		snprintf(t.name, sizeof(t.name), "%s", (const char *)sqlite3_column_text(stmt, 3));
		*ret_token = t;
		rc = 0;
	}
	sqlite3_finalize(stmt);
	pthread_mutex_unlock(&s->reader_lock);
	return rc;
}

int store_token_list(struct store *s, cJSON **ret_list)
{
	sqlite3_stmt *stmt;
	cJSON *out = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(out, "tokens");

	pthread_mutex_lock(&s->reader_lock);
	stmt = db_prepare(s->reader, "SELECT id, kind, name, created_at, revoked_at FROM tokens"
				     " WHERE kind != 'agent' ORDER BY id");
	while (stmt && sqlite3_step(stmt) == SQLITE_ROW) {
		cJSON *t = cJSON_CreateObject();
		cJSON_AddNumberToObject(t, "id", (double)sqlite3_column_int64(stmt, 0));
		cJSON_AddStringToObject(t, "kind", (const char *)sqlite3_column_text(stmt, 1));
		cJSON_AddStringToObject(t, "name", (const char *)sqlite3_column_text(stmt, 2));
		add_time(t, "created_at", stmt, 3);
		add_time(t, "revoked_at", stmt, 4);
		cJSON_AddItemToArray(list, t);
	}
	sqlite3_finalize(stmt);
	pthread_mutex_unlock(&s->reader_lock);
	if (!stmt) {
		cJSON_Delete(out);
		return LL_ESTORE;
	}
	*ret_list = out;
	return 0;
}

struct token_revoke_op {
	long long id, now;
};

static int op_token_revoke(struct store *s, void *arg)
{
	struct token_revoke_op *a = arg;
	long long found;
	int rc = db_int(s->writer, &found, 0, "SELECT count(*) FROM tokens WHERE id = ?", "i", a->id);

	if (rc < 0)
		return rc;
	if (!found)
		return err_set(LL_ENOTFOUND, "No token has id %lld.", a->id);
	return db_run(s->writer,
		      "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", "ii",
		      a->now, a->id);
}

int store_token_revoke(struct store *s, long long id, long long now, cJSON **ret_body)
{
	struct token_revoke_op a = {id, now};
	int rc = store_write(s, op_token_revoke, &a);

	if (rc < 0)
		return rc;
	*ret_body = cJSON_CreateObject();
	cJSON_AddNumberToObject(*ret_body, "id", (double)id);
	cJSON_AddBoolToObject(*ret_body, "revoked", true);
	log_state("token_state", "token_id", id, "live", "revoked", NULL);
	return 0;
}

/* ------------------------------------------------------------------ agents */

struct agent_enroll_op {
	const char *name;
	char *facts, *labels;
	const unsigned char *hash;
	long long now, id;
};

static int op_agent_enroll(struct store *s, void *arg)
{
	struct agent_enroll_op *a = arg;
	int rc;

	rc = db_run(s->writer,
		    "INSERT INTO agents (name, facts, labels, created_at, last_seen) VALUES (?, ?, ?, ?, ?)",
		    "tttii", a->name, a->facts, a->labels, a->now, a->now);
	if (rc < 0)
		return rc;
	a->id = sqlite3_last_insert_rowid(s->writer);
	return db_run(s->writer,
		      "INSERT INTO tokens (kind, name, hash, agent_id, created_at) VALUES ('agent', ?, ?, ?, ?)",
		      "tbii", a->name, a->hash, a->id, a->now);
}

int store_agent_enroll(struct store *s, const char *name, const cJSON *facts, const cJSON *labels,
		       const unsigned char hash[STORE_TOKEN_HASH_SIZE], long long now,
		       long long *ret_agent_id)
{
	struct agent_enroll_op a = {name, json_text(facts), json_text(labels), hash, now, 0};
	int rc = (a.facts && a.labels) ? store_write(s, op_agent_enroll, &a) : LL_ENOMEM;

	free(a.facts);
	free(a.labels);
	if (rc < 0)
		return rc;
	*ret_agent_id = a.id;
	return 0;
}

static const char *agent_state(struct store *s, sqlite3_stmt *stmt, int quarantined_col,
			       int last_seen_col, long long now)
{
	if (sqlite3_column_int(stmt, quarantined_col))
		return "quarantined";
	if (sqlite3_column_type(stmt, last_seen_col) != SQLITE_NULL &&
	    now - sqlite3_column_int64(stmt, last_seen_col) <= s->options.offline_after_ms)
		return "online";
	return "offline";
}

#define AGENT_COLUMNS                                                                  \
	"a.id, a.name, a.facts, a.labels, a.quarantined, a.last_seen, a.created_at,"  \
	" (SELECT min(t.id) FROM tasks t WHERE t.lease_holder = a.id AND t.state = 'leased')"

static cJSON *agent_from_row(struct store *s, sqlite3_stmt *stmt, long long now)
{
	cJSON *a = cJSON_CreateObject();

	cJSON_AddNumberToObject(a, "id", (double)sqlite3_column_int64(stmt, 0));
	cJSON_AddStringToObject(a, "name", (const char *)sqlite3_column_text(stmt, 1));
	cJSON_AddItemToObject(a, "facts", column_json(stmt, 2));
	cJSON_AddItemToObject(a, "labels", column_json(stmt, 3));
	cJSON_AddStringToObject(a, "state", agent_state(s, stmt, 4, 5, now));
	add_time(a, "last_seen", stmt, 5);
	add_int_or_null(a, "current_task", stmt, 7);
	add_time(a, "created_at", stmt, 6);
	return a;
}

int store_agent_list(struct store *s, long long now, cJSON **ret_list)
{
	sqlite3_stmt *stmt;
	cJSON *out = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(out, "agents");

	pthread_mutex_lock(&s->reader_lock);
	stmt = db_prepare(s->reader, "SELECT " AGENT_COLUMNS " FROM agents a ORDER BY a.id");
	while (stmt && sqlite3_step(stmt) == SQLITE_ROW)
		cJSON_AddItemToArray(list, agent_from_row(s, stmt, now));
	sqlite3_finalize(stmt);
	pthread_mutex_unlock(&s->reader_lock);
	if (!stmt) {
		cJSON_Delete(out);
		return LL_ESTORE;
	}
	*ret_list = out;
	return 0;
}

/* Reads one agent with the writer's connection (inside an op). */
static int writer_agent_get(struct store *s, long long id, long long now, cJSON **ret)
{
	sqlite3_stmt *stmt = db_prepare(s->writer, "SELECT " AGENT_COLUMNS " FROM agents a WHERE a.id = ?");
	int rc = LL_ENOTFOUND;

	if (!stmt)
		return LL_ESTORE;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		*ret = agent_from_row(s, stmt, now);
		rc = 0;
	} else {
		err_set(LL_ENOTFOUND, "No agent has id %lld.", id);
	}
	sqlite3_finalize(stmt);
	return rc;
}

struct agent_patch_op {
	long long id;
	const cJSON *labels;
	int quarantine;
	long long now;
	cJSON *out;
};

static int op_agent_patch(struct store *s, void *arg)
{
	struct agent_patch_op *a = arg;
	cJSON *agent = NULL, *labels;
	const cJSON *item;
	char *text;
	int rc;

	if ((rc = writer_agent_get(s, a->id, a->now, &agent)) < 0)
		return rc;
	labels = cJSON_GetObjectItemCaseSensitive(agent, "labels");
	cJSON_ArrayForEach(item, a->labels) {
		cJSON_DeleteItemFromObjectCaseSensitive(labels, item->string);
		if (cJSON_IsString(item))
			cJSON_AddStringToObject(labels, item->string, item->valuestring);
	}
	if (cJSON_GetArraySize(labels) > 32) {
		cJSON_Delete(agent);
		return err_set(LL_ERANGE, "An agent has at most 32 labels.");
	}
	text = json_text(labels);
	cJSON_Delete(agent);
	rc = db_run(s->writer, "UPDATE agents SET labels = ? WHERE id = ?", "ti", text, a->id);
	free(text);
	if (rc == 0 && a->quarantine >= 0)
		rc = db_run(s->writer, "UPDATE agents SET quarantined = ? WHERE id = ?", "ii",
			    (long long)a->quarantine, a->id);
	if (rc == 0)
		rc = writer_agent_get(s, a->id, a->now, &a->out);
	return rc;
}

int store_agent_patch(struct store *s, long long agent_id, const cJSON *labels, int quarantine,
		      long long now, cJSON **ret_agent)
{
	struct agent_patch_op a = {agent_id, labels, quarantine, now, NULL};

	return store_write_answer(s, op_agent_patch, &a, &a.out, ret_agent);
}

/* -------------------------------------------------------------------- jobs */

static const char *const task_states[] = {"queued", "leased", "done", "dead", "cancelled", NULL};

static void log_state(const char *event, const char *id_key, long long id, const char *from,
		      const char *to, const char *reason)
{
	char text[24];

	snprintf(text, sizeof(text), "%lld", id);
	log_event(LOG_INFO, event, id_key, text, "from", from, "to", to, reason ? "reason" : NULL,
		  reason, NULL);
}

/* A job's state follows its tasks (DESIGN.md, "Data model"): cancelled
 * stays; all done is done; all finished with one dead is failed; anything
 * leased, finished or retried is running; else queued. */
static int job_refresh_state(struct store *s, long long job_id, long long now)
{
	sqlite3_stmt *stmt;
	long long count[5] = {0}, total = 0, attempts = 0;
	char current[16] = "";
	const char *next;
	int rc;

	stmt = db_prepare(s->writer, "SELECT state FROM jobs WHERE id = ?");
	if (!stmt)
		return LL_ESTORE;
	sqlite3_bind_int64(stmt, 1, job_id);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		snprintf(current, sizeof(current), "%s", (const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	if (strcmp(current, "cancelled") == 0 || !current[0])
		return 0;

	stmt = db_prepare(s->writer, "SELECT state, count(*), max(attempt) FROM tasks"
				     " WHERE job_id = ? GROUP BY state");
	if (!stmt)
		return LL_ESTORE;
	sqlite3_bind_int64(stmt, 1, job_id);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *st = (const char *)sqlite3_column_text(stmt, 0);
		for (int i = 0; task_states[i]; i++)
			if (strcmp(st, task_states[i]) == 0)
				count[i] = sqlite3_column_int64(stmt, 1);
		total += sqlite3_column_int64(stmt, 1);
		if (sqlite3_column_int64(stmt, 2) > attempts)
			attempts = sqlite3_column_int64(stmt, 2);
	}
	sqlite3_finalize(stmt);

	if (total > 0 && count[2] == total)
		next = "done";
	else if (total > 0 && count[2] + count[3] == total)
		next = "failed";
	else if (count[1] || count[2] || count[3] || attempts > 0)
		next = "running";
	else
		next = "queued";
	if (strcmp(next, current) == 0)
		return 0;
	rc = db_run(s->writer, "UPDATE jobs SET state = ?, updated_at = ? WHERE id = ?", "tii", next,
		    now, job_id);
	if (rc == 0)
		log_state("job_state", "job_id", job_id, current, next, NULL);
	return rc;
}

#define JOB_COLUMNS "id, name, family, state, priority, submitted_by, created_at, updated_at"

static cJSON *job_summary(sqlite3 *db, sqlite3_stmt *row)
{
	cJSON *j = cJSON_CreateObject(), *by_state;
	sqlite3_stmt *stmt;
	long long id = sqlite3_column_int64(row, 0), total = 0;

	cJSON_AddNumberToObject(j, "id", (double)id);
	cJSON_AddStringToObject(j, "name", (const char *)sqlite3_column_text(row, 1));
	cJSON_AddStringToObject(j, "family", (const char *)sqlite3_column_text(row, 2));
	cJSON_AddStringToObject(j, "state", (const char *)sqlite3_column_text(row, 3));
	cJSON_AddNumberToObject(j, "priority", (double)sqlite3_column_int64(row, 4));
	cJSON_AddStringToObject(j, "submitted_by", (const char *)sqlite3_column_text(row, 5));
	add_time(j, "created_at", row, 6);
	add_time(j, "updated_at", row, 7);
	by_state = cJSON_CreateObject();
	for (int i = 0; task_states[i]; i++)
		cJSON_AddNumberToObject(by_state, task_states[i], 0);
	stmt = db_prepare(db, "SELECT state, count(*) FROM tasks WHERE job_id = ? GROUP BY state");
	if (stmt) {
		sqlite3_bind_int64(stmt, 1, id);
		while (sqlite3_step(stmt) == SQLITE_ROW) {
			const char *st = (const char *)sqlite3_column_text(stmt, 0);
			long long n = sqlite3_column_int64(stmt, 1);
			cJSON_ReplaceItemInObjectCaseSensitive(by_state, st, cJSON_CreateNumber((double)n));
			total += n;
		}
		sqlite3_finalize(stmt);
	}
	cJSON_AddNumberToObject(j, "task_count", (double)total);
	cJSON_AddItemToObject(j, "tasks_by_state", by_state);
	return j;
}

static int job_summary_by_id(sqlite3 *db, long long job_id, cJSON **ret)
{
	sqlite3_stmt *stmt = db_prepare(db, "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?");
	int rc = LL_ENOTFOUND;

	if (!stmt)
		return LL_ESTORE;
	sqlite3_bind_int64(stmt, 1, job_id);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		*ret = job_summary(db, stmt);
		rc = 0;
	} else {
		err_set(LL_ENOTFOUND, "No job has id %lld.", job_id);
	}
	sqlite3_finalize(stmt);
	return rc;
}

struct job_create_op {
	const cJSON *spec;
	const char *submitted_by;
	long long now;
	cJSON *out;
};

static int insert_task(struct store *s, long long job_id, const cJSON *cell, long long pinned,
		       long long priority, long long now)
{
	char *text = json_text(cell);
	sqlite3_stmt *stmt;
	int rc;

	if (!text)
		return LL_ENOMEM;
	stmt = db_prepare(s->writer, "INSERT INTO tasks (job_id, cell, pinned_agent, state, priority,"
				     " created_at, updated_at) VALUES (?, ?, ?, 'queued', ?, ?, ?)");
	if (!stmt) {
		free(text);
		return LL_ESTORE;
	}
	sqlite3_bind_int64(stmt, 1, job_id);
	sqlite3_bind_text(stmt, 2, text, -1, free);
	if (pinned)
		sqlite3_bind_int64(stmt, 3, pinned);
	sqlite3_bind_int64(stmt, 4, priority);
	sqlite3_bind_int64(stmt, 5, now);
	sqlite3_bind_int64(stmt, 6, now);
	rc = sqlite3_step(stmt) == SQLITE_DONE ? 0 : db_error(s->writer, "insert task");
	sqlite3_finalize(stmt);
	return rc;
}

static int op_job_create(struct store *s, void *arg)
{
	struct job_create_op *a = arg;
	const cJSON *matrix = cJSON_GetObjectItemCaseSensitive(a->spec, "matrix");
	const cJSON *selector = cJSON_GetObjectItemCaseSensitive(matrix, "each_agent");
	long long priority = (long long)cJSON_GetObjectItemCaseSensitive(a->spec, "priority")->valuedouble;
	long long job_id, tasks = 0;
	char *spec_text = json_text(a->spec);
	int rc;

	if (!spec_text)
		return LL_ENOMEM;
	rc = db_run(s->writer,
		    "INSERT INTO jobs (name, family, spec, priority, state, submitted_by, created_at,"
		    " updated_at) VALUES (?, ?, ?, ?, 'queued', ?, ?, ?)",
		    "tttitii", cJSON_GetObjectItemCaseSensitive(a->spec, "name")->valuestring,
		    cJSON_GetObjectItemCaseSensitive(a->spec, "family")->valuestring, spec_text, priority,
		    a->submitted_by, a->now, a->now);
	free(spec_text);
	if (rc < 0)
		return rc;
	job_id = sqlite3_last_insert_rowid(s->writer);

	if (selector) {
		/* each_agent: one task pinned to every matching agent enrolled now. */
		sqlite3_stmt *stmt = db_prepare(s->writer, "SELECT id, name, facts, labels FROM agents"
							   " WHERE quarantined = 0 ORDER BY id");
		if (!stmt)
			return LL_ESTORE;
		while (rc == 0 && sqlite3_step(stmt) == SQLITE_ROW) {
			cJSON *facts = column_json(stmt, 2), *labels = column_json(stmt, 3);
			if (job_spec_selector_matches(selector, facts, labels)) {
				cJSON *cell = cJSON_CreateObject();
				cJSON_AddStringToObject(cell, "agent", (const char *)sqlite3_column_text(stmt, 1));
				rc = insert_task(s, job_id, cell, sqlite3_column_int64(stmt, 0), priority, a->now);
				cJSON_Delete(cell);
				tasks++;
			}
			cJSON_Delete(facts);
			cJSON_Delete(labels);
		}
		sqlite3_finalize(stmt);
		if (rc == 0 && tasks == 0)
			return err_set(LL_EINVAL, "No enrolled, non-quarantined agent matches the "
						  "job's each_agent selector.");
	} else {
		cJSON *cells = NULL, *cell;
		if ((rc = job_spec_expand_cells(a->spec, &cells)) < 0)
			return rc;
		cJSON_ArrayForEach(cell, cells) {
			if ((rc = insert_task(s, job_id, cell, 0, priority, a->now)) < 0)
				break;
			tasks++;
		}
		cJSON_Delete(cells);
	}
	if (rc < 0)
		return rc;
	a->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(a->out, "id", (double)job_id);
	cJSON_AddNumberToObject(a->out, "task_count", (double)tasks);
	cJSON_AddStringToObject(a->out, "state", "queued");
	log_state("job_state", "job_id", job_id, "", "queued", NULL);
	return 0;
}

int store_job_create(struct store *s, const cJSON *spec, const char *submitted_by, long long now,
		     cJSON **ret_body)
{
	struct job_create_op a = {spec, submitted_by, now, NULL};

	return store_write_answer(s, op_job_create, &a, &a.out, ret_body);
}

int store_job_list(struct store *s, const char *state, int limit, long long before,
		   cJSON **ret_list)
{
	sqlite3_stmt *stmt;
	cJSON *out = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(out, "jobs");
	long long last = 0;
	int n = 0;

	pthread_mutex_lock(&s->reader_lock);
	db_exec(s->reader, "BEGIN");
	stmt = db_prepare(s->reader, "SELECT " JOB_COLUMNS " FROM jobs"
				     " WHERE (?1 IS NULL OR state = ?1) AND (?2 = 0 OR id < ?2)"
				     " ORDER BY id DESC LIMIT ?3");
	if (stmt) {
		if (state)
			sqlite3_bind_text(stmt, 1, state, -1, SQLITE_STATIC);
		sqlite3_bind_int64(stmt, 2, before);
		sqlite3_bind_int64(stmt, 3, limit + 1);
		while (sqlite3_step(stmt) == SQLITE_ROW) {
			if (n++ == limit)
				break;
			last = sqlite3_column_int64(stmt, 0);
			cJSON_AddItemToArray(list, job_summary(s->reader, stmt));
		}
	}
	sqlite3_finalize(stmt);
	db_exec(s->reader, "COMMIT");
	pthread_mutex_unlock(&s->reader_lock);
	if (!stmt) {
		cJSON_Delete(out);
		return LL_ESTORE;
	}
	if (n > limit)
		cJSON_AddNumberToObject(out, "next_before", (double)last);
	else
		cJSON_AddNullToObject(out, "next_before");
	*ret_list = out;
	return 0;
}

static cJSON *task_from_row(sqlite3_stmt *stmt)
{
	/* columns: id, cell, pinned_agent, lease_holder, state, attempt, phase,
	 * percent, lease_expires, not_before, last_error, result_id */
	cJSON *t = cJSON_CreateObject();
	const char *state = (const char *)sqlite3_column_text(stmt, 4);
	bool leased = strcmp(state, "leased") == 0;

	cJSON_AddNumberToObject(t, "id", (double)sqlite3_column_int64(stmt, 0));
	cJSON_AddItemToObject(t, "cell", column_json(stmt, 1));
	if (sqlite3_column_type(stmt, 2) != SQLITE_NULL)
		add_int_or_null(t, "agent_id", stmt, 2);
	else
		add_int_or_null(t, "agent_id", stmt, 3);
	cJSON_AddStringToObject(t, "state", state);
	cJSON_AddNumberToObject(t, "attempt", (double)sqlite3_column_int64(stmt, 5));
	add_text_or_null(t, "phase", stmt, 6);
	add_int_or_null(t, "percent", stmt, 7);
	if (leased)
		add_time(t, "lease_expires_at", stmt, 8);
	else
		cJSON_AddNullToObject(t, "lease_expires_at");
	if (strcmp(state, "queued") == 0 && sqlite3_column_int64(stmt, 5) > 0)
		add_time(t, "retry_at", stmt, 9);
	else
		cJSON_AddNullToObject(t, "retry_at");
	add_text_or_null(t, "last_error", stmt, 10);
	add_int_or_null(t, "result_id", stmt, 11);
	return t;
}

int store_job_get(struct store *s, long long job_id, cJSON **ret_job)
{
	sqlite3_stmt *stmt;
	cJSON *job = NULL, *tasks;
	int rc;

	pthread_mutex_lock(&s->reader_lock);
	db_exec(s->reader, "BEGIN");
	rc = job_summary_by_id(s->reader, job_id, &job);
	if (rc == 0) {
		stmt = db_prepare(s->reader, "SELECT spec FROM jobs WHERE id = ?");
		if (stmt) {
			sqlite3_bind_int64(stmt, 1, job_id);
			if (sqlite3_step(stmt) == SQLITE_ROW)
				cJSON_AddItemToObject(job, "spec", column_json(stmt, 0));
			sqlite3_finalize(stmt);
		}
		tasks = cJSON_AddArrayToObject(job, "tasks");
		stmt = db_prepare(s->reader,
				  "SELECT t.id, t.cell, t.pinned_agent, t.lease_holder, t.state, t.attempt,"
				  " t.phase, t.percent, t.lease_expires, t.not_before, t.last_error,"
				  " (SELECT r.id FROM results r WHERE r.task_id = t.id ORDER BY r.id DESC LIMIT 1)"
				  " FROM tasks t WHERE t.job_id = ? ORDER BY t.id");
		if (!stmt)
			rc = LL_ESTORE;
		else {
			sqlite3_bind_int64(stmt, 1, job_id);
			while (sqlite3_step(stmt) == SQLITE_ROW)
				cJSON_AddItemToArray(tasks, task_from_row(stmt));
			sqlite3_finalize(stmt);
		}
	}
	db_exec(s->reader, "COMMIT");
	pthread_mutex_unlock(&s->reader_lock);
	if (rc < 0) {
		cJSON_Delete(job);
		return rc;
	}
	*ret_job = job;
	return 0;
}

struct job_cancel_op {
	long long id, now;
	cJSON *out;
};

static int op_job_cancel(struct store *s, void *arg)
{
	struct job_cancel_op *a = arg;
	cJSON *job = NULL;
	const char *state;
	int rc;

	if ((rc = job_summary_by_id(s->writer, a->id, &job)) < 0)
		return rc;
	state = cJSON_GetObjectItemCaseSensitive(job, "state")->valuestring;
	if (strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 ||
	    strcmp(state, "cancelled") == 0) {
		rc = err_set(LL_ECONFLICT, "Job %lld is already %s.", a->id, state);
		cJSON_Delete(job);
		return rc;
	}
	log_state("job_state", "job_id", a->id, state, "cancelled", "cancelled by a user");
	cJSON_Delete(job);
	/* Leased tasks keep their holder, who learns of the cancellation at
	 * its next heartbeat (cancel_notified = 0 until then). */
	if ((rc = db_run(s->writer,
			 "UPDATE tasks SET state = 'cancelled', updated_at = ?,"
			 " cancel_notified = CASE WHEN state = 'leased' THEN 0 ELSE 1 END"
			 " WHERE job_id = ? AND state IN ('queued', 'leased')",
			 "ii", a->now, a->id)) < 0 ||
	    (rc = db_run(s->writer, "UPDATE jobs SET state = 'cancelled', updated_at = ? WHERE id = ?",
			 "ii", a->now, a->id)) < 0)
		return rc;
	return job_summary_by_id(s->writer, a->id, &a->out);
}

int store_job_cancel(struct store *s, long long job_id, long long now, cJSON **ret_job)
{
	struct job_cancel_op a = {job_id, now, NULL};

	return store_write_answer(s, op_job_cancel, &a, &a.out, ret_job);
}

/* ------------------------------------------------------------------- tasks */

struct lease_op {
	long long agent_id, now;
	cJSON *out;
};

static int build_lease(struct store *s, long long task_id, long long job_id, long long attempt,
		       cJSON *cell, long long expires, cJSON **ret)
{
	sqlite3_stmt *stmt = db_prepare(s->writer, "SELECT spec FROM jobs WHERE id = ?");
	cJSON *lease, *spec, *job;
	static const char *const copied[] = {"name", "family", "generator", "variants", "measure"};

	if (!stmt)
		return LL_ESTORE;
	sqlite3_bind_int64(stmt, 1, job_id);
	if (sqlite3_step(stmt) != SQLITE_ROW) {
		sqlite3_finalize(stmt);
		return err_set(LL_ESTORE, "Task %lld has no job.", task_id);
	}
	spec = column_json(stmt, 0);
	sqlite3_finalize(stmt);

	lease = cJSON_CreateObject();
	cJSON_AddNumberToObject(lease, "task_id", (double)task_id);
	cJSON_AddNumberToObject(lease, "job_id", (double)job_id);
	cJSON_AddNumberToObject(lease, "attempt", (double)attempt);
	cJSON_AddItemToObject(lease, "cell", cell);
	add_time_value(lease, "lease_expires_at", expires);
	/* Heartbeat three times per lease, at least once a second. */
	cJSON_AddNumberToObject(lease, "lease_seconds", (double)((s->options.lease_ms + 999) / 1000));
	cJSON_AddNumberToObject(lease, "heartbeat_seconds",
				(double)(s->options.lease_ms >= 6000 ? s->options.lease_ms / 3000 : 1));
	job = cJSON_AddObjectToObject(lease, "job");
	cJSON_AddNumberToObject(job, "id", (double)job_id);
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++)
		cJSON_AddItemToObject(job, copied[i],
				      cJSON_DetachItemFromObjectCaseSensitive(spec, copied[i]));
	cJSON_Delete(spec);
	*ret = lease;
	return 0;
}

static int op_task_lease(struct store *s, void *arg)
{
	struct lease_op *a = arg;
	sqlite3_stmt *stmt;
	cJSON *facts = NULL, *labels = NULL, *cell = NULL;
	long long task_id = 0, job_id = 0, attempt = 0, expires;
	bool quarantined = true;
	int rc;

	stmt = db_prepare(s->writer, "SELECT facts, labels, quarantined FROM agents WHERE id = ?");
	if (!stmt)
		return LL_ESTORE;
	sqlite3_bind_int64(stmt, 1, a->agent_id);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		facts = column_json(stmt, 0);
		labels = column_json(stmt, 1);
		quarantined = sqlite3_column_int(stmt, 2) != 0;
	}
	sqlite3_finalize(stmt);
	if (!facts) {
		cJSON_Delete(labels);
		return err_set(LL_ENOTFOUND, "No agent has id %lld.", a->agent_id);
	}
	rc = db_run(s->writer, "UPDATE agents SET last_seen = ? WHERE id = ?", "ii", a->now, a->agent_id);
	if (rc < 0 || quarantined)
		goto out;

	stmt = db_prepare(s->writer,
			  "SELECT id, job_id, cell, pinned_agent, attempt FROM tasks"
			  " WHERE state = 'queued' AND not_before <= ?1"
			  " AND (pinned_agent IS NULL OR pinned_agent = ?2)"
			  " ORDER BY priority DESC, id LIMIT ?3");
	if (!stmt) {
		rc = LL_ESTORE;
		goto out;
	}
	sqlite3_bind_int64(stmt, 1, a->now);
	sqlite3_bind_int64(stmt, 2, a->agent_id);
	sqlite3_bind_int64(stmt, 3, STORE_LEASE_SCAN);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		cJSON *c = column_json(stmt, 2);
		bool pinned = sqlite3_column_type(stmt, 3) != SQLITE_NULL;
		if (pinned || job_spec_cell_matches(c, facts, labels)) {
			task_id = sqlite3_column_int64(stmt, 0);
			job_id = sqlite3_column_int64(stmt, 1);
			attempt = sqlite3_column_int64(stmt, 4) + 1;
			cell = c;
			break;
		}
		cJSON_Delete(c);
	}
	sqlite3_finalize(stmt);
	if (!task_id)
		goto out;

	expires = a->now + s->options.lease_ms;
	if ((rc = db_run(s->writer,
			 "UPDATE tasks SET state = 'leased', attempt = ?, lease_holder = ?,"
			 " lease_expires = ?, phase = NULL, percent = NULL, updated_at = ? WHERE id = ?",
			 "iiiii", attempt, a->agent_id, expires, a->now, task_id)) < 0 ||
	    (rc = db_run(s->writer,
			 "INSERT INTO task_attempts (task_id, attempt, agent_id, leased_at) VALUES (?, ?, ?, ?)",
			 "iiii", task_id, attempt, a->agent_id, a->now)) < 0 ||
	    (rc = job_refresh_state(s, job_id, a->now)) < 0)
		goto out;
	rc = build_lease(s, task_id, job_id, attempt, cell, expires, &a->out);
	cell = NULL;
	if (rc == 0) {
		char task_text[24], agent_text[24];
		snprintf(task_text, sizeof(task_text), "%lld", task_id);
		snprintf(agent_text, sizeof(agent_text), "%lld", a->agent_id);
		log_event(LOG_INFO, "task_state", "task_id", task_text, "from", "queued", "to", "leased",
			  "agent_id", agent_text, NULL);
	}
out:
	cJSON_Delete(cell);
	cJSON_Delete(facts);
	cJSON_Delete(labels);
	return rc;
}

int store_task_lease(struct store *s, long long agent_id, long long now, cJSON **ret_lease)
{
	struct lease_op a = {agent_id, now, NULL};

	return store_write_answer(s, op_task_lease, &a, &a.out, ret_lease);
}

struct heartbeat_op {
	long long agent_id, now;
	cJSON *out;
};

static int op_agent_heartbeat(struct store *s, void *arg)
{
	struct heartbeat_op *a = arg;
	long long expires = a->now + s->options.lease_ms;
	sqlite3_stmt *stmt;
	cJSON *tasks;
	int rc;

	if ((rc = db_run(s->writer, "UPDATE agents SET last_seen = ? WHERE id = ?", "ii", a->now,
			 a->agent_id)) < 0 ||
	    (rc = db_run(s->writer,
			 "UPDATE tasks SET lease_expires = ? WHERE lease_holder = ? AND state = 'leased'",
			 "ii", expires, a->agent_id)) < 0)
		return rc;
	a->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(a->out, "agent_id", (double)a->agent_id);
	tasks = cJSON_AddArrayToObject(a->out, "tasks");
	stmt = db_prepare(s->writer,
			  "SELECT id, attempt, state, lease_expires FROM tasks WHERE lease_holder = ?"
			  " AND (state = 'leased' OR (state = 'cancelled' AND cancel_notified = 0))"
			  " ORDER BY id");
	if (!stmt)
		return LL_ESTORE;
	sqlite3_bind_int64(stmt, 1, a->agent_id);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		cJSON *t = cJSON_CreateObject();
		bool cancelled = strcmp((const char *)sqlite3_column_text(stmt, 2), "cancelled") == 0;
		cJSON_AddNumberToObject(t, "task_id", (double)sqlite3_column_int64(stmt, 0));
		cJSON_AddNumberToObject(t, "attempt", (double)sqlite3_column_int64(stmt, 1));
		cJSON_AddStringToObject(t, "state", (const char *)sqlite3_column_text(stmt, 2));
		cJSON_AddBoolToObject(t, "cancelled", cancelled);
		if (cancelled)
			cJSON_AddNullToObject(t, "lease_expires_at");
		else
			add_time(t, "lease_expires_at", stmt, 3);
		cJSON_AddItemToArray(tasks, t);
	}
	sqlite3_finalize(stmt);
	return db_run(s->writer,
		      "UPDATE tasks SET cancel_notified = 1 WHERE lease_holder = ? AND state = 'cancelled'",
		      "i", a->agent_id);
}

int store_agent_heartbeat(struct store *s, long long agent_id, long long now, cJSON **ret_body)
{
	struct heartbeat_op a = {agent_id, now, NULL};

	return store_write_answer(s, op_agent_heartbeat, &a, &a.out, ret_body);
}

struct task_row {
	long long job_id, attempt, holder;
	char state[16];
};

/* Checks that AGENT may report on (TASK, ATTEMPT): the task exists
 * (LL_ENOTFOUND), the agent held some attempt of it (LL_EFORBIDDEN), this
 * is the current, leased attempt held by the agent (else
 * STORE_STALE_ATTEMPT, or STORE_TASK_CANCELLED for a cancelled job). */
static int check_holder(struct store *s, long long agent_id, long long task_id, long long attempt,
			struct task_row *ret)
{
	sqlite3_stmt *stmt;
	struct task_row row = {0};
	long long held;
	bool found = false;
	int rc;

	stmt = db_prepare(s->writer, "SELECT job_id, attempt, lease_holder, state FROM tasks WHERE id = ?");
	if (!stmt)
		return LL_ESTORE;
	sqlite3_bind_int64(stmt, 1, task_id);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		found = true;
		row.job_id = sqlite3_column_int64(stmt, 0);
		row.attempt = sqlite3_column_int64(stmt, 1);
		row.holder = sqlite3_column_int64(stmt, 2);
		snprintf(row.state, sizeof(row.state), "%s", (const char *)sqlite3_column_text(stmt, 3));
	}
	sqlite3_finalize(stmt);
	if (!found)
		return err_set(LL_ENOTFOUND, "No task has id %lld.", task_id);
	if ((rc = db_int(s->writer, &held, 0,
			 "SELECT count(*) FROM task_attempts WHERE task_id = ? AND agent_id = ?", "ii",
			 task_id, agent_id)) < 0)
		return rc;
	if (!held)
		return err_set(LL_EFORBIDDEN, "Task %lld was never leased to this agent.", task_id);
	if (strcmp(row.state, "cancelled") == 0 && row.attempt == attempt && row.holder == agent_id)
		return err_set(STORE_TASK_CANCELLED, "Task %lld was cancelled with its job.", task_id);
	if (strcmp(row.state, "leased") != 0 || row.attempt != attempt || row.holder != agent_id)
		return err_set(STORE_STALE_ATTEMPT,
			       "Attempt %lld of task %lld is not the current lease (the task is %s, "
			       "attempt %lld).", attempt, task_id, row.state, row.attempt);
	*ret = row;
	return 0;
}

struct progress_op {
	long long agent_id, task_id, attempt;
	const char *phase;
	int percent;
	long long now;
	cJSON *out;
};

static int op_task_progress(struct store *s, void *arg)
{
	struct progress_op *a = arg;
	struct task_row row;
	long long expires = a->now + s->options.lease_ms;
	int rc;

	if ((rc = db_run(s->writer, "UPDATE agents SET last_seen = ? WHERE id = ?", "ii", a->now,
			 a->agent_id)) < 0 ||
	    (rc = check_holder(s, a->agent_id, a->task_id, a->attempt, &row)) < 0 ||
	    (rc = db_run(s->writer,
			 "UPDATE tasks SET phase = ?, percent = ?, lease_expires = ?, updated_at = ?"
			 " WHERE id = ?",
			 "tiiii", a->phase, (long long)a->percent, expires, a->now, a->task_id)) < 0)
		return rc;
	a->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(a->out, "task_id", (double)a->task_id);
	cJSON_AddNumberToObject(a->out, "attempt", (double)a->attempt);
	cJSON_AddStringToObject(a->out, "state", "leased");
	cJSON_AddBoolToObject(a->out, "cancelled", false);
	add_time_value(a->out, "lease_expires_at", expires);
	return 0;
}

int store_task_progress(struct store *s, long long agent_id, long long task_id, long long attempt,
			const char *phase, int percent, long long now, cJSON **ret_body)
{
	struct progress_op a = {agent_id, task_id, attempt, phase, percent, now, NULL};

	return store_write_answer(s, op_task_progress, &a, &a.out, ret_body);
}

struct result_op {
	long long agent_id, task_id, attempt;
	const char *body;
	size_t len;
	long long now;
	cJSON *out;
	bool replayed;
};

static cJSON *result_answer(long long task_id, long long attempt, long long result_id)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "task_id", (double)task_id);
	cJSON_AddNumberToObject(o, "attempt", (double)attempt);
	cJSON_AddNumberToObject(o, "result_id", (double)result_id);
	cJSON_AddStringToObject(o, "state", "done");
	return o;
}

static int op_task_result(struct store *s, void *arg)
{
	struct result_op *a = arg;
	struct task_row row;
	sqlite3_stmt *stmt;
	long long existing = 0, existing_agent = 0, result_id;
	int rc;

	/* A replay of a stored (task, attempt) gets the same answer. */
	stmt = db_prepare(s->writer, "SELECT id, agent_id FROM results WHERE task_id = ? AND attempt = ?");
	if (!stmt)
		return LL_ESTORE;
	sqlite3_bind_int64(stmt, 1, a->task_id);
	sqlite3_bind_int64(stmt, 2, a->attempt);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		existing = sqlite3_column_int64(stmt, 0);
		existing_agent = sqlite3_column_int64(stmt, 1);
	}
	sqlite3_finalize(stmt);
	if (existing) {
		if (existing_agent != a->agent_id)
			return err_set(LL_EFORBIDDEN, "Task %lld was never leased to this agent.", a->task_id);
		a->out = result_answer(a->task_id, a->attempt, existing);
		a->replayed = true;
		return db_run(s->writer, "UPDATE agents SET last_seen = ? WHERE id = ?", "ii", a->now,
			      a->agent_id);
	}
	if ((rc = check_holder(s, a->agent_id, a->task_id, a->attempt, &row)) < 0)
		return rc;
	stmt = db_prepare(s->writer, "INSERT INTO results (task_id, attempt, agent_id, body, created_at)"
				     " VALUES (?, ?, ?, ?, ?)");
	if (!stmt)
		return LL_ESTORE;
	sqlite3_bind_int64(stmt, 1, a->task_id);
	sqlite3_bind_int64(stmt, 2, a->attempt);
	sqlite3_bind_int64(stmt, 3, a->agent_id);
	sqlite3_bind_text(stmt, 4, a->body, (int)a->len, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 5, a->now);
	rc = sqlite3_step(stmt) == SQLITE_DONE ? 0 : db_error(s->writer, "insert result");
	sqlite3_finalize(stmt);
	if (rc < 0)
		return rc;
	result_id = sqlite3_last_insert_rowid(s->writer);
	if ((rc = db_run(s->writer,
			 "UPDATE tasks SET state = 'done', percent = 100, lease_expires = NULL,"
			 " updated_at = ? WHERE id = ?", "ii", a->now, a->task_id)) < 0 ||
	    (rc = db_run(s->writer,
			 "UPDATE task_attempts SET ended_at = ?, outcome = 'done' WHERE task_id = ? AND attempt = ?",
			 "iii", a->now, a->task_id, a->attempt)) < 0 ||
	    (rc = db_run(s->writer, "UPDATE agents SET last_seen = ? WHERE id = ?", "ii", a->now,
			 a->agent_id)) < 0 ||
	    (rc = job_refresh_state(s, row.job_id, a->now)) < 0)
		return rc;
	log_state("task_state", "task_id", a->task_id, "leased", "done", NULL);
	a->out = result_answer(a->task_id, a->attempt, result_id);
	return 0;
}

int store_task_result(struct store *s, long long agent_id, long long task_id, long long attempt,
		      const char *body, size_t body_len, long long now, cJSON **ret_body,
		      bool *ret_replayed)
{
	struct result_op a = {agent_id, task_id, attempt, body, body_len, now, NULL, false};
	int rc = store_write_answer(s, op_task_result, &a, &a.out, ret_body);

	if (rc == 0)
		*ret_replayed = a.replayed;
	return rc;
}

/* Ends the current attempt of a leased task: back to the queue after
 * DELAY_MS, or dead when RETRY is false or the attempts are used up. */
static int end_attempt(struct store *s, long long task_id, long long job_id, long long attempt,
		       const char *outcome, const char *reason, bool retry, long long delay_ms,
		       long long now, const char **ret_state, long long *ret_retry_at)
{
	const char *next = retry && attempt < s->options.max_attempts ? "queued" : "dead";
	long long retry_at = now + delay_ms;
	int rc;

	if ((rc = db_run(s->writer,
			 "UPDATE tasks SET state = ?, lease_holder = NULL, lease_expires = NULL,"
			 " not_before = ?, last_error = ?, updated_at = ? WHERE id = ?",
			 "titii", next, retry_at, reason, now, task_id)) < 0 ||
	    (rc = db_run(s->writer,
			 "UPDATE task_attempts SET ended_at = ?, outcome = ? WHERE task_id = ? AND attempt = ?",
			 "itii", now, outcome, task_id, attempt)) < 0 ||
	    (rc = job_refresh_state(s, job_id, now)) < 0)
		return rc;
	log_state("task_state", "task_id", task_id, "leased", next, reason);
	*ret_state = next;
	*ret_retry_at = retry_at;
	return 0;
}

struct fail_op {
	long long agent_id, task_id, attempt;
	const char *reason;
	bool retryable;
	long long now;
	cJSON *out;
};

static int op_task_fail(struct store *s, void *arg)
{
	struct fail_op *a = arg;
	struct task_row row;
	const char *state;
	long long delay = s->options.backoff_ms, retry_at;
	int rc;

	if ((rc = check_holder(s, a->agent_id, a->task_id, a->attempt, &row)) < 0)
		return rc;
	/* Exponential backoff: backoff_ms, then twice that per attempt, capped. */
	for (long long i = 1; i < a->attempt && delay < s->options.backoff_max_ms; i++)
		delay *= 2;
	if (delay > s->options.backoff_max_ms)
		delay = s->options.backoff_max_ms;
	if ((rc = end_attempt(s, a->task_id, row.job_id, a->attempt, "failed", a->reason, a->retryable,
			      delay, a->now, &state, &retry_at)) < 0 ||
	    (rc = db_run(s->writer, "UPDATE agents SET last_seen = ? WHERE id = ?", "ii", a->now,
			 a->agent_id)) < 0)
		return rc;
	a->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(a->out, "task_id", (double)a->task_id);
	cJSON_AddNumberToObject(a->out, "attempt", (double)a->attempt);
	cJSON_AddStringToObject(a->out, "state", state);
	if (strcmp(state, "queued") == 0)
		add_time_value(a->out, "retry_at", retry_at);
	else
		cJSON_AddNullToObject(a->out, "retry_at");
	return 0;
}

int store_task_fail(struct store *s, long long agent_id, long long task_id, long long attempt,
		    const char *reason, bool retryable, long long now, cJSON **ret_body)
{
	struct fail_op a = {agent_id, task_id, attempt, reason, retryable, now, NULL};

	return store_write_answer(s, op_task_fail, &a, &a.out, ret_body);
}

struct expire_op {
	long long now;
	int expired;
};

static int op_expire_leases(struct store *s, void *arg)
{
	struct expire_op *a = arg;
	sqlite3_stmt *stmt;
	long long ids[64][3];
	int n = 0, rc = 0;

	stmt = db_prepare(s->writer, "SELECT id, job_id, attempt FROM tasks"
				     " WHERE state = 'leased' AND lease_expires < ? LIMIT 64");
	if (!stmt)
		return LL_ESTORE;
	sqlite3_bind_int64(stmt, 1, a->now);
	while (n < 64 && sqlite3_step(stmt) == SQLITE_ROW) {
		ids[n][0] = sqlite3_column_int64(stmt, 0);
		ids[n][1] = sqlite3_column_int64(stmt, 1);
		ids[n][2] = sqlite3_column_int64(stmt, 2);
		n++;
	}
	sqlite3_finalize(stmt);
	for (int i = 0; i < n && rc == 0; i++) {
		const char *state;
		long long retry_at;
		char reason[96];
		snprintf(reason, sizeof(reason), "The lease of attempt %lld expired.", ids[i][2]);
		/* The holder vanished, not the task's fault: no backoff. */
		rc = end_attempt(s, ids[i][0], ids[i][1], ids[i][2], "expired", reason, true, 0, a->now,
				 &state, &retry_at);
	}
	a->expired = n;
	return rc;
}

int store_expire_leases(struct store *s, long long now, int *ret_expired)
{
	struct expire_op a = {now, 0};
	long long leased;
	int rc;

	/* A cheap read first: most sweeps find nothing to do. */
	pthread_mutex_lock(&s->reader_lock);
	rc = db_int(s->reader, &leased, 0,
		    "SELECT count(*) FROM tasks WHERE state = 'leased' AND lease_expires < ?", "i", now);
	pthread_mutex_unlock(&s->reader_lock);
	if (rc < 0)
		return rc;
	*ret_expired = 0;
	if (!leased)
		return 0;
	if ((rc = store_write(s, op_expire_leases, &a)) < 0)
		return rc;
	*ret_expired = a.expired;
	return 0;
}

int store_result_get(struct store *s, long long result_id, char **ret_text)
{
	sqlite3_stmt *stmt;
	int rc = LL_ENOTFOUND;

	pthread_mutex_lock(&s->reader_lock);
	stmt = db_prepare(s->reader, "SELECT body FROM results WHERE id = ?");
	if (stmt) {
		sqlite3_bind_int64(stmt, 1, result_id);
		if (sqlite3_step(stmt) == SQLITE_ROW) {
			*ret_text = strdup((const char *)sqlite3_column_text(stmt, 0));
			rc = *ret_text ? 0 : LL_ENOMEM;
		} else {
			err_set(LL_ENOTFOUND, "No result has id %lld.", result_id);
		}
	}
	sqlite3_finalize(stmt);
	pthread_mutex_unlock(&s->reader_lock);
	return stmt ? rc : LL_ESTORE;
}

/* ----------------------------------------------------------------- reports */

int store_job_report_rows(struct store *s, long long job_id, bool with_bodies,
			  int (*fn)(void *context, const struct store_report_row *row),
			  void *context)
{
	sqlite3_stmt *stmt;
	long long exists = 0;
	int rc;

	pthread_mutex_lock(&s->reader_lock);
	db_exec(s->reader, "BEGIN");
	rc = db_int(s->reader, &exists, 0, "SELECT count(*) FROM jobs WHERE id = ?", "i", job_id);
	if (rc == 0 && !exists)
		rc = err_set(LL_ENOTFOUND, "No job has id %lld.", job_id);
	stmt = rc < 0 ? NULL
		      : db_prepare(s->reader,
				   "SELECT t.id, t.cell, t.state, t.last_error, r.id, m.body, m.version,"
				   " CASE WHEN ?2 OR m.body IS NULL THEN r.body END"
				   " FROM tasks t"
				   " LEFT JOIN results r ON r.id = (SELECT max(id) FROM results WHERE task_id = t.id)"
				   " LEFT JOIN result_summaries m ON m.result_id = r.id"
				   " WHERE t.job_id = ?1 ORDER BY t.id");
	if (rc == 0 && !stmt)
		rc = LL_ESTORE;
	if (stmt) {
		sqlite3_bind_int64(stmt, 1, job_id);
		sqlite3_bind_int(stmt, 2, with_bodies);
		while (rc == 0 && sqlite3_step(stmt) == SQLITE_ROW) {
			struct store_report_row row = {
				.task_id = sqlite3_column_int64(stmt, 0),
				.cell = (const char *)sqlite3_column_text(stmt, 1),
				.state = (const char *)sqlite3_column_text(stmt, 2),
				.last_error = (const char *)sqlite3_column_text(stmt, 3),
				.result_id = sqlite3_column_int64(stmt, 4),
				.summary = (const char *)sqlite3_column_text(stmt, 5),
				.summary_version = sqlite3_column_int(stmt, 6),
				.body = (const char *)sqlite3_column_text(stmt, 7),
			};
			rc = fn(context, &row);
		}
		sqlite3_finalize(stmt);
	}
	db_exec(s->reader, "COMMIT");
	pthread_mutex_unlock(&s->reader_lock);
	return rc;
}

int store_results_unsummarized(struct store *s, int version, long long limit,
			       void (*fn)(void *context, long long result_id), void *context)
{
	sqlite3_stmt *stmt;

	pthread_mutex_lock(&s->reader_lock);
	stmt = db_prepare(s->reader, "SELECT r.id FROM results r LEFT JOIN result_summaries m"
				     " ON m.result_id = r.id AND m.version = ?1"
				     " WHERE m.result_id IS NULL ORDER BY r.id LIMIT ?2");
	if (stmt) {
		sqlite3_bind_int(stmt, 1, version);
		sqlite3_bind_int64(stmt, 2, limit);
		while (sqlite3_step(stmt) == SQLITE_ROW)
			fn(context, sqlite3_column_int64(stmt, 0));
		sqlite3_finalize(stmt);
	}
	pthread_mutex_unlock(&s->reader_lock);
	return stmt ? 0 : LL_ESTORE;
}

struct summaries_put_op {
	size_t count;
	const long long *ids;
	int version;
	const char *const *summaries;
};

static int op_summaries_put(struct store *s, void *arg)
{
	struct summaries_put_op *a = arg;
	int rc = 0;

	for (size_t i = 0; i < a->count && rc == 0; i++)
		rc = db_run(s->writer,
			    "INSERT INTO result_summaries (result_id, version, body) VALUES (?, ?, ?)"
			    " ON CONFLICT (result_id) DO UPDATE SET version = excluded.version,"
			    " body = excluded.body",
			    "iit", a->ids[i], (long long)a->version, a->summaries[i]);
	return rc;
}

int store_summaries_put(struct store *s, size_t count, const long long *result_ids, int version,
			const char *const *summaries)
{
	struct summaries_put_op a = {count, result_ids, version, summaries};

	return count ? store_write(s, op_summaries_put, &a) : 0;
}

/* ----------------------------------------------------------------- metrics */

int store_stats(struct store *s, long long now, struct store_stats *ret)
{
	struct store_stats st = {0};
	sqlite3_stmt *stmt;
	int rc = 0;

	pthread_mutex_lock(&s->reader_lock);
	db_exec(s->reader, "BEGIN");
	stmt = db_prepare(s->reader, "SELECT state, count(*), sum(not_before <= ?) FROM tasks GROUP BY state");
	if (stmt) {
		sqlite3_bind_int64(stmt, 1, now);
		while (sqlite3_step(stmt) == SQLITE_ROW) {
			const char *state = (const char *)sqlite3_column_text(stmt, 0);
			long long n = sqlite3_column_int64(stmt, 1);
			if (strcmp(state, "queued") == 0) {
				st.tasks_queued = n;
				st.tasks_ready = sqlite3_column_int64(stmt, 2);
			} else if (strcmp(state, "leased") == 0)
				st.tasks_leased = n;
			else if (strcmp(state, "done") == 0)
				st.tasks_done = n;
			else if (strcmp(state, "dead") == 0)
				st.tasks_dead = n;
			else if (strcmp(state, "cancelled") == 0)
				st.tasks_cancelled = n;
		}
		sqlite3_finalize(stmt);
	} else {
		rc = LL_ESTORE;
	}
	stmt = db_prepare(s->reader, "SELECT state, count(*) FROM jobs GROUP BY state");
	if (stmt) {
		while (sqlite3_step(stmt) == SQLITE_ROW) {
			const char *state = (const char *)sqlite3_column_text(stmt, 0);
			long long n = sqlite3_column_int64(stmt, 1);
			if (strcmp(state, "queued") == 0)
				st.jobs_queued = n;
			else if (strcmp(state, "running") == 0)
				st.jobs_running = n;
			else if (strcmp(state, "done") == 0)
				st.jobs_done = n;
			else if (strcmp(state, "failed") == 0)
				st.jobs_failed = n;
			else if (strcmp(state, "cancelled") == 0)
				st.jobs_cancelled = n;
		}
		sqlite3_finalize(stmt);
	} else {
		rc = LL_ESTORE;
	}
	if (rc == 0)
		rc = db_int(s->reader, &st.agents_quarantined, 0,
			    "SELECT count(*) FROM agents WHERE quarantined != 0", "");
	if (rc == 0)
		rc = db_int(s->reader, &st.agents_online, 0,
			    "SELECT count(*) FROM agents WHERE quarantined = 0 AND last_seen >= ?", "i",
			    now - s->options.offline_after_ms);
	if (rc == 0)
		rc = db_int(s->reader, &st.agents_offline, 0,
			    "SELECT count(*) FROM agents WHERE quarantined = 0 AND (last_seen IS NULL OR last_seen < ?)",
			    "i", now - s->options.offline_after_ms);
	if (rc == 0)
		rc = db_int(s->reader, &st.results, 0, "SELECT count(*) FROM results", "");
	db_exec(s->reader, "COMMIT");
	pthread_mutex_unlock(&s->reader_lock);
	pthread_mutex_lock(&s->queue_lock);
	st.commits = s->commits;
	st.committed_ops = s->committed_ops;
	pthread_mutex_unlock(&s->queue_lock);
	if (rc < 0)
		return rc;
	*ret = st;
	return 0;
}
