/*
 * pg_import.c - store_migrate() (store.h, docs/operations.md): a SQLite
 * store's rows into an empty PostgreSQL database, for `loadlabd migrate`.
 *
 * The source is opened read-only and read inside one read transaction;
 * its schema version (PRAGMA user_version) must be this build's. The
 * target must hold no table but an empty loadlab schema of this version;
 * it is migrated (pg_migrate()), then every table of the source
 * (sqlite_master, in creation order, so that a referenced table is filled
 * before the tables that reference it) is copied column by column: the
 * columns both schemas have, PostgreSQL's generated ones left out, BLOBs
 * as bytea. All rows go in one transaction, which also sets each identity
 * sequence to its table's max(id) and counts every table on both sides:
 * a difference rolls the whole copy back.
 */
#include "pg_int.h"

#include "loadlab/err.h"
#include "loadlab/redact.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SQL_MAX 8192
/* Columns of one table at most. */
#define COLUMNS_MAX 64

/* Whether NAME is a plain identifier (the schemas' names all are): it is
 * then put in SQL text as is. */
static bool plain_name(const char *name)
{
	if (!name || !name[0] || strlen(name) >= STORE_MIGRATE_NAME)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/* A one-value query of PostgreSQL (the first column of its first row) to
 * *RET as an integer; DEFAULT_VALUE when there is no row or it is NULL. */
static int pg_value(PGconn *conn, const char *sql, long long default_value, long long *ret)
{
	PGresult *res = PQexec(conn, sql);
	int rc = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = err_set(LL_ESTORE, "PostgreSQL: %s", PQresultErrorMessage(res));
	else
		*ret = PQntuples(res) && !PQgetisnull(res, 0, 0) ? strtoll(PQgetvalue(res, 0, 0), NULL, 10)
								 : default_value;
	PQclear(res);
	return rc;
}

static int pg_command(PGconn *conn, const char *sql)
{
	PGresult *res = PQexec(conn, sql);
	int rc = PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK
			 ? 0
			 : err_set(LL_ESTORE, "PostgreSQL: %s", PQresultErrorMessage(res));

	PQclear(res);
	return rc;
}

static int sqlite_count(sqlite3 *db, const char *table, long long *ret)
{
	char sql[160];
	sqlite3_stmt *stmt = NULL;
	int rc = 0;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM \"%s\"", table);
	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK || sqlite3_step(stmt) != SQLITE_ROW)
		rc = err_set(LL_EFORMAT, "Cannot count %s in the SQLite store: %s.", table,
			     sqlite3_errmsg(db));
	else
		*ret = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return rc;
}

/* 0 when the target holds no table, or only the loadlab schema of this
 * version with no rows; LL_ECONFLICT otherwise (nothing is changed). */
static int target_empty(PGconn *conn)
{
	PGresult *res = PQexec(conn, "SELECT table_name FROM information_schema.tables"
				     " WHERE table_schema = current_schema() ORDER BY 1");
	long long version = -1, rows = 0;
	char sql[160];
	int rc = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		rc = err_set(LL_ESTORE, "PostgreSQL: %s", PQresultErrorMessage(res));
		PQclear(res);
		return rc;
	}
	for (int i = 0; rc == 0 && i < PQntuples(res); i++) {
		const char *name = PQgetvalue(res, i, 0);

		if (!plain_name(name)) {
			rc = err_set(LL_ECONFLICT, "The target database is not empty (it has a table %s).",
				     name);
			break;
		}
		if (!strcmp(name, "schema_version")) {
			rc = pg_value(conn, "SELECT max(version) FROM schema_version", -1, &version);
			if (rc == 0 && version != pg_schema_latest())
				rc = err_set(
					LL_ECONFLICT,
					"The target database is not empty (a loadlab store of schema version "
					"%lld).",
					version);
			continue;
		}
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", name);
		if ((rc = pg_value(conn, sql, 0, &rows)) == 0 && rows > 0)
			rc = err_set(LL_ECONFLICT, "The target database is not empty (%s has %lld rows).",
				     name, rows);
	}
	if (rc == 0 && PQntuples(res) > 0 && version < 0)
		rc = err_set(LL_ECONFLICT, "The target database is not empty (it has tables, none of them "
					   "loadlab's schema_version).");
	PQclear(res);
	return rc;
}

/* The columns of TABLE both stores have (PostgreSQL's generated ones left
 * out), as "a, b, c" in *COLS; IS_BYTEA[i] for the bytea ones. LL_EFORMAT
 * when the target lacks the table or one of the source's columns. */
static int common_columns(sqlite3 *db, PGconn *conn, const char *table, char *cols, size_t size,
			  bool *is_bytea, int *ret_count)
{
	const char *params[1] = {table};
	PGresult *res =
		PQexecParams(conn,
			     "SELECT column_name, data_type, is_generated FROM information_schema.columns"
			     " WHERE table_schema = current_schema() AND table_name = $1",
			     1, NULL, params, NULL, NULL, 0);
	char sql[160];
	sqlite3_stmt *stmt = NULL;
	int n = 0, rc = 0;
	size_t used = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) == 0) {
		rc = PQresultStatus(res) != PGRES_TUPLES_OK
			     ? err_set(LL_ESTORE, "PostgreSQL: %s", PQresultErrorMessage(res))
			     : err_set(LL_EFORMAT, "The PostgreSQL schema has no table %s.", table);
		PQclear(res);
		return rc;
	}
	/* table_info leaves SQLite's generated columns out. */
	snprintf(sql, sizeof(sql), "PRAGMA table_info(\"%s\")", table);
	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
		rc = err_set(LL_EFORMAT, "Cannot read %s's columns: %s.", table, sqlite3_errmsg(db));
	while (rc == 0 && sqlite3_step(stmt) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(stmt, 1);
		int row = -1;

		for (int i = 0; name && i < PQntuples(res); i++)
			if (!strcmp(PQgetvalue(res, i, 0), name))
				row = i;
		if (!plain_name(name) || row < 0)
			rc = err_set(LL_EFORMAT, "The PostgreSQL schema has no column %s.%s.", table,
				     name ? name : "?");
		else if (n >= COLUMNS_MAX)
			rc = err_set(LL_ETOOBIG, "%s has more than %d columns.", table, COLUMNS_MAX);
		else if (strcmp(PQgetvalue(res, row, 2), "NEVER") != 0)
			continue; /* generated there: PostgreSQL computes it */
		else if (used + strlen(name) + 3 >= size)
			rc = err_set(LL_ETOOBIG, "%s has too many columns.", table);
		else {
			used += (size_t)snprintf(cols + used, size - used, "%s%s", n ? ", " : "", name);
			is_bytea[n++] = !strcmp(PQgetvalue(res, row, 1), "bytea");
		}
	}
	sqlite3_finalize(stmt);
	PQclear(res);
	if (rc == 0 && n == 0)
		rc = err_set(LL_EFORMAT, "%s has no columns to copy.", table);
	*ret_count = n;
	return rc;
}

/* Copies TABLE's rows: one prepared INSERT, each value in the text format
 * but for bytea's (binary). */
static int copy_table(sqlite3 *db, PGconn *conn, const char *table)
{
	char cols[SQL_MAX / 2], sql[SQL_MAX], num[40];
	bool is_bytea[COLUMNS_MAX];
	char *values[COLUMNS_MAX];
	int lengths[COLUMNS_MAX], formats[COLUMNS_MAX];
	sqlite3_stmt *stmt = NULL;
	PGresult *res;
	int n = 0, rc, step;
	size_t used;

	if ((rc = common_columns(db, conn, table, cols, sizeof(cols), is_bytea, &n)) < 0)
		return rc;
	used = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO %s (%s) VALUES (", table, cols);
	for (int i = 0; i < n; i++)
		used += (size_t)snprintf(sql + used, sizeof(sql) - used, "%s$%d", i ? ", " : "", i + 1);
	snprintf(sql + used, sizeof(sql) - used, ")");
	res = PQprepare(conn, "", sql, n, NULL);
	rc = PQresultStatus(res) == PGRES_COMMAND_OK
		     ? 0
		     : err_set(LL_ESTORE, "PostgreSQL: %s", PQresultErrorMessage(res));
	PQclear(res);
	if (rc < 0)
		return rc;
	snprintf(sql, sizeof(sql), "SELECT %s FROM \"%s\"", cols, table);
	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
		return err_set(LL_EFORMAT, "Cannot read %s: %s.", table, sqlite3_errmsg(db));
	while (rc == 0 && (step = sqlite3_step(stmt)) == SQLITE_ROW) {
		for (int i = 0; i < n; i++) {
			int type = sqlite3_column_type(stmt, i);

			values[i] = NULL;
			lengths[i] = 0;
			formats[i] = is_bytea[i];
			if (type == SQLITE_NULL)
				continue;
			if (is_bytea[i] || type == SQLITE_BLOB) {
				values[i] = (char *)sqlite3_column_blob(stmt, i);
				lengths[i] = sqlite3_column_bytes(stmt, i);
				formats[i] = 1;
				if (!values[i])
					values[i] = "";
			} else if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) {
				/* one buffer per row would do; text keeps it simple */
				if (type == SQLITE_INTEGER)
					snprintf(num, sizeof(num), "%lld",
						 (long long)sqlite3_column_int64(stmt, i));
				else
					snprintf(num, sizeof(num), "%.17g", sqlite3_column_double(stmt, i));
				values[i] = strdup(num);
				lengths[i] = -1; /* freed below */
			} else
				values[i] = (char *)sqlite3_column_text(stmt, i);
		}
		res = PQexecPrepared(conn, "", n, (const char *const *)values, lengths, formats, 0);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			rc = err_set(LL_ESTORE, "Copying %s: %s", table, PQresultErrorMessage(res));
		PQclear(res);
		for (int i = 0; i < n; i++)
			if (lengths[i] == -1)
				free(values[i]);
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = err_set(LL_EFORMAT, "Reading %s: %s.", table, sqlite3_errmsg(db));
	sqlite3_finalize(stmt);
	return rc;
}

/* Each identity column's sequence past its table's max (new rows get new
 * ids). */
static int reset_sequences(PGconn *conn)
{
	PGresult *res = PQexec(conn, "SELECT table_name, column_name FROM information_schema.columns"
				     " WHERE table_schema = current_schema() AND is_identity = 'YES'");
	char sql[512];
	int rc = PQresultStatus(res) == PGRES_TUPLES_OK
			 ? 0
			 : err_set(LL_ESTORE, "PostgreSQL: %s", PQresultErrorMessage(res));

	for (int i = 0; rc == 0 && i < PQntuples(res); i++) {
		const char *table = PQgetvalue(res, i, 0), *column = PQgetvalue(res, i, 1);

		if (!plain_name(table) || !plain_name(column))
			continue;
		snprintf(sql, sizeof(sql),
			 "SELECT setval(pg_get_serial_sequence('%s', '%s'), m) FROM"
			 " (SELECT max(%s) AS m FROM %s) x WHERE m IS NOT NULL",
			 table, column, column, table);
		rc = pg_command(conn, sql);
	}
	PQclear(res);
	return rc;
}

/* Every table of the source, copied and counted (the transaction open). */
static int copy_all(sqlite3 *db, PGconn *conn, struct store_migrate_counts *c)
{
	sqlite3_stmt *stmt = NULL;
	char sql[160];
	int rc = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT name FROM sqlite_master WHERE type = 'table'"
			       " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
			       -1, &stmt, NULL) != SQLITE_OK)
		return err_set(LL_EFORMAT, "Cannot read the SQLite store's tables: %s.", sqlite3_errmsg(db));
	while (rc == 0 && sqlite3_step(stmt) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(stmt, 0);
		struct store_migrate_table *t = &c->table[c->tables];

		if (!plain_name(name))
			rc = err_set(LL_EFORMAT, "The SQLite store has a table %s, not loadlab's.", name);
		else if (c->tables >= STORE_MIGRATE_TABLES)
			rc = err_set(LL_ETOOBIG, "The SQLite store has too many tables.");
		else {
			snprintf(t->name, sizeof(t->name), "%s", name);
			c->tables++;
			rc = copy_table(db, conn, name);
		}
	}
	sqlite3_finalize(stmt);
	if (rc == 0)
		rc = reset_sequences(conn);
	for (int i = 0; rc == 0 && i < c->tables; i++) {
		struct store_migrate_table *t = &c->table[i];

		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", t->name);
		if ((rc = sqlite_count(db, t->name, &t->from)) == 0)
			rc = pg_value(conn, sql, 0, &t->to);
		if (rc == 0 && t->from != t->to)
			c->mismatches++;
	}
	if (rc == 0 && c->mismatches)
		rc = err_set(LL_ECONFLICT, "The counts differ in %d tables; nothing was committed.",
			     c->mismatches);
	return rc;
}

/* The source: opened read-only, its version this build's. */
static int open_source(const char *from, sqlite3 **ret_db, long long *ret_version)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *stmt = NULL;
	int rc = 0;

	*ret_version = 0;
	if (sqlite3_open_v2(from, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		rc = err_set(LL_EIO, "Cannot open %s: %s.", from, db ? sqlite3_errmsg(db) : "out of memory");
	else if (sqlite3_busy_timeout(db, 10000),
		 sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, NULL) != SQLITE_OK ||
			 sqlite3_step(stmt) != SQLITE_ROW)
		rc = err_set(LL_EFORMAT, "%s is not a SQLite store: %s.", from, sqlite3_errmsg(db));
	else if ((*ret_version = sqlite3_column_int64(stmt, 0)) < 1)
		rc = err_set(LL_EFORMAT, "%s is not a loadlab store (schema version 0).", from);
	else if (*ret_version != pg_schema_latest())
		rc = err_set(
			LL_ESTATE,
			"%s has schema version %lld, this loadlabd's is %d: start loadlabd (this version) on "
			"it once to migrate it, stop it, then migrate.",
			from, *ret_version, pg_schema_latest());
	sqlite3_finalize(stmt);
	if (rc == 0 &&
	    sqlite3_exec(db, "BEGIN; SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) != SQLITE_OK)
		rc = err_set(LL_EIO, "Cannot read %s: %s.", from, sqlite3_errmsg(db));
	if (rc < 0) {
		sqlite3_close(db);
		return rc;
	}
	*ret_db = db;
	return 0;
}

int store_migrate(const char *from, const char *to, struct store_migrate_counts *ret_counts)
{
	sqlite3 *db = NULL;
	PGconn *conn = NULL;
	int rc;

	memset(ret_counts, 0, sizeof(*ret_counts));
	if (strncmp(to, "postgresql://", 13) != 0 && strncmp(to, "postgres://", 11) != 0)
		return err_set(LL_EINVAL, "--to must be a postgresql:// URI.");
	if ((rc = open_source(from, &db, &ret_counts->schema_version)) < 0)
		return rc;
	conn = PQconnectdb(to);
	if (PQstatus(conn) != CONNECTION_OK) {
		char message[1024];
		/* libpq may quote the whole URI it could not use */
		redact_secrets_of(PQerrorMessage(conn), to, message, sizeof(message));
		rc = err_set(LL_ESTORE, "Cannot connect to %s: %s", "the target", message);
		goto out;
	}
	pg_notices_to_log(conn, to);
	if ((rc = target_empty(conn)) < 0 || (rc = pg_migrate(conn)) < 0 ||
	    (rc = pg_command(conn, "BEGIN")) < 0)
		goto out;
	rc = copy_all(db, conn, ret_counts);
	if (rc == 0)
		rc = pg_command(conn, "COMMIT");
	else
		PQclear(PQexec(conn, "ROLLBACK"));
out:
	PQfinish(conn);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}
