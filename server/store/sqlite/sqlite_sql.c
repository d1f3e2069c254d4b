/*
 * sqlite_sql.c - the SQL helpers and the statement cache the SQLite
 * backend's files share (sqlite_int.h).
 */
#include "sqlite_int.h"

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

/* Binds arguments given by a format (sqlite_int.h). */
static void sq_bind(sqlite3_stmt *stmt, const char *types, va_list ap)
{
	for (int i = 0; types[i]; i++) {
		if (types[i] == 'i') {
			sqlite3_bind_int64(stmt, i + 1, va_arg(ap, long long));
		} else if (types[i] == 'n') {
			long long n = va_arg(ap, long long);
			if (n)
				sqlite3_bind_int64(stmt, i + 1, n);
			else
				sqlite3_bind_null(stmt, i + 1);
		} else if (types[i] == 'd') {
			sqlite3_bind_double(stmt, i + 1, va_arg(ap, double));
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

/* Runs SQL with the arguments of TYPES (sqlite_int.h); when RET is not
 * NULL, stores the first column of the first row there (DEFAULT_VALUE
 * when there is no row or it is NULL). */
static int sq_step(sqlite3 *db, long long *ret, long long default_value, const char *sql, const char *types,
		   va_list ap)
{
	sqlite3_stmt *stmt = sq_cached(db, sql);
	int rc;

	if (!stmt)
		return err_set(LL_ESTORE, "The store failed.");
	sq_bind(stmt, types, ap);
	rc = sqlite3_step(stmt);
	if (ret && rc == SQLITE_ROW)
		*ret = sqlite3_column_type(stmt, 0) == SQLITE_NULL ? default_value
								   : sqlite3_column_int64(stmt, 0);
	else if (ret && rc == SQLITE_DONE)
		*ret = default_value;
	sq_release(db, stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sq_error(db, sql);
	return 0;
}

int sq_run(sqlite3 *db, const char *sql, const char *types, ...)
{
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = sq_step(db, NULL, 0, sql, types, ap);
	va_end(ap);
	return rc;
}

int sq_int(sqlite3 *db, long long *ret, long long default_value, const char *sql, const char *types, ...)
{
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = sq_step(db, ret, default_value, sql, types, ap);
	va_end(ap);
	return rc;
}
