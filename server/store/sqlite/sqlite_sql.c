/*
 * sqlite_sql.c - the SQL helpers and the statement cache the SQLite
 * backend's files share (sqlite_int.h).
 */
#include "sqlite_int.h"

#include "store/db_driver.h"

#include "loadlab/err.h"
#include "loadlab/log.h"

#include <pthread.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool sq_disk_full(sqlite3 *db)
{
	int code = sqlite3_errcode(db), os_errno = sqlite3_system_errno(db);

	return code == SQLITE_FULL ||
	       ((code & 0xff) == SQLITE_IOERR && (os_errno == ENOSPC || os_errno == EDQUOT));
}

int sq_error(sqlite3 *db, const char *what)
{
	log_event(LOG_ERROR, "store_error", "what", what, "sqlite", sqlite3_errmsg(db), NULL);
	if (sq_disk_full(db))
		return err_set(LL_ENOSPACE, STORE_FULL_MESSAGE);
	return err_set(LL_ESTORE, "The store failed (%s).", what);
}

int sq_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		log_event(LOG_ERROR, "store_error", "sql", sql, "sqlite", msg, NULL);
		sqlite3_free(msg);
		if (sq_disk_full(db))
			return err_set(LL_ENOSPACE, STORE_FULL_MESSAGE);
		return err_set(LL_ESTORE, "The store failed.");
	}
	return 0;
}

/* Prepares SQL, cached by the connection (SQLITE_PREPARE_PERSISTENT is a
 * hint only; statements are finalized by the caller). */
sqlite3_stmt *sq_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *stmt = NULL;

	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL) != SQLITE_OK) {
		log_event(LOG_ERROR, "store_error", "sql", sql, "sqlite", sqlite3_errmsg(db), NULL);
		return NULL;
	}
	return stmt;
}

/* ------------------------------------------------ the statement cache */

/* A connection's statements kept prepared between calls: compiling the SQL
 * cost more than running it (callgrind: about 40 % of the writer's
 * instructions went to sqlite3_prepare_v3). Keyed by the address of the
 * SQL text, which is a literal, and checked against the text. */
#define DB_CACHE_SIZE 128
#define DB_CACHES_MAX 32

struct db_cache {
	sqlite3 *db;
	int count;
	struct {
		const char *sql;
		sqlite3_stmt *stmt;
		bool busy;
	} entries[DB_CACHE_SIZE];
};

/* The caches of open connections; a connection is used by one thread at
 * a time, its slot is written only before its first use and after its
 * last. */
static struct db_cache *db_caches[DB_CACHES_MAX];
static pthread_mutex_t db_caches_lock = PTHREAD_MUTEX_INITIALIZER;

static struct db_cache *cache_of(sqlite3 *db)
{
	for (int i = 0; i < DB_CACHES_MAX; i++) {
		struct db_cache *c = __atomic_load_n(&db_caches[i], __ATOMIC_ACQUIRE);
		if (c && c->db == db)
			return c;
	}
	return NULL;
}

void sq_cache_attach(sqlite3 *db)
{
	struct db_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return;
	c->db = db;
	pthread_mutex_lock(&db_caches_lock);
	for (int i = 0; i < DB_CACHES_MAX && c; i++)
		if (!db_caches[i]) {
			__atomic_store_n(&db_caches[i], c, __ATOMIC_RELEASE);
			c = NULL;
		}
	pthread_mutex_unlock(&db_caches_lock);
	free(c); /* no slot left: this connection prepares every time */
}

void sq_cache_detach(sqlite3 *db)
{
	struct db_cache *c = NULL;

	pthread_mutex_lock(&db_caches_lock);
	for (int i = 0; i < DB_CACHES_MAX; i++)
		if (db_caches[i] && db_caches[i]->db == db) {
			c = db_caches[i];
			__atomic_store_n(&db_caches[i], NULL, __ATOMIC_RELEASE);
		}
	pthread_mutex_unlock(&db_caches_lock);
	for (int i = 0; c && i < c->count; i++)
		sqlite3_finalize(c->entries[i].stmt);
	free(c);
}

sqlite3_stmt *sq_cached(sqlite3 *db, const char *sql)
{
	struct db_cache *c = cache_of(db);
	sqlite3_stmt *stmt;

	for (int i = 0; c && i < c->count; i++)
		if (c->entries[i].sql == sql && !c->entries[i].busy &&
		    strcmp(sqlite3_sql(c->entries[i].stmt), sql) == 0) {
			c->entries[i].busy = true;
			return c->entries[i].stmt;
		}
	stmt = sq_prepare(db, sql);
	if (stmt && c && c->count < DB_CACHE_SIZE) {
		c->entries[c->count].sql = sql;
		c->entries[c->count].stmt = stmt;
		c->entries[c->count].busy = true;
		c->count++;
	}
	return stmt;
}

void sq_release(sqlite3 *db, sqlite3_stmt *stmt)
{
	struct db_cache *c;

	if (!stmt)
		return;
	c = cache_of(db);
	for (int i = 0; c && i < c->count; i++)
		if (c->entries[i].stmt == stmt) {
			sqlite3_reset(stmt);
			sqlite3_clear_bindings(stmt);
			c->entries[i].busy = false;
			return;
		}
	sqlite3_finalize(stmt);
}

int sq_exec_cached(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *stmt = sq_cached(db, sql);
	int rc;

	if (!stmt)
		return err_set(LL_ESTORE, "The store failed.");
	rc = sqlite3_step(stmt);
	sq_release(db, stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sq_error(db, sql);
	return 0;
}

/* ---------------------------------------- the driver's statements */

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

static void *cached(void *db, const char *sql)
{
	sqlite3_stmt *stmt = sq_cached(db, sql);

	if (!stmt)
		err_set(LL_ESTORE, "The store failed.");
	return stmt;
}

static void uncache(void *db, void *stmt)
{
	sq_release(db, stmt);
}

const struct db_stmt_ops sq_stmt_ops = DB_STMT_FUNCTIONS;
