/*
 * pg_backend.c - the PostgreSQL backend's entries in store.c's table of
 * backends (store_backend.h): --db postgresql://... and postgres://...
 * (libpq's URIs). Every operation, by the file that has it (pg_int.h).
 */
#include "pg_int.h"

#include "store/db_driver.h"

static const struct store_handle_ops handle_ops = {
	.open = pg_open,
	.close = pg_close,
	.check = pg_check,
	.integrity_check = pg_integrity_check,
	.stats = pg_stats,
	.watch_tasks = pg_watch_tasks,
	.role_take = pg_role_take,
	.call_free = pg_call_free,
};

static const struct store_agent_ops agents_ops = {
	.agent_touch = pq_agent_touch,
};

static const struct store_task_ops tasks_ops = {
	.task_progress = pg_task_progress,
	.task_fail = pg_task_fail,
	.expire_leases = pg_expire_leases,
	.task_lease_begin = pg_task_lease_begin,
	.task_lease_end = pg_task_lease_end,
	.task_result_begin = pg_task_result_begin,
	.task_result_end = pg_task_result_end,
	.task_result_is_calibration = pg_task_result_is_calibration,
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
	.agents = &agents_ops,
	.tasks = &tasks_ops,
	.series = &series_ops,
};
