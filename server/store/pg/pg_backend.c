/*
 * pg_backend.c - the PostgreSQL backend's entries in store.c's table of
 * backends (store_backend.h): --db postgresql://... and postgres://...
 * (libpq's URIs). Every operation, by the file that has it (pg_int.h).
 */
#include "pg_int.h"

#include "store/db_driver.h"

static const struct store_handle_ops handle_ops = {
	STORE_HANDLE_FUNCTIONS(pg),
	.watch_tasks = pg_watch_tasks,
	.role_take = pg_role_take,
};

static const struct store_series_ops series_ops = {
	.alert_webhook_status = pg_alert_webhook_status,
	.webhook_due = pg_webhook_due,
};

const struct store_backend store_backend_pg = {
	.scheme = "postgresql",
	.alias = "postgres",
	.db = &db_driver_pg,
	.handle = &handle_ops,
	.series = &series_ops,
};
