/*
 * pg_conn.c - the PostgreSQL backend's pool of connections (pg_int.h): at
 * most SIZE, made when needed, reused, closed when broken. After a failed
 * connection no other is tried for a backoff (PG_BACKOFF_MIN_MS doubling
 * to PG_BACKOFF_MAX_MS), so that a database that went away costs each
 * request one quick LL_ESTORE (503) instead of a connect timeout, and the
 * first connection after the backoff brings the daemon back by itself.
 */
#include "pg_int.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/log.h"
#include "loadlab/redact.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int pg_pool_init(struct pg_pool *pool, const char *conninfo, int size)
{
	memset(pool, 0, sizeof(*pool));
	if (size < 1 || size > PG_POOL_MAX)
		return err_set(LL_ERANGE, "pool_size must be 1 to %d.", PG_POOL_MAX);
	if (!(pool->conninfo = strdup(conninfo)))
		return err_set(LL_ENOMEM, "Out of memory.");
	pool->size = size;
	pool->backoff_ms = PG_BACKOFF_MIN_MS;
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->cond, NULL);
	return 0;
}

/* Closes CONN, a connection of the pool, and forgets its prepared
 * statements (pg_sql.c). */
static void pool_finish(PGconn *conn)
{
	pq_session_close(conn);
	PQfinish(conn);
}

void pg_pool_destroy(struct pg_pool *pool)
{
	if (!pool->conninfo)
		return;
	for (int i = 0; i < pool->idle_count; i++)
		pool_finish(pool->idle[i]);
	pool->idle_count = 0;
	free(pool->conninfo);
	pool->conninfo = NULL;
	pthread_mutex_destroy(&pool->lock);
	pthread_cond_destroy(&pool->cond);
}

/* TEXT without its final line breaks (libpq ends its messages with one). */
static void trim_end(char *text)
{
	size_t n = strlen(text);

	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		text[--n] = '\0';
}

static void notice_to_log(void *arg, const PGresult *result)
{
	const char *severity = PQresultErrorField(result, PG_DIAG_SEVERITY_NONLOCALIZED);
	const char *message = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
	char text[1024];

	if (!message)
		message = PQresultErrorMessage(result);
	redact_secrets_of(message, arg, text, sizeof(text));
	trim_end(text);
	log_event(severity && strcmp(severity, "WARNING") == 0 ? LOG_WARN : LOG_INFO, "store_notice",
		  "severity", severity ? severity : "NOTICE", "message", text, NULL);
}

void pg_notices_to_log(PGconn *conn, const char *conninfo)
{
	PQsetNoticeReceiver(conn, notice_to_log, (void *)conninfo);
}

/* A new connection: the defaults first, so that the URI's own settings
 * (conninfo, expanded as dbname) override them. */
PGconn *pg_pool_connect(const struct pg_pool *pool)
{
	char timeout[16], options[96], message[1024];
	const char *keys[] = {"connect_timeout", "tcp_user_timeout", "application_name",
			      "options",         "dbname",           NULL};
	const char *values[] = {timeout, "10000", "loadlabd", options, pool->conninfo, NULL};
	PGconn *conn;

	snprintf(timeout, sizeof(timeout), "%d", PG_CONNECT_TIMEOUT_S);
	snprintf(options, sizeof(options), "-c statement_timeout=%d -c lock_timeout=%d",
		 PG_STATEMENT_TIMEOUT_MS, PG_STATEMENT_TIMEOUT_MS);
	conn = PQconnectdbParams(keys, values, 1);
	if (conn && PQstatus(conn) == CONNECTION_OK) {
		pg_notices_to_log(conn, pool->conninfo);
		return conn;
	}
	/* libpq may quote the whole URI it could not use */
	redact_secrets_of(conn ? PQerrorMessage(conn) : "out of memory", pool->conninfo, message,
			  sizeof(message));
	trim_end(message);
	log_event(LOG_ERROR, "store_connect_failed", "postgresql", message, NULL);
	PQfinish(conn);
	return NULL;
}

static void deadline_in(struct timespec *ts, long long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

PGconn *pg_pool_take(struct pg_pool *pool)
{
	struct timespec deadline;
	PGconn *conn;

	deadline_in(&deadline, PG_POOL_WAIT_MS);
	pthread_mutex_lock(&pool->lock);
	for (;;) {
		if (pool->idle_count > 0) {
			conn = pool->idle[--pool->idle_count];
			/* One the server closed meanwhile (a restart) has that
			 * to read: it goes, and the next is tried. */
			if (PQconsumeInput(conn) && PQstatus(conn) == CONNECTION_OK) {
				pthread_mutex_unlock(&pool->lock);
				return conn;
			}
			pool_finish(conn);
			pool->open--;
			continue;
		}
		if (pool->open < pool->size) {
			if (clock_now_ms() < pool->retry_at_ms) {
				pthread_mutex_unlock(&pool->lock);
				err_set(LL_ESTORE, "The store's database cannot be reached.");
				return NULL;
			}
			pool->open++;
			pthread_mutex_unlock(&pool->lock);
			conn = pg_pool_connect(pool);
			pthread_mutex_lock(&pool->lock);
			if (conn) {
				pq_session_open(conn);
				pool->connects++;
				pool->backoff_ms = PG_BACKOFF_MIN_MS;
				pool->retry_at_ms = 0;
			} else {
				pool->open--;
				pool->connect_failures++;
				pool->retry_at_ms = clock_now_ms() + pool->backoff_ms;
				pool->backoff_ms = pg_backoff_next(pool->backoff_ms);
				pthread_cond_broadcast(&pool->cond);
			}
			pthread_mutex_unlock(&pool->lock);
			if (!conn)
				err_set(LL_ESTORE, "The store's database cannot be reached.");
			return conn;
		}
		if (pthread_cond_timedwait(&pool->cond, &pool->lock, &deadline) == ETIMEDOUT) {
			pthread_mutex_unlock(&pool->lock);
			err_set(LL_ESTORE, "No connection to the store's database is free.");
			return NULL;
		}
	}
}

void pg_pool_give(struct pg_pool *pool, PGconn *conn, bool broken)
{
	if (!conn)
		return;
	broken = broken || PQpipelineStatus(conn) != PQ_PIPELINE_OFF; /* a write left half read */
	if (!broken && PQstatus(conn) == CONNECTION_OK && PQtransactionStatus(conn) != PQTRANS_IDLE) {
		PGresult *res = PQexec(conn, "ROLLBACK");
		PQclear(res);
	}
	broken = broken || PQstatus(conn) != CONNECTION_OK || PQtransactionStatus(conn) != PQTRANS_IDLE;
	if (broken)
		pool_finish(conn);
	pthread_mutex_lock(&pool->lock);
	if (broken)
		pool->open--;
	else
		pool->idle[pool->idle_count++] = conn;
	pthread_cond_signal(&pool->cond);
	pthread_mutex_unlock(&pool->lock);
}
