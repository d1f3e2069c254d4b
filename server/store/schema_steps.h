/*
 * schema_steps.h - the schema's migrations applied in order, each in a
 * transaction of its own with the version it reaches: the loop every
 * driver's migration runs (sqlite/sqlite_migrate.c, pg/pg_migrate.c), on
 * the connection and with the SQL the driver gives.
 */
#ifndef LOADLAB_SERVER_STORE_SCHEMA_STEPS_H
#define LOADLAB_SERVER_STORE_SCHEMA_STEPS_H

/* A driver's way to run migrations on its connection. */
struct schema_steps {
	/* Runs SQL text (several statements may be given) on CONN: 0 or a
	 * negative LL_E* code (logged). */
	int (*exec)(void *conn, const char *sql);
	const char *begin;       /* the text that begins a migration's transaction */
	const char *set_version; /* a printf format of one %d: records the version reached */
};

/* Applies MIGRATIONS[VERSION] .. MIGRATIONS[LATEST - 1] on CONN, each with
 * the version it reaches (VERSION + 1, ...) in one transaction, rolled back
 * when it fails, and logs each (store_migrated {"schema_version"}). 0, or
 * LL_ESTORE at the first that fails (the versions before it stay). */
int schema_steps_apply(const struct schema_steps *steps, void *conn, const char *const *migrations,
		       int version, int latest);

#endif
