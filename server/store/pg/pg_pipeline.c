/*
 * pg_pipeline.c - a write's statements in libpq's pipeline mode (pg_int.h,
 * "the write's pipeline"): the statements whose rows nobody reads are
 * sent without waiting for their answer, and travel with the next
 * statement that is read, or with the COMMIT, in one round trip.
 *
 * Why: a write of the store is a few statements that read (the row to
 * check, the row to lock) and a few that only change rows (UPDATE,
 * INSERT, NOTIFY); each was a round trip to the server process, which
 * on a loaded machine waits for a core each time (tests/bench/README.md,
 * "PostgreSQL"). In a transaction a failed statement aborts everything
 * after it anyway, so nothing is lost by learning of a failure one
 * statement later: the statement that reads next, or the COMMIT, fails
 * instead (PGRES_PIPELINE_ABORTED), with the first failure logged and its
 * SQLSTATE kept (pgq_last_sqlstate(): the deadlock retry).
 *
 * One pipelined write per thread (the thread that runs the write holds
 * its connection): the state below is the thread's.
 */
#include "pg_int.h"

#include "loadlab/err.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Statements sent and not read at most: the next one is read first
 * (the connection's buffers stay small). */
#define PQ_PIPELINE_MAX 64

/* This thread's pipelined write: its connection, the statements sent
 * whose results are not read yet (their texts for the log: a session's,
 * which outlive them, or NULL), and whether one of those read failed. */
static __thread PGconn *tls_conn;
static __thread int tls_pending;
static __thread const char *tls_sql[PQ_PIPELINE_MAX];
static __thread bool tls_failed;
/* The rows the last statement read changed (PQcmdTuples). */
static __thread long long tls_last_changes;

bool pq_pipelined(const PGconn *conn)
{
	return conn && conn == tls_conn;
}

bool pq_pipeline_failed(void)
{
	return tls_failed;
}

/* Reads the results of the oldest statement sent: its first result to
 * *RET when RET is given (the caller clears it), else cleared; 0, or
 * LL_ESTORE when it failed (logged once: the statements after a failure
 * are only "aborted"). */
static int read_next(PGconn *conn, PGresult **ret)
{
	const char *sql = tls_sql[0];
	PGresult *res, *first = NULL;
	ExecStatusType status;
	int rc = 0;

	memmove(tls_sql, tls_sql + 1, sizeof(tls_sql[0]) * (PQ_PIPELINE_MAX - 1));
	tls_pending--;
	while ((res = PQgetResult(conn))) {
		if (!first)
			first = res;
		else
			PQclear(res);
	}
	status = first ? PQresultStatus(first) : PGRES_FATAL_ERROR;
	if (status == PGRES_PIPELINE_ABORTED) {
		rc = err_set(LL_ESTORE, "The store failed.");
	} else if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
		rc = pq_result_error(conn, first, sql ? sql : "(a statement of the pipeline)");
	}
	if (rc < 0)
		tls_failed = true;
	else
		tls_last_changes = atoll(PQcmdTuples(first));
	if (rc == 0 && ret)
		*ret = first;
	else
		PQclear(first);
	return rc;
}

/* Sends what is buffered, asking the server for the answers so far. */
static int flush(PGconn *conn)
{
	if (!PQsendFlushRequest(conn) || PQflush(conn) != 0)
		return pq_error(conn, "pipeline flush");
	return 0;
}

/* Reads every statement's results but the last LEAVE ones; the first
 * failure. */
static int read_until(PGconn *conn, int leave)
{
	int rc = 0;

	while (tls_pending > leave) {
		int one = read_next(conn, NULL);
		if (rc == 0)
			rc = one;
	}
	return rc;
}

int pq_pipeline_settle(PGconn *conn)
{
	if (tls_pending == 0)
		return tls_failed ? err_set(LL_ESTORE, "The store failed.") : 0;
	if (flush(conn) < 0)
		return LL_ESTORE;
	return read_until(conn, 0);
}

int pq_pipeline_changes(PGconn *conn, long long *ret)
{
	int rc = pq_pipeline_settle(conn);

	*ret = rc < 0 ? 0 : tls_last_changes;
	return rc;
}

int pq_pipeline_send(PGconn *conn, const char *name, const char *sql, int nparams, const Oid *types,
		     const char *const *values, const int *lengths, const int *formats,
		     const char *logged_sql)
{
	int sent;

	if (tls_failed)
		return err_set(LL_ESTORE, "The store failed.");
	if (tls_pending >= PQ_PIPELINE_MAX && pq_pipeline_settle(conn) < 0)
		return LL_ESTORE;
	sent = name ? PQsendQueryPrepared(conn, name, nparams, values, lengths, formats, 0)
		    : PQsendQueryParams(conn, sql, nparams, types, values, lengths, formats, 0);
	if (!sent)
		return pq_error(conn, "pipeline send");
	tls_sql[tls_pending++] = logged_sql;
	return 0;
}

int pq_pipeline_result(PGconn *conn, PGresult **ret)
{
	int rc;

	*ret = NULL;
	if (flush(conn) < 0)
		return LL_ESTORE;
	rc = read_until(conn, 1);
	if (read_next(conn, rc == 0 ? ret : NULL) < 0 || rc < 0) {
		PQclear(*ret);
		*ret = NULL;
		return LL_ESTORE;
	}
	return 0;
}

/* Ends the pipeline's segment with a sync and reads every result up to
 * it; 0, or the first failure (everything read either way). */
static int sync_all(PGconn *conn)
{
	PGresult *res;
	int rc;

	if (!PQpipelineSync(conn))
		return pq_error(conn, "pipeline sync");
	rc = read_until(conn, 0);
	res = PQgetResult(conn);
	if (PQresultStatus(res) != PGRES_PIPELINE_SYNC && rc == 0)
		rc = pq_error(conn, "pipeline sync");
	PQclear(res);
	return rc;
}

int pq_pipeline_begin(PGconn *conn)
{
	if (!PQenterPipelineMode(conn))
		return pq_error(conn, "pipeline mode");
	tls_conn = conn;
	tls_pending = 0;
	tls_failed = false;
	return pq_pipeline_send(conn, NULL, "BEGIN", 0, NULL, NULL, NULL, NULL, "BEGIN");
}

/* Leaves pipeline mode (nothing left to read); the thread's state
 * cleared. */
static int leave(PGconn *conn)
{
	int rc = PQexitPipelineMode(conn) ? 0 : pq_error(conn, "pipeline exit");

	tls_conn = NULL;
	tls_pending = 0;
	return rc;
}

int pq_pipeline_commit(PGconn *conn)
{
	PGresult *res = NULL;
	int rc = pq_pipeline_send(conn, NULL, "COMMIT", 0, NULL, NULL, NULL, NULL, "COMMIT");

	if (rc == 0 && !PQpipelineSync(conn))
		rc = pq_error(conn, "pipeline sync");
	if (rc == 0) {
		rc = read_until(conn, 1);
		if (read_next(conn, &res) < 0)
			rc = LL_ESTORE;
		/* A COMMIT of a transaction that failed answers ROLLBACK. */
		if (rc == 0 && strcmp(PQcmdStatus(res), "COMMIT") != 0)
			rc = err_set(LL_ESTORE, "The store failed.");
		PQclear(res);
		res = PQgetResult(conn);
		if (PQresultStatus(res) != PGRES_PIPELINE_SYNC && rc == 0)
			rc = pq_error(conn, "pipeline sync");
		PQclear(res);
	} else if (PQstatus(conn) == CONNECTION_OK) {
		sync_all(conn);
	}
	if (leave(conn) < 0 && rc == 0)
		rc = LL_ESTORE;
	tls_failed = false;
	return rc;
}

void pq_pipeline_abort(PGconn *conn)
{
	if (PQstatus(conn) == CONNECTION_OK)
		sync_all(conn);
	leave(conn);
	tls_failed = false;
}

int pq_pipeline_pause(PGconn *conn)
{
	int rc = sync_all(conn);

	if (!PQexitPipelineMode(conn))
		return pq_error(conn, "pipeline exit");
	return rc;
}

int pq_pipeline_resume(PGconn *conn)
{
	return PQenterPipelineMode(conn) ? 0 : pq_error(conn, "pipeline mode");
}
