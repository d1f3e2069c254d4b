/*
 * store.h - the daemon's durable state: tokens, agents, jobs, tasks,
 * results, and the queue semantics that move tasks between states.
 *
 * The interface speaks in ids, plain values and cJSON documents shaped as
 * the REST bodies of docs/rest-bodies.md, never in SQL. store_open() picks
 * a backend by the --db value's scheme (store_backend.h; store.c
 * dispatches): SQLite's is store/sqlite/ (--db sqlite:PATH, or a bare
 * PATH), PostgreSQL's is store/pg/ (--db postgresql://..., several
 * daemons sharing one database: README, "Scaling out"). What is no backend's lives in store/: the queue's decisions
 * (a job's state, backoff, expiry, matching) are queue.h's pure functions,
 * the writer's caches store_cache.h's, the uploaded files blob_files.h's.
 *
 * Durability: every function that changes state returns only after its
 * change is committed and fsynced (SQLite: WAL; the writer commits with
 * synchronous=NORMAL and a syncer thread fsyncs the WAL before anyone is
 * answered, which puts the same bytes on disk as synchronous=FULL). Writes
 * from many threads are committed together by one writer (group commit),
 * so a burst of results costs one fsync, not one each; store_async.h has
 * the agent loop's writes without a blocked thread. A reader may see a
 * commit up to one fsync before it is durable.
 *
 * Task states: queued -> leased -> done | (failed: queued again after a
 * backoff, or dead after max_attempts) ; queued|leased -> cancelled.
 * A lease that is not renewed by heartbeats or progress expires and the
 * task is queued again (or dead when its attempts are used up).
 *
 * Unless said otherwise a function returns 0 or a negative LL_E* code with
 * a message (err_message()); LL_ENOTFOUND for unknown ids, LL_ECONFLICT /
 * LL_ESTATE for state conflicts, LL_EFORBIDDEN when an agent touches a
 * task it never held. cJSON results belong to the caller.
 */
#ifndef LOADLAB_SERVER_STORE_H
#define LOADLAB_SERVER_STORE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct store;

struct store_options {
	long long lease_ms;         /* a lease lasts this long unless renewed */
	int max_attempts;           /* leases per task before it is dead */
	long long backoff_ms;       /* delay before the first retry; doubles */
	long long backoff_max_ms;   /* cap of the retry delay */
	long long offline_after_ms; /* unseen this long: the agent is offline */
	bool each_agent_build;      /* a pe/elf job without "build" builds on each agent */
};

/* Token kinds, from most to least powerful. */
enum store_token_kind { STORE_TOKEN_ADMIN, STORE_TOKEN_USER, STORE_TOKEN_ENROLL, STORE_TOKEN_AGENT };

#define STORE_TOKEN_HASH_SIZE 32

struct store_token {
	long long id;
	enum store_token_kind kind;
	long long agent_id; /* for STORE_TOKEN_AGENT, else 0 */
	char name[65];
	char team[65]; /* a user token's team, "" when none */
};

/* Error code for a result or progress of an attempt that is not the
 * current lease (REST: 409 stale_attempt). */
#define STORE_STALE_ATTEMPT LL_ECONFLICT
/* Error code for a task whose job was cancelled (REST: 409 task_cancelled). */
#define STORE_TASK_CANCELLED LL_ESTATE

/* Opens (creating and migrating as needed) the store at PATH: "SCHEME:LOCATION"
 * for a backend by its scheme, a path without one for SQLite's (its files
 * 0600). LL_EINVAL for a scheme no backend has. */
int store_open(const char *path, const struct store_options *options, struct store **ret_store);

/* Finishes pending writes and closes. NULL is fine. */
void store_close(struct store *store);

/* 0 when the store answers a trivial query. */
int store_check(struct store *store);

/* --- watching for ready tasks (several daemons on one store) ---
 *
 * Why FN is called (store_watch_tasks()). */
enum store_watch_event {
	STORE_WATCH_TASKS,       /* another writer (or this one) made tasks ready */
	STORE_WATCH_RECONNECTED, /* the watch came back after losing the store:
				  * tasks may have been made ready meanwhile */
};
typedef void (*store_watch_fn)(void *arg, enum store_watch_event event);

/* Calls FN(ARG, event) on a thread of the store's own whenever a write of
 * any daemon sharing the store commits tasks that may be leased now (a
 * job submitted, leases expired back to the queue, a build done, an
 * agent's labels changed): long-polls parked here look again at once
 * instead of at the next lease-expiry tick. FN NULL stops the watch (it
 * has returned for the last time when this returns); store_close() stops
 * it too. A backend whose daemon is the store's only writer (SQLite)
 * does nothing: its callers wake their own waiters. PostgreSQL: LISTEN
 * loadlab_tasks on one connection outside the pool, reconnecting with
 * the pool's backoff. */
int store_watch_tasks(struct store *store, store_watch_fn fn, void *arg);

/* Takes ROLE (a short name: "summarizer") for this daemon among all that
 * share the store, or tells whether it still holds it: *RET_HELD. One
 * daemon holds a role at a time, until it stops or loses the store; ask
 * again now and then to take it over. Returns 1 when the store has one
 * daemon (SQLite: always held, no need to ask again), 0 after asking, or
 * a negative LL_E* code (not held). PostgreSQL: pg_try_advisory_lock on
 * one connection outside the pool. */
int store_role_take(struct store *store, const char *role, bool *ret_held);

/* Checks the file's integrity (SQLite: PRAGMA integrity_check). */
int store_integrity_check(struct store *store);

/* --- backup and restore (docs/operations.md) --- */

/* What a backup or a restore holds: rows per table and the schema version. */
struct store_counts {
	long long schema_version, jobs, tasks, results, agents, series_settings, alerts;
};

/* Copies the store at PATH (as store_open() names it), which a running
 * loadlabd may be writing, to the new file TO: one consistent snapshot
 * (SQLite: the online backup API in one step, under one read transaction:
 * writers go on; the copy is written beside TO and renamed into place, so
 * TO is a complete store or absent). LL_ECONFLICT when TO exists,
 * LL_EUNSUPPORTED for a backend whose backups are its own tool's
 * (PostgreSQL: pg_dump). *RET_COUNTS: what the copy holds. */
int store_backup(const char *path, const char *to, struct store_counts *ret_counts);

/* Copies the backup FROM to the new store PATH and checks it (SQLite:
 * PRAGMA integrity_check, then the counts); LL_ECONFLICT when PATH
 * exists, LL_EFORMAT when the copy fails the check (and PATH is removed). */
int store_restore(const char *from, const char *path, struct store_counts *ret_counts);

/* --- moving a lab to PostgreSQL (docs/operations.md, loadlabd migrate) --- */

#define STORE_MIGRATE_TABLES 64
#define STORE_MIGRATE_NAME 64

/* One table of a migration: its rows in the source and in the target. */
struct store_migrate_table {
	char name[STORE_MIGRATE_NAME];
	long long from, to;
};

struct store_migrate_counts {
	long long schema_version;
	int tables, mismatches;
	struct store_migrate_table table[STORE_MIGRATE_TABLES];
};

/* Copies every table of the SQLite store FROM (a path; read-only, read in
 * one transaction, the daemon best stopped) into the PostgreSQL database
 * TO (postgresql://...), migrated to this version first, in one
 * transaction that also moves each id sequence past its max(id) and
 * counts every table on both sides (*RET_COUNTS). LL_ESTATE when FROM's
 * schema version is not this build's, LL_ECONFLICT when TO is not empty
 * (both before anything is written) or when a count differs (rolled
 * back: TO keeps no row). Blobs are files, not rows: not copied here. */
int store_migrate(const char *from, const char *to, struct store_migrate_counts *ret_counts);

/* --- tokens --- */

const char *store_token_kind_name(enum store_token_kind kind);
int store_token_kind_parse(const char *name, enum store_token_kind *ret_kind);

/* Number of live (not revoked) tokens of KIND. */
int store_token_count(struct store *store, enum store_token_kind kind, long long *ret_count);

/* Stores a token by its hash, of TEAM (NULL: none); *RET_TOKEN is
 * {"id","kind","name","team","created_at"} ("team" only when given). */
int store_token_create(struct store *store, enum store_token_kind kind, const char *name, const char *team,
		       const unsigned char hash[STORE_TOKEN_HASH_SIZE], long long now, cJSON **ret_token);

/* The live token whose hash is HASH (compared in constant time), or
 * LL_ENOTFOUND when there is none or it was revoked. */
int store_token_find(struct store *store, const unsigned char hash[STORE_TOKEN_HASH_SIZE],
		     struct store_token *ret_token);

/* {"tokens": [{"id","kind","name","team","created_at","revoked_at"}...]} */
int store_token_list(struct store *store, cJSON **ret_list);

/* Revokes token ID (agent tokens too). {"id","revoked":true} */
int store_token_revoke(struct store *store, long long id, long long now, cJSON **ret_body);

/* --- agents --- */

/* Creates an agent with its token hash; FACTS and LABELS are objects. */
int store_agent_enroll(struct store *store, const char *name, const cJSON *facts, const cJSON *labels,
		       const unsigned char hash[STORE_TOKEN_HASH_SIZE], long long now,
		       long long *ret_agent_id);

/* {"agents": [AGENT...]} */
int store_agent_list(struct store *store, long long now, cJSON **ret_list);

/* AGENT AGENT_ID, as listed; LL_ENOTFOUND when there is none. */
int store_agent_get(struct store *store, long long agent_id, long long now, cJSON **ret_agent);

/* What an admin changes of an agent (PATCH /api/v1/agents/{id}): LABELS
 * ({KEY: string|null}, may be NULL); QUARANTINED and BUILDER each -1
 * (unchanged), 0 (off) or 1 (on). BUILDER lets the agent lease build
 * tasks (queue_build.h); nothing an agent sends sets it. */
struct store_agent_change {
	const cJSON *labels;
	int quarantined;
	int builder;
};

/* Applies CHANGE to agent AGENT_ID; returns the AGENT. */
int store_agent_patch(struct store *store, long long agent_id, const struct store_agent_change *change,
		      long long now, cJSON **ret_agent);

/* Marks the agent seen, renews the leases it holds, and reports each
 * (and, once, each of its tasks that was cancelled). */
int store_agent_heartbeat(struct store *store, long long agent_id, long long now, cJSON **ret_body);

/* The normalized spec of task TASK_ID's job into *RET_SPEC (the caller
 * deletes it) and the job's id into *RET_JOB_ID when the job is a
 * calibration (its spec has "calibration"); *RET_SPEC NULL otherwise,
 * and for a task that does not exist. */
int store_task_calibration_spec(struct store *store, long long task_id, long long *ret_job_id,
				cJSON **ret_spec);

/* Records CALIBRATION (an object, AGENT's "last_calibration" in
 * docs/rest-bodies.md) as agent AGENT_ID's last one, unless the agent
 * already has one from a later result (a larger "result_id"). */
int store_agent_calibration_put(struct store *store, long long agent_id, const cJSON *calibration);

/* Records that agent AGENT_ID runs the agent binary VERSION (at most 64
 * printable bytes) whose SHA-256 is SHA256 (64 lowercase hex digits), as
 * its lease request says (docs/agent.md, "Updates"); the agent document's
 * "agent_version" and "agent_sha256". */
int store_agent_build_set(struct store *store, long long agent_id, const char *version, const char *sha256);

/* Records what agent AGENT_ID says of its updates, UPDATE (an object
 * checked by the caller: {"state", "reason", "sha256"}, docs/agent.md,
 * "Signed builds"), as its lease request says; the agent document's
 * "agent_update" (null until the agent has said). */
int store_agent_update_set(struct store *store, long long agent_id, const cJSON *update);

/* Whether agent AGENT_ID holds the lease of a build task now (a builder,
 * which may upload its build's files: docs/builds.md). */
int store_agent_builds(struct store *store, long long agent_id, bool *ret_builds);

/* --- jobs --- */

/* Creates a job from a normalized spec (job_spec_normalize()) and its
 * tasks; {"id","task_count","state"}. LL_EINVAL when an each_agent matrix
 * matches no agent. */
int store_job_create(struct store *store, const cJSON *spec, const char *submitted_by, long long now,
		     cJSON **ret_body);

/* {"jobs": [JOB_SUMMARY...], "next_before": id|null}, newest first;
 * STATE may be NULL; BEFORE 0 means from the newest. */
int store_job_list(struct store *store, const char *state, int limit, long long before, cJSON **ret_list);

/* JOB_SUMMARY + "spec" + "tasks". */
int store_job_get(struct store *store, long long job_id, cJSON **ret_job);

/* Adds "waiting" to every task of JOB (a store_job_get() body): null for
 * a task that is not queued, else {"could_run": bool, "reason":
 * string|null}: whether an agent enrolled at NOW can lease it and, when
 * none can, why (queue_task_waiting(): "no agent has os=winxp", ...). */
int store_job_add_waiting(struct store *store, cJSON *job, long long now);

/* Cancels a job that is not finished; returns its JOB_SUMMARY. */
int store_job_cancel(struct store *store, long long job_id, long long now, cJSON **ret_job);

/* --- tasks --- */

/* Leases the best queued task that AGENT may run (highest priority, then
 * oldest); *RET_LEASE is NULL when there is none. Marks the agent seen. */
int store_task_lease(struct store *store, long long agent_id, long long now, cJSON **ret_lease);

int store_task_progress(struct store *store, long long agent_id, long long task_id, long long attempt,
			const char *phase, int percent, long long now, cJSON **ret_body);

/* Stores the result of (TASK_ID, ATTEMPT) once; a replay returns the same
 * body and sets *RET_REPLAYED. BODY is the request text, kept as sent. */
int store_task_result(struct store *store, long long agent_id, long long task_id, long long attempt,
		      const char *body, size_t body_len, long long now, cJSON **ret_body, bool *ret_replayed);

int store_task_fail(struct store *store, long long agent_id, long long task_id, long long attempt,
		    const char *reason, bool retryable, long long now, cJSON **ret_body);

/* Returns expired leases to the queue (or marks them dead); *RET_EXPIRED
 * says how many. */
int store_expire_leases(struct store *store, long long now, int *ret_expired);

/* The stored result body of RESULT_ID (text as sent). */
int store_result_get(struct store *store, long long result_id, char **ret_text);

/* The same and the cell of its task (JSON object text; "{}" when the task
 * is gone), for its summary. */
int store_result_with_cell(struct store *store, long long result_id, char **ret_text, char **ret_cell);

/* --- reports --- */

/* One task of a job as reports see it. Texts are borrowed for the call. */
struct store_report_row {
	long long task_id;
	const char *cell;       /* JSON object text */
	const char *state;      /* task state */
	const char *last_error; /* NULL when none */
	long long result_id;    /* 0 when the task has no result */
	const char *summary;    /* cached summary text, NULL when none */
	int summary_version;
	const char *body;    /* result text: when asked for, or when no summary or no compare data */
	const void *compare; /* cached compare data (report_compare_data.c), NULL when none */
	size_t compare_len;
};

/* Calls FN(CONTEXT, row) for every task of JOB_ID in task order; FN's
 * negative return stops the walk and is returned. WITH_BODIES: the result
 * text for every task with a result, else only where no summary of
 * VERSION (the caller's summary version) and its compare data are cached.
 * LL_ENOTFOUND for an unknown job. */
int store_job_report_rows(struct store *store, long long job_id, bool with_bodies, int version,
			  int (*fn)(void *context, const struct store_report_row *row), void *context);

/* The same rows for compare: SUMMARY NULL, COMPARE only when of VERSION,
 * BODY where there is none. */
int store_job_compare_rows(struct store *store, long long job_id, int version,
			   int (*fn)(void *context, const struct store_report_row *row), void *context);

/* Calls FN(CONTEXT, id) for up to LIMIT results that have no cached
 * summary of VERSION, oldest first. */
int store_results_unsummarized(struct store *store, int version, long long limit,
			       void (*fn)(void *context, long long result_id), void *context);

/* The same for up to LIMIT results whose summary of VERSION is cached
 * without compare data, oldest first. */
int store_results_without_compare(struct store *store, int version, long long limit,
				  void (*fn)(void *context, long long result_id), void *context);

/* Caches the summaries computed from results' texts (called only by
 * summary_cache_put(), reports/summary_cache.c, as is the next): COUNT
 * pairs of RESULT_IDS[i] and SUMMARIES[i], with COMPARE[i] (COMPARE_LEN[i]
 * bytes; COMPARE or COMPARE[i] NULL: none), all in one transaction. A
 * summary stored without compare data keeps the compare data already
 * cached for the same result and VERSION. */
int store_summaries_put(struct store *store, size_t count, const long long *result_ids, int version,
			const char *const *summaries, const void *const *compare, const size_t *compare_len);

/* Caches compare data beside summaries of VERSION already cached: COUNT
 * pairs of RESULT_IDS[i] and COMPARE[i] (COMPARE_LEN[i] bytes; NULL:
 * skipped), in one transaction; results without such a summary are left
 * as they are. */
int store_compare_data_put(struct store *store, size_t count, const long long *result_ids, int version,
			   const void *const *compare, const size_t *compare_len);

/* --- history of repeated jobs ---
 *
 * What the intervals across jobs read (docs/statistics.md, "Intervals
 * across jobs"): earlier jobs that measured the same thing. */

/* Calls FN(CONTEXT, job_id, spec, series) for up to LIMIT jobs of FAMILY
 * in state done with an id below BEFORE, newest first (SPEC: the
 * normalized spec's text; SERIES: NULL when none; both borrowed for the
 * call, and FN must not call the store). A non-zero return of FN stops
 * the walk and is returned. */
int store_job_history(struct store *store, const char *family, long long before, int limit,
		      int (*fn)(void *context, long long job_id, const char *spec, const char *series),
		      void *context);

/* Keeps CALIBRATION (calibration_compute()'s object, within-job, with
 * "result_id") as one of agent AGENT_ID's calibrations; a result's
 * calibration is kept once (a replay changes nothing). */
int store_calibration_add(struct store *store, long long agent_id, long long result_id,
			  const cJSON *calibration);

/* Calls FN(CONTEXT, calibration) (parsed, borrowed for the call) for up
 * to LIMIT of agent AGENT_ID's calibrations kept by store_calibration_add()
 * from results before BEFORE_RESULT_ID whose "injected_us" is INJECTED_US,
 * "family" FAMILY and "runner" RUNNER (NULL: null), newest first. */
int store_calibration_history(struct store *store, long long agent_id, long long before_result_id,
			      double injected_us, const char *family, const char *runner, int limit,
			      void (*fn)(void *context, const cJSON *calibration), void *context);

/* --- series, schedules, regression alerts ---
 *
 * A series is the jobs whose spec names it, in submission (id) order.
 * Its settings (threshold of an alert, webhook) default to
 * STORE_SERIES_DEFAULT_THRESHOLD_PCT and none.
 *
 * A schedule fires exactly once per due time: store_schedule_claim()
 * records the run and moves next_due past NOW in one transaction, the
 * caller then creates the job (submitted_by "schedule:ID") and closes the
 * run with store_schedule_run_finish(). A claim left open by a crash is
 * matched with its job (the first job of that submitter after the claim)
 * or handed back by store_schedule_pending() to be created once. */

#define STORE_SERIES_DEFAULT_THRESHOLD_PCT 5.0
#define STORE_WEBHOOK_URL_MAX 1024
/* Alerts waiting for their webhook at most; an alert opened beyond that
 * is marked "failed: the delivery queue is full" at once. */
#define STORE_WEBHOOK_PENDING_MAX 10000
#define STORE_OWNER_MAX 96

/* OWNER: who may change the series ("KIND:NAME" of a token, as a job's
 * submitted_by): the one stored with its settings, else the submitter of
 * its first job (a schedule's job: that schedule's created_by); "" when
 * nobody has claimed it yet. */
struct store_series_settings {
	double threshold_pct;
	long long retain_days;   /* raw samples of jobs older than this are dropped; 0: kept */
	long long retain_points; /* raw samples of all but the newest this many jobs dropped; 0: kept */
	char webhook_url[STORE_WEBHOOK_URL_MAX + 1]; /* "" when none */
	char owner[STORE_OWNER_MAX + 1];
};

/* {"series": [{"name","jobs","last_job":{"id","state","revision","created_at"},
 * "threshold_pct","webhook_url","owner"}]}, by name ("owner" null when
 * nobody owns it). */
int store_series_list(struct store *store, cJSON **ret_list);

/* The jobs of series NAME created at or after SINCE_MS, in submission
 * order: [{"id","name","state","revision","created_at"}] (maybe empty). */
int store_series_jobs(struct store *store, const char *name, long long since_ms, cJSON **ret_jobs);

int store_series_settings_get(struct store *store, const char *name,
			      struct store_series_settings *ret_settings);
/* Stores SETTINGS of NAME (its owner too); {"name","threshold_pct",
 * "webhook_url","owner"}. */
int store_series_settings_put(struct store *store, const char *name,
			      const struct store_series_settings *settings, long long now, cJSON **ret_body);

/* A schedule as created; JOB_TEXT is the submitted job (JSON text). */
struct store_schedule_new {
	const char *series;
	const char *cron;     /* NULL when INTERVAL_S is used */
	long long interval_s; /* 0 when CRON is used */
	const char *job_text;
	bool enabled;
	const char *created_by;
	long long first_due_ms;
};

/* SCHEDULE: {"id","series","cron","interval_s","job","enabled","created_by",
 * "owner","created_at","updated_at","next_run_at","last_due_at",
 * "last_job_id","skipped","last_skip":{"at","reason"}|null}; "owner" is the
 * one an admin named, else created_by. */
int store_schedule_create(struct store *store, const struct store_schedule_new *schedule, long long now,
			  cJSON **ret_schedule);
/* {"schedules": [SCHEDULE...]} by id. */
int store_schedule_list(struct store *store, cJSON **ret_list);
int store_schedule_get(struct store *store, long long id, cJSON **ret_schedule);
/* Changes what is given: ENABLED (-1: unchanged), CRON / INTERVAL_S (both
 * NULL/0: unchanged), JOB_TEXT (NULL: unchanged), NEXT_DUE_MS (0:
 * unchanged). Returns the SCHEDULE. */
int store_schedule_patch(struct store *store, long long id, int enabled, const char *cron,
			 long long interval_s, const char *job_text, long long next_due_ms, long long now,
			 cJSON **ret_schedule);
/* Names OWNER ("KIND:NAME", "team:NAME") the owner of schedule ID. */
int store_schedule_owner_set(struct store *store, long long id, const char *owner);
/* Deletes a schedule (its jobs stay); {"id","deleted":true}. */
int store_schedule_delete(struct store *store, long long id, cJSON **ret_body);

/* Up to MAX ids of enabled schedules due at NOW (next_due <= NOW). */
int store_schedules_due(struct store *store, long long now, long long *ret_ids, int max, int *ret_count);

/* Computes the due time after PREVIOUS_DUE_MS that is the first one past
 * NOW_MS for a schedule (scheduler.h's schedule_next_due()). */
typedef int (*store_next_due_fn)(const char *cron, long long interval_s, long long previous_due_ms,
				 long long now_ms, long long *ret_next_ms);

struct store_schedule_claim {
	long long run_id;
	long long schedule_id;
	long long due_ms;
	bool skipped;     /* a job of the schedule is still queued or running */
	char reason[160]; /* why it was skipped */
	char *job_text;   /* the job to create (free()); NULL when skipped */
};

/* Claims schedule ID's run: when MANUAL, at NOW without moving next_due;
 * else its due run (LL_ESTATE when it is not due or disabled), moving
 * next_due with NEXT_DUE. When a job of the schedule is still queued or
 * running, or a claim is open, the run is recorded as skipped (MANUAL:
 * LL_ECONFLICT instead). */
int store_schedule_claim(struct store *store, long long id, bool manual, long long now,
			 store_next_due_fn next_due, struct store_schedule_claim *ret_claim);

/* Closes run RUN_ID: JOB_ID created, or ERROR (job_id 0) why not. */
int store_schedule_run_finish(struct store *store, long long run_id, long long job_id, const char *error,
			      long long now);

/* Closes the open claims whose job exists; returns the others, whose job
 * must still be created: [{"run_id","schedule_id","due","job"}]. */
int store_schedule_pending(struct store *store, cJSON **ret_runs);

/* Finished jobs (done, failed, cancelled) of a series not yet checked for
 * a regression, oldest first: [{"id","series","state"}]. */
int store_series_unchecked(struct store *store, int limit, cJSON **ret_jobs);

/* The last done job of SERIES before JOB_ID; LL_ENOTFOUND when none. */
int store_series_previous_done(struct store *store, const char *series, long long job_id,
			       long long *ret_job_id);

/* Records that JOB_ID was checked (VERDICT of its comparison with
 * BASELINE_ID, 0 when none) and, when ALERT is not NULL
 * ({"threshold_pct","worst_change_pct","rows"}), opens an alert, once:
 * *RET_ALERT_ID is its id, or 0. The alert's job_id and baseline_id are
 * JOB_ID and BASELINE_ID unless ALERT has numbers "job_id" and
 * "baseline_id" (an alert from a change point names the jobs around it). When the series has a webhook, the
 * alert's delivery is queued in the same transaction ("webhook":
 * "pending", due at NOW), unless STORE_WEBHOOK_PENDING_MAX are waiting. */
int store_series_check_record(struct store *store, long long job_id, const char *series,
			      long long baseline_id, const char *verdict, const cJSON *alert, long long now,
			      long long *ret_alert_id);

/* ALERT: {"id","series","job_id","baseline_id","threshold_pct","worst_change_pct",
 * "rows","created_at","acked_at","acked_by","webhook"}.
 * {"alerts": [ALERT...]} newest first; only unacknowledged when OPEN_ONLY. */
int store_alert_list(struct store *store, bool open_only, cJSON **ret_list);
int store_alert_get(struct store *store, long long id, cJSON **ret_alert);
/* Acknowledges alert ID (again: LL_ECONFLICT); returns the ALERT. */
int store_alert_ack(struct store *store, long long id, const char *by, long long now, cJSON **ret_alert);
/* Records how the alert's webhook went: STATUS ("delivered", "failed:
 * ...", "pending: ..."), and, when RETRY_AT_MS is not 0, that it is tried
 * again from then (else its delivery is over). Counts the attempt. */
int store_alert_webhook_status(struct store *store, long long id, const char *status, long long retry_at_ms);

/* The deliveries due at NOW, the first due of each series (a series'
 * alerts go out one at a time, in order), at most LIMIT:
 * [{"alert_id","series","attempts"}], the longest waiting first. */
int store_webhook_due(struct store *store, long long now, int limit, cJSON **ret_due);

/* --- retention and compaction (docs/operations.md) --- */

/* Drops the raw samples (store/result_prune.h) of up to LIMIT results of
 * the series whose retention (retain_days, retain_points) they are past
 * at NOW, keeping their summaries and compare data: only results that
 * have both. Never those of a series' newest done job, of the baseline
 * its last check compared with, or of a job or baseline of an open alert.
 * *RET_PRUNED: how many were pruned (LIMIT: call again). */
int store_retention_apply(struct store *store, long long now, int limit, int *ret_pruned);

/* Returns the store's unused pages to the file system (SQLite:
 * incremental_vacuum, then a checkpoint that truncates the log and the
 * file); FULL also gives back the room freed inside pages (SQLite: VACUUM,
 * which rewrites the store while every write waits). *RET_BYTES_BEFORE
 * the store's size before (SQLite: its pages, those in the log too),
 * *RET_BYTES_AFTER the file's size after. */
int store_compact(struct store *store, bool full, long long *ret_bytes_before, long long *ret_bytes_after);

/* --- metrics --- */

struct store_stats {
	long long tasks_queued, tasks_ready, tasks_leased, tasks_done, tasks_dead, tasks_cancelled;
	long long jobs_queued, jobs_running, jobs_done, jobs_failed, jobs_cancelled;
	long long agents_online, agents_offline, agents_quarantined;
	long long results;
	long long webhooks_pending;       /* alerts waiting for their webhook */
	long long commits, committed_ops; /* group commit: transactions, writes */
	long long syncs;                  /* fsyncs that made commits durable */
	long long store_bytes;            /* the store's size (SQLite: the file's pages) */
	long long store_free_bytes;       /* of which unused (SQLite: free pages), for compaction */
};

int store_stats(struct store *store, long long now, struct store_stats *ret_stats);

/* --- bisections (issue 29; server/schedules/bisect.h drives them) ---
 *
 * A bisection is one row: its series, its state ("running", "done",
 * "not_reproduced", "failed", "cancelled") and its whole progress as one
 * JSON document, rewritten after every step, so a daemon that restarts
 * picks it up where the last one left it. */

/* A new bisection of SERIES in state "running" with DOC, made by BY at
 * NOW: *RET_ID. LL_ECONFLICT (nothing stored) when BY has MAX_RUNNING
 * bisections running already (0: no cap), counted in the transaction that
 * stores it. */
int store_bisection_create(struct store *store, const char *series, const cJSON *doc, const char *by,
			   int max_running, long long now, long long *ret_id);

/* {"id", "series", "state", "created_by", "created_at", "updated_at"} and
 * every member of its document. LL_ENOTFOUND. */
int store_bisection_get(struct store *store, long long id, cJSON **ret_bisection);

/* Sets bisection ID's STATE and DOC (NULL: kept) at NOW, only while its
 * state is EXPECT (NULL: any): LL_ECONFLICT when it is not (cancelled
 * meanwhile), LL_ENOTFOUND. */
int store_bisection_update(struct store *store, long long id, const char *expect, const char *state,
			   const cJSON *doc, long long now);

/* The ids of up to MAX bisections in state "running", oldest first, into
 * RET_IDS; their count into *RET_COUNT. */
int store_bisections_running(struct store *store, long long *ret_ids, int max, int *ret_count);

/* --- blobs --- */

/* Every blob a job references through its "program.files" manifest, as a
 * new cJSON array of 64-hex-digit strings (duplicates allowed). */
int store_blob_references(struct store *store, cJSON **ret_hashes);

#endif
