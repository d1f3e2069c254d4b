/*
 * sqlite_backend.c - the SQLite backend's entry in store.c's table of
 * backends (store_backend.h): --db sqlite:PATH, or a bare PATH.
 */
#include "sqlite_int.h"

const struct store_backend store_backend_sqlite = {
	.scheme = "sqlite",
	.open = sqlite_open,
	.close = sqlite_close,
	.check = sqlite_check,
	.integrity_check = sqlite_integrity_check,
	.stats = sqlite_stats,
	.call_free = sqlite_call_free,
	.tokens = &sqlite_token_ops,
	.agents = &sqlite_agent_ops,
	.jobs = &sqlite_job_ops,
	.tasks = &sqlite_task_ops,
	.results = &sqlite_result_ops,
	.series = &sqlite_series_ops,
	.schedules = &sqlite_schedule_ops,
	.blobs = &sqlite_blob_ops,
};
