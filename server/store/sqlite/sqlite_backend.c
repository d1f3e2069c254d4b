/*
 * sqlite_backend.c - the SQLite backend's entry in store.c's table of
 * backends (store_backend.h): --db sqlite:PATH, or a bare PATH. Every
 * operation, by the file that has it (sqlite_int.h).
 */
#include "sqlite_int.h"

#include "store/db_driver.h"
#include "store/store_webhooks.h"

const struct store_backend store_backend_sqlite = {
	.scheme = "sqlite",
	.db = &db_driver_sqlite,
	.handle =
		&(const struct store_handle_ops){
			.open = sqlite_open,
			.close = sqlite_close,
			.check = sqlite_check,
			.integrity_check = sqlite_integrity_check,
			.stats = sqlite_stats,
			.call_free = sqlite_call_free,
			.backup = sqlite_backup,
			.restore = sqlite_restore,
		},
	.agents =
		&(const struct store_agent_ops){
			.agent_touch = agent_touch,
		},
	.tasks =
		&(const struct store_task_ops){
			.task_progress = sqlite_task_progress,
			.task_fail = sqlite_task_fail,
			.expire_leases = sqlite_expire_leases,
			.task_lease_begin = sqlite_task_lease_begin,
			.task_lease_end = sqlite_task_lease_end,
			.task_result_begin = sqlite_task_result_begin,
			.task_result_end = sqlite_task_result_end,
			.task_result_is_calibration = sqlite_task_result_is_calibration,
		},
	.series =
		&(const struct store_series_ops){
			.alert_webhook_status = webhook_status_write,
			.webhook_due = sqlite_webhook_due,
			.retention_apply = sqlite_retention_apply,
			.compact = sqlite_compact,
		},
};
