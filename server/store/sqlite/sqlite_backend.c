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
			STORE_HANDLE_FUNCTIONS(sqlite),
			.backup = sqlite_backup,
			.restore = sqlite_restore,
		},
	.series =
		&(const struct store_series_ops){
			.alert_webhook_status = webhook_status_write,
			.webhook_due = sqlite_webhook_due,
			.retention_apply = sqlite_retention_apply,
			.compact = sqlite_compact,
		},
};
