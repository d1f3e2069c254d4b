/*
 * store_backend.h - what a store backend implements: the one internal
 * interface behind store.h and store_async.h, as curl's vtls.h is behind
 * its TLS backends. store.c dispatches every store_*() call through the
 * backend that opened the handle; callers see store.h only.
 *
 * Adding a backend (the PostgreSQL one, say): a folder beside sqlite/
 * with its files, which define a `const struct store_backend` with its
 * scheme, and one entry in store.c's table of backends. store_open()
 * picks the backend by the --db value's scheme ("SCHEME:LOCATION"; a value
 * without a scheme is a path for the first backend, SQLite).
 *
 * Each backend defines struct store (the handle) and struct store_call (a
 * write in flight, store_async.h) for its own files only, both beginning
 * with a struct store_base; no file sees two backends' definitions.
 * store.c reads only that first member. The backend's functions keep
 * store.h's contracts: ids, plain values and cJSON bodies in, the same
 * bodies out, and 0 or a negative LL_E* code with a message.
 *
 * Not a backend's: the queue's policy (queue.h), the writer's caches
 * (store_cache.h), the blob files (blob_files.h), token kinds' names
 * (store_token_kind.c); a backend uses them.
 */
#ifndef LOADLAB_SERVER_STORE_BACKEND_H
#define LOADLAB_SERVER_STORE_BACKEND_H

#include "store.h"
#include "store_async.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct store_backend;

/* The first member of every backend's struct store and struct store_call:
 * set by store_open() on the handle, by the backend on a call. */
struct store_base {
	const struct store_backend *backend;
	/* The live tokens remembered (store_token_cache.h), NULL when none are
	 * (a store that other daemons write too). */
	struct token_cache *token_cache;
};

/* The operations by resource, each as store.h's function of the same name
 * without "store_". The blocking store_task_lease(), store_agent_heartbeat()
 * and store_task_result() are X_begin() without DONE then X_end(): a
 * backend's X_begin() with DONE NULL returns once the write is committed. */

/* The agents, their heartbeats and calibrations (store.h, "agents"). */
struct store_agent_ops {
	int (*agent_enroll)(struct store *store, const char *name, const cJSON *facts, const cJSON *labels,
			    const unsigned char hash[STORE_TOKEN_HASH_SIZE], long long now,
			    long long *ret_agent_id);
	int (*agent_list)(struct store *store, long long now, cJSON **ret_list);
	int (*agent_get)(struct store *store, long long agent_id, long long now, cJSON **ret_agent);
	int (*agent_patch)(struct store *store, long long agent_id, const struct store_agent_change *change,
			   long long now, cJSON **ret_agent);
	int (*task_calibration_spec)(struct store *store, long long task_id, long long *ret_job_id,
				     cJSON **ret_spec);
	int (*agent_builds)(struct store *store, long long agent_id, bool *ret_builds);
	int (*agent_build_set)(struct store *store, long long agent_id, const char *version,
			       const char *sha256);
	int (*agent_update_set)(struct store *store, long long agent_id, const cJSON *update);
	int (*agent_heartbeat_begin)(struct store *store, long long agent_id, long long now,
				     store_done_fn done, void *context, struct store_call **ret_call);
	int (*agent_heartbeat_end)(struct store_call *call, cJSON **ret_body);
};

/* The jobs (store.h, "jobs"). */
struct store_job_ops {
	int (*job_create)(struct store *store, const cJSON *spec, const char *submitted_by, long long now,
			  cJSON **ret_body);
	int (*job_list)(struct store *store, const char *state, int limit, long long before,
			cJSON **ret_list);
	int (*job_get)(struct store *store, long long job_id, cJSON **ret_job);
	int (*job_add_waiting)(struct store *store, cJSON *job, long long now);
	int (*job_cancel)(struct store *store, long long job_id, long long now, cJSON **ret_job);
};

/* The tasks and their leases, the agent loop's writes (store.h "tasks", store_async.h). */
struct store_task_ops {
	int (*task_progress)(struct store *store, long long agent_id, long long task_id, long long attempt,
			     const char *phase, int percent, long long now, cJSON **ret_body);
	int (*task_fail)(struct store *store, long long agent_id, long long task_id, long long attempt,
			 const char *reason, bool retryable, long long now, cJSON **ret_body);
	int (*expire_leases)(struct store *store, long long now, int *ret_expired);
	int (*task_lease_begin)(struct store *store, long long agent_id, long long now, store_done_fn done,
				void *context, struct store_call **ret_call);
	int (*task_lease_end)(struct store_call *call, cJSON **ret_lease);
	int (*task_result_begin)(struct store *store, long long agent_id, long long task_id,
				 long long attempt, const char *body, size_t body_len, long long now,
				 store_done_fn done, void *context, struct store_call **ret_call);
	int (*task_result_end)(struct store_call *call, cJSON **ret_body, bool *ret_replayed);
	bool (*task_result_is_calibration)(const struct store_call *call);
};

/* The results and the reports' rows, the summaries' cache (store.h "tasks", "reports"). */
struct store_result_ops {
	int (*result_get)(struct store *store, long long result_id, char **ret_text);
	int (*result_with_cell)(struct store *store, long long result_id, char **ret_text, char **ret_cell);
	int (*job_report_rows)(struct store *store, long long job_id, bool with_bodies,
			       int (*fn)(void *context, const struct store_report_row *row), void *context);
	int (*job_compare_rows)(struct store *store, long long job_id, int version,
				int (*fn)(void *context, const struct store_report_row *row), void *context);
	int (*results_unsummarized)(struct store *store, int version, long long limit,
				    void (*fn)(void *context, long long result_id), void *context);
	int (*results_without_compare)(struct store *store, int version, long long limit,
				       void (*fn)(void *context, long long result_id), void *context);
	int (*summaries_put)(struct store *store, size_t count, const long long *result_ids, int version,
			     const char *const *summaries, const void *const *compare,
			     const size_t *compare_len);
	int (*compare_data_put)(struct store *store, size_t count, const long long *result_ids, int version,
				const void *const *compare, const size_t *compare_len);
};

/* The series, regression checks and alerts (store.h, "series"). */
struct store_series_ops {
	int (*series_list)(struct store *store, cJSON **ret_list);
	int (*series_jobs)(struct store *store, const char *name, long long since_ms, cJSON **ret_jobs);
	int (*series_settings_get)(struct store *store, const char *name,
				   struct store_series_settings *ret_settings);
	int (*series_settings_put)(struct store *store, const char *name,
				   const struct store_series_settings *settings, long long now,
				   cJSON **ret_body);
	int (*series_unchecked)(struct store *store, int limit, cJSON **ret_jobs);
	int (*series_previous_done)(struct store *store, const char *series, long long job_id,
				    long long *ret_job_id);
	int (*series_check_record)(struct store *store, long long job_id, const char *series,
				   long long baseline_id, const char *verdict, const cJSON *alert,
				   long long now, long long *ret_alert_id);
	int (*alert_list)(struct store *store, bool open_only, cJSON **ret_list);
	int (*alert_get)(struct store *store, long long id, cJSON **ret_alert);
	int (*alert_ack)(struct store *store, long long id, const char *by, long long now, cJSON **ret_alert);
	int (*alert_webhook_status)(struct store *store, long long id, const char *status,
				    long long retry_at_ms);
	int (*webhook_due)(struct store *store, long long now, int limit, cJSON **ret_due);
	/* Retention and compaction (store.h); NULL for a backend that has
	 * none (nothing pruned, nothing compacted; PostgreSQL's autovacuum). */
	int (*retention_apply)(struct store *store, long long now, int limit, int *ret_pruned);
	int (*compact)(struct store *store, bool full, long long *ret_bytes_before,
		       long long *ret_bytes_after);
};

/* The schedules and their runs (store.h, "series, schedules"). */
struct store_schedule_ops {
	int (*schedule_create)(struct store *store, const struct store_schedule_new *schedule, long long now,
			       cJSON **ret_schedule);
	int (*schedule_list)(struct store *store, cJSON **ret_list);
	int (*schedule_get)(struct store *store, long long id, cJSON **ret_schedule);
	int (*schedule_patch)(struct store *store, long long id, int enabled, const char *cron,
			      long long interval_s, const char *job_text, long long next_due_ms,
			      long long now, cJSON **ret_schedule);
	int (*schedule_delete)(struct store *store, long long id, cJSON **ret_body);
	int (*schedule_owner_set)(struct store *store, long long id, const char *owner);
	int (*schedules_due)(struct store *store, long long now, long long *ret_ids, int max, int *ret_count);
	int (*schedule_claim)(struct store *store, long long id, bool manual, long long now,
			      store_next_due_fn next_due, struct store_schedule_claim *ret_claim);
	int (*schedule_run_finish)(struct store *store, long long run_id, long long job_id, const char *error,
				   long long now);
	int (*schedule_pending)(struct store *store, cJSON **ret_runs);
};

/* The handle: opening, checking and closing the store, its figures, and a
 * call dropped unanswered (store.h, store_async.h). */
struct store_handle_ops {
	/* Opens the store at LOCATION (what follows "SCHEME:") with OPTIONS. */
	int (*open)(const char *location, const struct store_options *options, struct store **ret_store);
	void (*close)(struct store *store);
	int (*check)(struct store *store);
	int (*integrity_check)(struct store *store);
	int (*stats)(struct store *store, long long now, struct store_stats *ret_stats);
	/* store_watch_tasks(); NULL for a backend whose daemon is the only
	 * writer (SQLite): a no-op. */
	int (*watch_tasks)(struct store *store, store_watch_fn fn, void *arg);
	/* store_role_take(); NULL for a store of one daemon: always held. */
	int (*role_take)(struct store *store, const char *role, bool *ret_held);
	void (*call_free)(struct store_call *call);
	/* store_backup(), store_restore() with LOCATION as open() takes it;
	 * NULL for a backend that has none (LL_EUNSUPPORTED). */
	int (*backup)(const char *location, const char *to, struct store_counts *ret_counts);
	int (*restore)(const char *from, const char *location, struct store_counts *ret_counts);
};

struct db_driver;

struct store_backend {
	const char *scheme; /* "sqlite": --db sqlite:PATH */
	const char *alias;  /* another scheme of the same backend, or NULL ("postgres") */
	/* The statement layer's driver (db_driver.h), which the resources
	 * written once over db.h use. */
	const struct db_driver *db;
	const struct store_handle_ops *handle;
	const struct store_agent_ops *agents;
	const struct store_job_ops *jobs;
	const struct store_task_ops *tasks;
	const struct store_result_ops *results;
	const struct store_series_ops *series;
	const struct store_schedule_ops *schedules;
};

/* The backends (store.c's table names them). */
extern const struct store_backend store_backend_sqlite;
/* PostgreSQL (store/pg/): --db postgresql://... and postgres://... */
extern const struct store_backend store_backend_pg;

#endif
