/*
 * sqlite_backend.c - the SQLite backend's entry in store.c's table of
 * backends (store_backend.h): --db sqlite:PATH, or a bare PATH. Every
 * operation, by the file that has it (sqlite_int.h).
 */
#include "sqlite_int.h"

#include "store/db_driver.h"

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
			.agent_enroll = sqlite_agent_enroll,
			.agent_list = sqlite_agent_list,
			.agent_get = sqlite_agent_get,
			.agent_patch = sqlite_agent_patch,
			.task_calibration_spec = sqlite_task_calibration_spec,
			.agent_build_set = sqlite_agent_build_set,
			.agent_update_set = sqlite_agent_update_set,
			.agent_builds = sqlite_agent_builds,
			.agent_heartbeat_begin = sqlite_agent_heartbeat_begin,
			.agent_heartbeat_end = sqlite_agent_heartbeat_end,
		},
	.jobs =
		&(const struct store_job_ops){
			.job_create = sqlite_job_create,
			.job_list = sqlite_job_list,
			.job_get = sqlite_job_get,
			.job_add_waiting = sqlite_job_add_waiting,
			.job_cancel = sqlite_job_cancel,
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
	.results =
		&(const struct store_result_ops){
			.result_get = sqlite_result_get,
			.result_with_cell = sqlite_result_with_cell,
			.job_report_rows = sqlite_job_report_rows,
			.job_compare_rows = sqlite_job_compare_rows,
			.results_unsummarized = sqlite_results_unsummarized,
			.results_without_compare = sqlite_results_without_compare,
			.summaries_put = sqlite_summaries_put,
			.compare_data_put = sqlite_compare_data_put,
		},
	.series =
		&(const struct store_series_ops){
			.series_list = sqlite_series_list,
			.series_jobs = sqlite_series_jobs,
			.series_settings_get = sqlite_series_settings_get,
			.series_settings_put = sqlite_series_settings_put,
			.series_unchecked = sqlite_series_unchecked,
			.series_previous_done = sqlite_series_previous_done,
			.series_check_record = sqlite_series_check_record,
			.alert_list = sqlite_alert_list,
			.alert_get = sqlite_alert_get,
			.alert_ack = sqlite_alert_ack,
			.alert_webhook_status = sqlite_alert_webhook_status,
			.webhook_due = sqlite_webhook_due,
			.retention_apply = sqlite_retention_apply,
			.compact = sqlite_compact,
		},
	.schedules =
		&(const struct store_schedule_ops){
			.schedule_create = sqlite_schedule_create,
			.schedule_list = sqlite_schedule_list,
			.schedule_get = sqlite_schedule_get,
			.schedule_patch = sqlite_schedule_patch,
			.schedule_delete = sqlite_schedule_delete,
			.schedule_owner_set = sqlite_schedule_owner_set,
			.schedules_due = sqlite_schedules_due,
			.schedule_claim = sqlite_schedule_claim,
			.schedule_run_finish = sqlite_schedule_run_finish,
			.schedule_pending = sqlite_schedule_pending,
		},
};
