/*
 * pg_error.c - the PostgreSQL backend's failures (pg_int.h): logged as
 * one "store_error" event each, and the SQLSTATE of this thread's last
 * failed statement kept for the write's retry (a deadlock, a
 * serialization failure: pg_write.c). Below the statements (pg_sql.c)
 * and the write's pipeline (pg_pipeline.c), which both report here.
 */
#include "pg_int.h"

#include "loadlab/err.h"
#include "loadlab/log.h"

#include <stdio.h>

/* This thread's last failed statement's SQLSTATE ("" when none). */
static __thread char last_sqlstate[6];

int pq_error(PGconn *conn, const char *what)
{
	log_event(LOG_ERROR, "store_error", "what", what, "postgresql",
		  conn ? PQerrorMessage(conn) : "no connection", NULL);
	return err_set(LL_ESTORE, "The store failed (%s).", what);
}

int pq_result_error(PGconn *conn, PGresult *res, const char *sql)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	snprintf(last_sqlstate, sizeof(last_sqlstate), "%s", state ? state : "");
	log_event(LOG_ERROR, "store_error", "sql", sql, "sqlstate", last_sqlstate, "postgresql",
		  res ? PQresultErrorMessage(res) : PQerrorMessage(conn), NULL);
	return err_set(LL_ESTORE, "The store failed.");
}

const char *pgq_last_sqlstate(void)
{
	return last_sqlstate;
}

void pgq_clear_sqlstate(void)
{
	last_sqlstate[0] = '\0';
}
