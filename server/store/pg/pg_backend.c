/*
 * pg_backend.c - the PostgreSQL backend's entries in store.c's table of
 * backends (store_backend.h): --db postgresql://... and postgres://...
 * (libpq's URIs). Every operation, by the file that has it (pg_int.h).
 */
#include "pg_int.h"

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

static const struct store_token_ops tokens_ops = {
	.token_count = pg_token_count,
	.token_create = pg_token_create_noting,
	.token_find = pg_token_find_cached,
	.token_list = pg_token_list,
	.token_revoke = pg_token_revoke_noting,
};

static const struct store_agent_ops agents_ops = {
	.agent_enroll = pg_agent_enroll,
	.agent_list = pg_agent_list,
	.agent_get = pg_agent_get,
	.agent_patch = pg_agent_patch,
	.task_calibration_spec = pg_task_calibration_spec,
	.agent_calibration_put = pg_agent_calibration_put,
	.agent_builds = pg_agent_builds,
	.agent_build_set = pg_agent_build_set,
	.agent_update_set = pg_agent_update_set,
	.agent_heartbeat_begin = pg_agent_heartbeat_begin,
	.agent_heartbeat_end = pg_agent_heartbeat_end,
};

static const struct store_job_ops jobs_ops = {
	.job_create = pg_job_create,
	.job_list = pg_job_list,
	.job_get = pg_job_get,
	.job_add_waiting = pg_job_add_waiting,
	.job_cancel = pg_job_cancel,
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

static const struct store_result_ops results_ops = {
	.result_get = pg_result_get,
	.result_with_cell = pg_result_with_cell,
	.job_report_rows = pg_job_report_rows,
	.job_compare_rows = pg_job_compare_rows,
	.results_unsummarized = pg_results_unsummarized,
	.results_without_compare = pg_results_without_compare,
	.summaries_put = pg_summaries_put,
	.compare_data_put = pg_compare_data_put,
};

static const struct store_series_ops series_ops = {
	.series_list = pg_series_list,
	.series_jobs = pg_series_jobs,
	.series_settings_get = pg_series_settings_get,
	.series_settings_put = pg_series_settings_put,
	.series_unchecked = pg_series_unchecked,
	.series_previous_done = pg_series_previous_done,
	.series_check_record = pg_series_check_record,
	.alert_list = pg_alert_list,
	.alert_get = pg_alert_get,
	.alert_ack = pg_alert_ack,
	.alert_webhook_status = pg_alert_webhook_status,
	.webhook_due = pg_webhook_due,
};

static const struct store_schedule_ops schedules_ops = {
	.schedule_create = pg_schedule_create,
	.schedule_list = pg_schedule_list,
	.schedule_get = pg_schedule_get,
	.schedule_patch = pg_schedule_patch,
	.schedule_delete = pg_schedule_delete,
	.schedule_owner_set = pg_schedule_owner_set,
	.schedules_due = pg_schedules_due,
	.schedule_claim = pg_schedule_claim,
	.schedule_run_finish = pg_schedule_run_finish,
	.schedule_pending = pg_schedule_pending,
};

static const struct store_blob_ops blobs_ops = {
	.blob_references = pg_blob_references,
};

static const struct store_history_ops history_ops = {
	.job_history = pg_job_history,
	.calibration_add = pg_calibration_add,
	.calibration_history = pg_calibration_history,
};

const struct store_backend store_backend_pg = {
	.scheme = "postgresql",
	.alias = "postgres",
	.handle = &handle_ops,
	.tokens = &tokens_ops,
	.agents = &agents_ops,
	.jobs = &jobs_ops,
	.tasks = &tasks_ops,
	.results = &results_ops,
	.series = &series_ops,
	.schedules = &schedules_ops,
	.blobs = &blobs_ops,
	.history = &history_ops,
	.bisections =
		&(const struct store_bisect_ops){
			.bisection_create = pg_bisection_create,
			.bisection_get = pg_bisection_get,
			.bisection_update = pg_bisection_update,
			.bisections_running = pg_bisections_running,
		},
};
