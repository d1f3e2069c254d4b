/*
 * db_args.h - a statement's argument list (db.h's TYPES) bound on a
 * driver's native statement (db_driver.h's struct db_stmt_ops), and a
 * statement run for the first column of its first row: the one code
 * behind db.c's db_bind(), db_run() and db_int() and the drivers' raw
 * helpers on a connection of their own (sq_run(), sq_int(), pq_int()).
 */
#ifndef LOADLAB_SERVER_STORE_DB_ARGS_H
#define LOADLAB_SERVER_STORE_DB_ARGS_H

#include "db_driver.h"

#include <stdarg.h>

/* Binds the arguments of TYPES (db.h) from AP to STMT, from parameter 1. */
void db_args_bind(const struct db_stmt_ops *ops, void *stmt, const char *types, va_list ap);

/* Binds the arguments of TYPES from AP, steps STMT once and, when RET is
 * not NULL, stores the first column of the row there (DEFAULT_VALUE when
 * there is no row or it is NULL). Returns the step's DB_ROW, DB_DONE or
 * negative code; STMT stays the caller's to release. */
int db_args_int(const struct db_stmt_ops *ops, void *stmt, long long *ret, long long default_value,
		const char *types, va_list ap);

/* Runs SQL (a literal, from the statement cache of CONN, the driver's
 * own connection: sqlite3 *, PGconn *) with the arguments of TYPES and,
 * when RET is not NULL, stores the first column of its first row there
 * (DEFAULT_VALUE when there is no row or it is NULL): the drivers'
 * sq_run(), sq_int() and pq_int() (sqlite_int.h, pg_int.h). 0, or a
 * negative LL_E* code with its message (LL_ESTORE when SQL cannot be
 * prepared). */
int db_args_on(const struct db_stmt_ops *ops, void *conn, long long *ret, long long default_value,
	       const char *sql, const char *types, ...);

#endif
