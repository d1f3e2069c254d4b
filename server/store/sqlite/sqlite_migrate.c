/*
 * sqlite_migrate.c - the SQLite store's schema versions: the migrations,
 * entry N taking PRAGMA user_version N to N+1 in one transaction, and the
 * refusal of a store a newer loadlabd wrote (sqlite_int.h). The
 * PostgreSQL driver's are pg_migrate.c.
 */
#include "sqlite_int.h"

#include "store/schema_steps.h"

#include "loadlab/err.h"

/* Schema migrations: entry N takes user_version N to N+1. */
static const char *const migrations[] = {
	"CREATE TABLE tokens ("
	"  id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL,"
	"  hash BLOB NOT NULL UNIQUE, agent_id INTEGER,"
	"  created_at INTEGER NOT NULL, revoked_at INTEGER);"
	"CREATE TABLE agents ("
	"  id INTEGER PRIMARY KEY, name TEXT NOT NULL, facts TEXT NOT NULL,"
	"  labels TEXT NOT NULL, quarantined INTEGER NOT NULL DEFAULT 0,"
	"  created_at INTEGER NOT NULL, last_seen INTEGER);"
	"CREATE TABLE jobs ("
	"  id INTEGER PRIMARY KEY, name TEXT NOT NULL, family TEXT NOT NULL,"
	"  spec TEXT NOT NULL, priority INTEGER NOT NULL, state TEXT NOT NULL,"
	"  submitted_by TEXT NOT NULL, created_at INTEGER NOT NULL,"
	"  updated_at INTEGER NOT NULL);"
	"CREATE INDEX jobs_by_state ON jobs(state, id);"
	"CREATE TABLE tasks ("
	"  id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES jobs(id),"
	"  cell TEXT NOT NULL, pinned_agent INTEGER, state TEXT NOT NULL,"
	"  priority INTEGER NOT NULL, attempt INTEGER NOT NULL DEFAULT 0,"
	"  lease_holder INTEGER, lease_expires INTEGER, not_before INTEGER NOT NULL DEFAULT 0,"
	"  phase TEXT, percent INTEGER, last_error TEXT,"
	"  cancel_notified INTEGER NOT NULL DEFAULT 1,"
	"  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
	"CREATE INDEX tasks_by_job ON tasks(job_id);"
	"CREATE INDEX tasks_ready ON tasks(state, priority DESC, id);"
	"CREATE INDEX tasks_by_holder ON tasks(lease_holder, state);"
	"CREATE TABLE task_attempts ("
	"  task_id INTEGER NOT NULL, attempt INTEGER NOT NULL, agent_id INTEGER NOT NULL,"
	"  leased_at INTEGER NOT NULL, ended_at INTEGER, outcome TEXT,"
	"  PRIMARY KEY (task_id, attempt));"
	"CREATE TABLE results ("
	"  id INTEGER PRIMARY KEY, task_id INTEGER NOT NULL, attempt INTEGER NOT NULL,"
	"  agent_id INTEGER NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL,"
	"  UNIQUE (task_id, attempt));",
	/* 2: per-result summaries cached for reports */
	"CREATE TABLE result_summaries ("
	"  result_id INTEGER PRIMARY KEY REFERENCES results(id),"
	"  version INTEGER NOT NULL, body TEXT NOT NULL);",
	/* 3: series, schedules and regression alerts (store_series.c). A job's
	 * series and revision live in its spec; the columns only expose them. */
	"ALTER TABLE jobs ADD COLUMN series TEXT"
	"  GENERATED ALWAYS AS (json_extract(spec, '$.series')) VIRTUAL;"
	"ALTER TABLE jobs ADD COLUMN revision TEXT"
	"  GENERATED ALWAYS AS (json_extract(spec, '$.revision')) VIRTUAL;"
	"CREATE INDEX jobs_by_series ON jobs(series, id);"
	"CREATE INDEX jobs_by_submitter ON jobs(submitted_by, state);"
	"CREATE TABLE series_settings ("
	"  name TEXT PRIMARY KEY, threshold_pct REAL NOT NULL, webhook_url TEXT,"
	"  updated_at INTEGER NOT NULL);"
	"CREATE TABLE schedules ("
	"  id INTEGER PRIMARY KEY, series TEXT NOT NULL, cron TEXT, interval_s INTEGER,"
	"  job TEXT NOT NULL, enabled INTEGER NOT NULL, created_by TEXT NOT NULL,"
	"  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
	"  next_due INTEGER NOT NULL, last_due INTEGER, last_job_id INTEGER,"
	"  skipped INTEGER NOT NULL DEFAULT 0, last_skip_at INTEGER, last_skip_reason TEXT,"
	"  deleted INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE schedule_runs ("
	"  id INTEGER PRIMARY KEY, schedule_id INTEGER NOT NULL, due INTEGER NOT NULL,"
	"  kind TEXT NOT NULL, outcome TEXT NOT NULL, job_id INTEGER, jobs_before INTEGER NOT NULL,"
	"  reason TEXT, created_at INTEGER NOT NULL);"
	"CREATE INDEX schedule_runs_by_schedule ON schedule_runs(schedule_id, id);"
	"CREATE TABLE series_checks ("
	"  job_id INTEGER PRIMARY KEY, series TEXT NOT NULL, baseline_id INTEGER,"
	"  verdict TEXT NOT NULL, checked_at INTEGER NOT NULL);"
	"CREATE TABLE alerts ("
	"  id INTEGER PRIMARY KEY, series TEXT NOT NULL, job_id INTEGER NOT NULL,"
	"  baseline_id INTEGER NOT NULL, threshold_pct REAL NOT NULL, worst_change_pct REAL,"
	"  rows TEXT NOT NULL, created_at INTEGER NOT NULL, acked_at INTEGER, acked_by TEXT,"
	"  webhook TEXT);",
	/* job_refresh_state() asks whether a job has a task in a state: one
	 * seek each, where counting read every task of the job per result. */
	"CREATE INDEX tasks_by_job_state ON tasks(job_id, state);",
	/* (issue 16, reports) What compare needs of a result, cached beside
	 * its summary: sorted samples and bootstrap ranks
	 * (report_compare_data.c). */
	"ALTER TABLE result_summaries ADD COLUMN compare BLOB;",
	/* (issue 12, calibration) Each agent's last calibration, as GET
	 * /api/v1/agents shows it (server/reports/calibration.c, sqlite_agents.c). */
	"ALTER TABLE agents ADD COLUMN last_calibration TEXT;",
	/* (issue 16, pass 7) The queue's indexes hold only the tasks their
	 * queries ask for, so a state change touches fewer of them: the lease
	 * scans (sqlite_tasks.c) seek the queued tasks pinned to one agent and
	 * those pinned to none, each in the queue's order (tasks_queued); a
	 * heartbeat, the lease sweep and the agents' list seek the leased tasks
	 * and the cancelled ones not yet told to their holder (tasks_held).
	 * tasks_ready and tasks_ready_by_pin (which held every task, done ones
	 * included, and changed with each state) and tasks_by_holder go: a
	 * lease changed four indexes, now three (out of tasks_queued, into
	 * tasks_held, tasks_by_job_state); a result two (out of tasks_held,
	 * tasks_by_job_state). task_attempts is keyed by (task_id, attempt)
	 * itself (WITHOUT ROWID): a lease's INSERT wrote a row and its key's
	 * index, a result's UPDATE sought the index, then the row. */
	"DROP INDEX tasks_ready;"
	"DROP INDEX IF EXISTS tasks_ready_by_pin;"
	"DROP INDEX tasks_by_holder;"
	"CREATE INDEX tasks_queued ON tasks(pinned_agent, priority DESC, id) WHERE state = 'queued';"
	"CREATE INDEX tasks_held ON tasks(state, lease_holder)"
	"  WHERE state = 'leased' OR cancel_notified = 0;"
	"CREATE TABLE task_attempts_keyed ("
	"  task_id INTEGER NOT NULL, attempt INTEGER NOT NULL, agent_id INTEGER NOT NULL,"
	"  leased_at INTEGER NOT NULL, ended_at INTEGER, outcome TEXT,"
	"  PRIMARY KEY (task_id, attempt)) WITHOUT ROWID;"
	"INSERT INTO task_attempts_keyed (task_id, attempt, agent_id, leased_at, ended_at, outcome)"
	"  SELECT task_id, attempt, agent_id, leased_at, ended_at, outcome FROM task_attempts;"
	"DROP TABLE task_attempts;"
	"ALTER TABLE task_attempts_keyed RENAME TO task_attempts;",
	/* (issue 23, intervals across jobs) Every calibration an agent's
	 * results gave, within-job, for the between-job spread of the next
	 * (server/calibration.c, store_history.c). */
	"CREATE TABLE calibrations ("
	"  result_id INTEGER PRIMARY KEY, agent_id INTEGER NOT NULL, body TEXT NOT NULL);"
	"CREATE INDEX calibrations_by_agent ON calibrations(agent_id, result_id);",
	/* (issue 26, owners and webhooks) A series' owner beside its settings
	 * (store_series.c); an alert's webhook delivery as a queue that
	 * survives a restart: due time while pending (NULL once delivered or
	 * given up), attempts made (store_series.c, webhook_delivery.c); */
	"ALTER TABLE series_settings ADD COLUMN owner TEXT;"
	"ALTER TABLE alerts ADD COLUMN webhook_due INTEGER;"
	"ALTER TABLE alerts ADD COLUMN webhook_attempts INTEGER NOT NULL DEFAULT 0;"
	"CREATE INDEX alerts_webhook_due ON alerts(webhook_due) WHERE webhook_due IS NOT NULL;"
	/* teams: a user token's team, a schedule's owner when an admin names
	 * one (else its created_by) */
	"ALTER TABLE tokens ADD COLUMN team TEXT;"
	"ALTER TABLE schedules ADD COLUMN owner TEXT;",
	/* (issue 25, build tasks) A task is a measuring task or a build
	 * task (whose cell is its target, queue_build.h); a measuring task of
	 * a shared build names its build and is leased once that is done. */
	"ALTER TABLE tasks ADD COLUMN kind TEXT NOT NULL DEFAULT 'measure';"
	"ALTER TABLE tasks ADD COLUMN build_task INTEGER;"
	"CREATE INDEX tasks_by_build ON tasks(build_task) WHERE build_task IS NOT NULL;",
	/* (issue 30, retention) A series' retention of raw samples (0: keep
	 * them all) and when a result's raw samples were dropped
	 * (sqlite_retention.c). */
	"ALTER TABLE series_settings ADD COLUMN retain_days INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE series_settings ADD COLUMN retain_points INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE results ADD COLUMN pruned_at INTEGER;",
	/* (issue 30, agents that update themselves) The version and the
	 * SHA-256 of the binary an agent last said it runs (its lease
	 * request, sqlite_agents.c); NULL until it says. */
	"ALTER TABLE agents ADD COLUMN agent_version TEXT;"
	"ALTER TABLE agents ADD COLUMN agent_sha256 TEXT;",
	/* (issue 29, bisection, version 13) A bisection's state and its progress as one
	 * document, rewritten after each step (store_bisect.c,
	 * schedules/bisect.c). */
	"CREATE TABLE bisections ("
	"  id INTEGER PRIMARY KEY, series TEXT NOT NULL, state TEXT NOT NULL, doc TEXT NOT NULL,"
	"  created_by TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
	"CREATE INDEX bisections_running ON bisections(id) WHERE state = 'running';",
	/* (issue 37, signed agent builds, version 14) What an agent last said
	 * of its updates, {"state", "reason", "sha256"} (its lease request,
	 * sqlite_agents.c); NULL until it says. */
	"ALTER TABLE agents ADD COLUMN agent_update TEXT;",
	/* (issue 37, builders the admin names, version 15) Whether an admin marked the
	 * agent a builder, the only agents that lease build tasks
	 * (queue_build.h); none is, after this migration, until an admin says. */
	"ALTER TABLE agents ADD COLUMN builder INTEGER NOT NULL DEFAULT 0;",
};

int sqlite_refuse_newer(sqlite3 *db)
{
	const int latest = (int)(sizeof(migrations) / sizeof(migrations[0]));
	long long version = 0;

	if (sq_int(db, &version, 0, "PRAGMA user_version", "") < 0)
		return LL_ESTORE;
	if (version > latest)
		return err_set(
			LL_ESTORE,
			"The store has schema version %lld, written by a newer loadlabd; this loadlabd "
			"(version %s) knows schema versions up to %d. Run the newer loadlabd, or restore "
			"a backup made before the upgrade (docs/operations.md).",
			version, LOADLAB_VERSION, latest);
	return 0;
}

static int exec(void *conn, const char *sql)
{
	return sq_exec(conn, sql);
}

static const struct schema_steps sqlite_steps = {exec, "BEGIN IMMEDIATE", "PRAGMA user_version=%d"};

int sqlite_migrate(sqlite3 *db)
{
	long long version;
	const int latest = (int)(sizeof(migrations) / sizeof(migrations[0]));

	if (sq_int(db, &version, 0, "PRAGMA user_version", "") < 0)
		return LL_ESTORE;
	return schema_steps_apply(&sqlite_steps, db, migrations, (int)version, latest);
}
