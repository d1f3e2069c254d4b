/*
 * sqlite_writer.c - the SQLite backend (store_backend.h): opening,
 * migrations, the writer and syncer threads, and stats. The resources are
 * the other sqlite_*.c files (sqlite_int.h).
 *
 * Two connections: one writer, used only by the writer thread, and one
 * reader guarded by a mutex. WAL lets the reader see the last commit while
 * the writer works. Every change is a store_write() op: the caller queues
 * it and sleeps; the writer takes every queued op, runs each inside its own
 * SAVEPOINT of one transaction, takes the ops queued meanwhile into the same
 * transaction until the queue is empty or the batch full, commits once (one
 * fsync for the batch: group commit), then wakes the batch's callers, each
 * on its own condition
 * (not every waiter on one). While the syncer is still making an earlier
 * batch durable, the open transaction keeps taking ops instead of
 * committing (their answers would wait for the next fsync either way), so
 * there is about one commit, one WAL write of the hot pages, per fsync.
 * Statements, BEGIN, SAVEPOINT and COMMIT
 * included, stay prepared (db_cached()). An op that fails is rolled back
 * to its savepoint without disturbing the others in its batch.
 */
#include "sqlite_int.h"
#include "worker.h"

#include "loadlab/err.h"
#include "loadlab/log.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	/* 3: series, schedules and regression alerts (sqlite_series.c). A job's
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
	 * (sqlite_series.c); an alert's webhook delivery as a queue that
	 * survives a restart: due time while pending (NULL once delivered or
	 * given up), attempts made (sqlite_series.c, webhook_delivery.c); */
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
	 * document, rewritten after each step (sqlite_bisect.c,
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

/* ------------------------------------------------------ the writer thread */

/* Runs each op of the list BATCH inside its own savepoint of the open
 * transaction (RC: whether it opened), recording each op's result. */
static void run_ops(struct store *s, struct store_op *batch, int rc)
{
	for (struct store_op *op = batch; op; op = op->next) {
		if (rc < 0) {
			op->rc = rc; /* BEGIN failed: its message is this thread's */
			snprintf(op->message, sizeof(op->message), "%s", err_message(rc));
			continue;
		}
		err_clear();
		if ((op->rc = db_exec_cached(s->writer, "SAVEPOINT op")) < 0) {
			snprintf(op->message, sizeof(op->message), "%s", err_message(op->rc));
			continue;
		}
		op->rc = op->fn(s, op->arg);
		/* An op that met a full disk in a statement of its own. */
		if (op->rc == LL_ESTORE && db_disk_full(s->writer))
			op->rc = err_set(LL_ENOSPACE, STORE_FULL_MESSAGE);
		if (op->rc < 0) {
			snprintf(op->message, sizeof(op->message), "%s", err_message(op->rc));
			db_exec_cached(s->writer, "ROLLBACK TO op");
			store_cache_agent_touches_forget(&s->cache); /* the op's touch may be undone */
		}
		db_exec_cached(s->writer, "RELEASE op");
	}
}

/* Takes up to ROOM ops from the head of the queue (the queue lock held),
 * stopping before one that runs alone; returns the first, *RET_LAST the
 * last, *RET_COUNT how many. */
static struct store_op *take_ops(struct store *s, int room, struct store_op **ret_last, int *ret_count)
{
	struct store_op *first = s->head, *op = first;
	int n = 1;

	for (; op->next && n < room && !op->next->alone; op = op->next)
		n++;
	s->head = op->next;
	if (!s->head)
		s->tail = NULL;
	op->next = NULL;
	*ret_last = op;
	*ret_count = n;
	return first;
}

/* Marks every op of BATCH done (those that succeeded become CODE with
 * MESSAGE when MESSAGE is not NULL) and wakes its callers: blocked
 * ones under the queue lock, those of store_call_submit() after it, in
 * the batch's order. */
static void finish_ops(struct store *s, struct store_op *batch, int code, const char *message)
{
	struct store_op *told = NULL, **told_tail = &told, *op;

	if (message)
		for (op = batch; op; op = op->next)
			if (op->rc >= 0) {
				op->rc = code;
				snprintf(op->message, sizeof(op->message), "%s", message);
			}
	pthread_mutex_lock(&s->queue_lock);
	for (op = batch; op;) {
		struct store_op *next = op->next; /* OP is gone once woken */
		s->committed_ops++;
		op->done = true;
		if (op->notify) {
			op->next = NULL;
			*told_tail = op;
			told_tail = &op->next;
		} else {
			pthread_cond_signal(&op->done_cond);
		}
		op = next;
	}
	pthread_mutex_unlock(&s->queue_lock);
	for (op = told; op;) {
		struct store_op *next = op->next; /* OP may be freed by notify */
		op->notify(op->notify_context);
		op = next;
	}
}

/* Appends the ops FIRST..LAST (linked by next) to the list HEAD..TAIL. */
static void ops_append(struct store_op **head, struct store_op **tail, struct store_op *first,
		       struct store_op *last)
{
	if (*tail)
		(*tail)->next = first;
	else
		*head = first;
	*tail = last;
}

/* The writer: one transaction per round. Ops that arrive while it runs
 * the round's ops join the same transaction until the queue is empty or
 * STORE_BATCH_MAX ops are in it, then it commits (writing the WAL, no
 * fsync) and hands the batch to the syncer; the next round starts while
 * the syncer's fsync runs. */
static void *writer_main(void *arg)
{
	struct store *s = arg;

	pthread_mutex_lock(&s->queue_lock);
	for (;;) {
		struct store_op *batch = NULL, *last = NULL;
		int n = 0, rc;

		while (!s->head && !s->stopping)
			pthread_cond_wait(&s->queue_cond, &s->queue_lock);
		if (!s->head)
			break;
		if (s->head->alone) {
			/* Outside any transaction (VACUUM): the ops behind it wait. */
			batch = take_ops(s, 1, &last, &n);
			pthread_mutex_unlock(&s->queue_lock);
			err_clear();
			if ((batch->rc = batch->fn(s, batch->arg)) < 0)
				snprintf(batch->message, sizeof(batch->message), "%s",
					 err_message(batch->rc));
			pthread_mutex_lock(&s->queue_lock);
			ops_append(&s->sync_head, &s->sync_tail, batch, last);
			pthread_cond_signal(&s->sync_cond);
			continue;
		}
		pthread_mutex_unlock(&s->queue_lock);

		rc = db_exec_cached(s->writer, "BEGIN IMMEDIATE");
		pthread_mutex_lock(&s->queue_lock);
		for (;;) {
			struct store_op *chunk_last, *chunk;
			int taken;
			if (!s->head && n < STORE_BATCH_MAX && rc == 0 && !s->stopping &&
			    (s->sync_head || s->syncing)) {
				/* A commit now would wait for the syncer's next
				 * fsync anyway: the transaction takes what comes
				 * until the syncer is free, one commit per fsync. */
				pthread_cond_wait(&s->queue_cond, &s->queue_lock);
				continue;
			}
			if (!s->head || n >= STORE_BATCH_MAX || s->head->alone)
				break;
			chunk = take_ops(s, STORE_BATCH_MAX - n, &chunk_last, &taken);
			pthread_mutex_unlock(&s->queue_lock);
			run_ops(s, chunk, rc);
			if (last)
				last->next = chunk;
			else
				batch = chunk;
			last = chunk_last;
			n += taken;
			pthread_mutex_lock(&s->queue_lock);
		}
		pthread_mutex_unlock(&s->queue_lock);
		if (rc == 0 && (rc = db_exec_cached(s->writer, "COMMIT")) < 0) {
			/* A full disk (SQLITE_FULL) refuses the batch's writes
			 * as storage_full (REST 507): nothing of them stays. */
			bool full = rc == LL_ENOSPACE;
			db_exec_cached(s->writer, "ROLLBACK");
			store_cache_lease_jobs_forget(&s->cache);
			store_cache_agent_touches_forget(&s->cache);
			finish_ops(s, batch, full ? LL_ENOSPACE : LL_ESTORE,
				   full ? STORE_FULL_MESSAGE : "The store could not commit.");
			pthread_mutex_lock(&s->queue_lock);
			continue;
		}

		pthread_mutex_lock(&s->queue_lock);
		s->commits++;
		ops_append(&s->sync_head, &s->sync_tail, batch, last);
		pthread_cond_signal(&s->sync_cond);
	}
	pthread_mutex_unlock(&s->queue_lock);
	return NULL;
}

/* The syncer: takes every committed batch handed over, makes them durable
 * with one fsync of the WAL (what synchronous=FULL does in each COMMIT),
 * and only then wakes their callers. Ends once the writer has ended and
 * nothing is left to sync. */
static void *syncer_main(void *arg)
{
	struct store *s = arg;

	pthread_mutex_lock(&s->queue_lock);
	for (;;) {
		struct store_op *batch;
		bool synced;

		while (!s->sync_head && !s->sync_stopping)
			pthread_cond_wait(&s->sync_cond, &s->queue_lock);
		if (!s->sync_head)
			break;
		batch = s->sync_head;
		s->sync_head = s->sync_tail = NULL;
		s->syncing = true;
		pthread_mutex_unlock(&s->queue_lock);

		synced = s->wal->pMethods->xSync(s->wal, SQLITE_SYNC_NORMAL) == SQLITE_OK;
		if (!synced)
			log_event(LOG_ERROR, "store_sync_failed", NULL);
		pthread_mutex_lock(&s->queue_lock);
		s->syncs++; /* counted before anyone is told */
		pthread_mutex_unlock(&s->queue_lock);
		finish_ops(s, batch, LL_ESTORE,
			   synced ? NULL : "The store could not make the write durable.");
		pthread_mutex_lock(&s->queue_lock);
		s->syncing = false;
		pthread_cond_signal(&s->queue_cond); /* a writer waiting to commit */
	}
	pthread_mutex_unlock(&s->queue_lock);
	return NULL;
}

/* Appends OP to the queue and wakes the writer; LL_ESTORE when closing. */
static int queue_op(struct store *s, struct store_op *op)
{
	if (s->stopping)
		return err_set(LL_ESTORE, "The store is closing.");
	ops_append(&s->head, &s->tail, op, op);
	pthread_cond_signal(&s->queue_cond);
	return 0;
}

/* OP's result, its message set on this thread on failure. */
static int op_result(const struct store_op *op)
{
	if (op->rc < 0)
		err_set(op->rc, "%s", op->message);
	return op->rc;
}

/* Queues OP (OP->notify NULL) and waits until it is committed. */
static int run_and_wait(struct store *s, struct store_op *op)
{
	int rc;

	pthread_cond_init(&op->done_cond, NULL);
	pthread_mutex_lock(&s->queue_lock);
	rc = queue_op(s, op);
	while (rc == 0 && !op->done)
		pthread_cond_wait(&op->done_cond, &s->queue_lock);
	pthread_mutex_unlock(&s->queue_lock);
	pthread_cond_destroy(&op->done_cond);
	return rc < 0 ? rc : op_result(op);
}

int store_write(struct store *s, int (*fn)(struct store *, void *), void *arg)
{
	struct store_op op = {.fn = fn, .arg = arg};

	return run_and_wait(s, &op);
}

int store_write_alone(struct store *s, int (*fn)(struct store *, void *), void *arg)
{
	struct store_op op = {.fn = fn, .arg = arg, .alone = true};

	return run_and_wait(s, &op);
}

int store_call_submit(struct store *s, struct store_call *call, int (*fn)(struct store *, void *), void *arg,
		      cJSON **out, store_done_fn done, void *context, struct store_call **ret_call)
{
	int rc;

	call->op.fn = fn;
	call->op.arg = arg;
	call->out = out;

	call->base = s->base;
	call->op.notify = done;
	call->op.notify_context = context;
	if (!done) {
		/* The op's own result is store_call_end()'s. */
		rc = run_and_wait(s, &call->op);
		rc = call->op.done ? 0 : rc;
	} else {
		pthread_mutex_lock(&s->queue_lock);
		rc = queue_op(s, &call->op);
		pthread_mutex_unlock(&s->queue_lock);
	}
	if (rc < 0) {
		sqlite_call_free(call);
		return rc;
	}
	*ret_call = call;
	return 0;
}

int store_call_end(struct store_call *call, cJSON **ret)
{
	int rc = op_result(&call->op);

	*ret = rc < 0 ? NULL : *call->out;
	if (rc == 0)
		*call->out = NULL;
	sqlite_call_free(call);
	return rc;
}

void sqlite_call_free(struct store_call *call)
{
	if (!call)
		return;
	cJSON_Delete(*call->out);
	free(call);
}

int store_write_answer(struct store *s, int (*fn)(struct store *, void *), void *arg, cJSON **out,
		       cJSON **ret)
{
	int rc = store_write(s, fn, arg);

	if (rc < 0) {
		cJSON_Delete(*out);
		*out = NULL;
		return rc;
	}
	*ret = *out;
	return 0;
}

/* ------------------------------------------------------------ open, close */

/* LL_ESTORE, naming both versions, when the store at DB was written by a
 * newer loadlabd (a schema version past the last migration): checked
 * before anything is written to it, so that the newer loadlabd finds the
 * file as it left it. */
static int refuse_newer(sqlite3 *db)
{
	const int latest = (int)(sizeof(migrations) / sizeof(migrations[0]));
	long long version = 0;

	if (db_int(db, &version, 0, "PRAGMA user_version", "") < 0)
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

static int open_connection(const char *path, sqlite3 **ret)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		int rc = err_set(LL_ESTORE, "Cannot open the store at %s: %s.", path,
				 db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return rc;
	}
	sqlite3_busy_timeout(db, 10000);
	if (refuse_newer(db) < 0) {
		sqlite3_close(db);
		return LL_ESTORE; /* its message is set */
	}
	/* A new store is made compactable (sqlite_auto_vacuum.c) before its
	 * first page is written, which journal_mode=WAL does; on an existing
	 * one this changes nothing. */
	if (db_exec(db, "PRAGMA auto_vacuum=INCREMENTAL") < 0 || db_exec(db, "PRAGMA journal_mode=WAL") < 0 ||
	    db_exec(db, "PRAGMA synchronous=FULL") < 0 || db_exec(db, "PRAGMA foreign_keys=ON") < 0) {
		sqlite3_close(db);
		return err_set(LL_ESTORE, "Cannot configure the store at %s.", path);
	}
	*ret = db;
	return 0;
}

/* Hands the fsync of the writer's commits to the syncer: the writer
 * connection commits with synchronous=NORMAL (its WAL is written, not
 * synced; checkpoints still sync the WAL before and the database after,
 * and the WAL's header when it is reused) and the syncer fsyncs the WAL
 * file (SQLite's own handle of it) before any caller of the batch is
 * answered: the same bytes on disk as synchronous=FULL, with the next
 * batch running during the fsync. The first sync, here, is also the one
 * that syncs the folder of a new WAL (SQLite does that once). */
static int open_wal_sync(struct store *s)
{
	sqlite3_file *wal = NULL;

	if (db_exec(s->writer, "PRAGMA synchronous=NORMAL") < 0 ||
	    db_exec(s->writer, "PRAGMA wal_autocheckpoint=" STORE_CHECKPOINT_PAGES_TEXT) < 0 ||
	    sqlite3_file_control(s->writer, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK ||
	    !wal || !wal->pMethods || wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL) != SQLITE_OK)
		return err_set(LL_ESTORE, "Cannot sync the store's write-ahead log.");
	s->wal = wal;
	return 0;
}

static int migrate(sqlite3 *db)
{
	long long version;
	const int latest = (int)(sizeof(migrations) / sizeof(migrations[0]));
	char sql[64];

	if (db_int(db, &version, 0, "PRAGMA user_version", "") < 0)
		return LL_ESTORE;
	for (int v = (int)version; v < latest; v++) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", v + 1);
		if (db_exec(db, "BEGIN IMMEDIATE") < 0)
			return LL_ESTORE;
		if (db_exec(db, migrations[v]) < 0 || db_exec(db, sql) < 0) {
			db_exec(db, "ROLLBACK");
			return LL_ESTORE;
		}
		if (db_exec(db, "COMMIT") < 0)
			return LL_ESTORE;
		log_event(LOG_INFO, "store_migrated", "schema_version", sql + 20, NULL);
	}
	return 0;
}

/* The store and its -wal/-shm journal files, 0600 even when they were
 * made by an older loadlabd (SQLite gives the journals the store's mode). */
static void protect_files(const char *path)
{
	static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
	char file[PATH_MAX + 16];

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (snprintf(file, sizeof(file), "%s%s", path, suffixes[i]) < (int)sizeof(file))
			chmod(file, 0600);
}

int sqlite_open(const char *path, const struct store_options *options, struct store **ret_store)
{
	struct store *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return LL_ENOMEM;
	s->options = *options;
	pthread_mutex_init(&s->reader_lock, NULL);
	pthread_mutex_init(&s->queue_lock, NULL);
	pthread_cond_init(&s->queue_cond, NULL);
	pthread_mutex_init(&s->token_cache_lock, NULL);
	pthread_cond_init(&s->sync_cond, NULL);
	if ((rc = open_connection(path, &s->writer)) < 0 || (rc = migrate(s->writer)) < 0 ||
	    (rc = compaction_prepare(s->writer)) < 0 || (rc = open_connection(path, &s->reader)) < 0 ||
	    (rc = open_wal_sync(s)) < 0)
		goto fail;
	db_cache_attach(s->writer);
	db_cache_attach(s->reader);
	if (pthread_create(&s->syncer_thread, NULL, syncer_main, s) != 0) {
		rc = err_set(LL_ENOMEM, "Cannot start the store's syncer thread.");
		goto fail;
	}
	if (pthread_create(&s->writer_thread, NULL, writer_main, s) != 0) {
		worker_stop(&s->queue_lock, &s->sync_cond, &s->sync_stopping, s->syncer_thread);
		rc = err_set(LL_ENOMEM, "Cannot start the store's writer thread.");
		goto fail;
	}
	protect_files(path);
	*ret_store = s;
	return 0;
fail:
	db_cache_detach(s->reader);
	db_cache_detach(s->writer);
	sqlite3_close(s->reader);
	sqlite3_close(s->writer);
	free(s);
	return rc;
}

void sqlite_close(struct store *s)
{
	if (!s)
		return;
	worker_stop(&s->queue_lock, &s->queue_cond, &s->stopping, s->writer_thread);
	worker_stop(&s->queue_lock, &s->sync_cond, &s->sync_stopping, s->syncer_thread);
	store_cache_lease_jobs_forget(&s->cache);
	db_cache_detach(s->reader);
	db_cache_detach(s->writer);
	sqlite3_close(s->reader);
	sqlite3_close(s->writer);
	pthread_mutex_destroy(&s->reader_lock);
	pthread_mutex_destroy(&s->queue_lock);
	pthread_cond_destroy(&s->queue_cond);
	pthread_cond_destroy(&s->sync_cond);
	pthread_mutex_destroy(&s->token_cache_lock);
	free(s);
}

int sqlite_check(struct store *s)
{
	long long one = 0;
	int rc;

	pthread_mutex_lock(&s->reader_lock);
	rc = db_int(s->reader, &one, 0, "SELECT 1", "");
	pthread_mutex_unlock(&s->reader_lock);
	return rc < 0 || one != 1 ? LL_ESTORE : 0;
}

int sqlite_integrity_check(struct store *s)
{
	sqlite3_stmt *stmt;
	int rc = LL_ESTORE;

	pthread_mutex_lock(&s->reader_lock);
	stmt = db_prepare(s->reader, "PRAGMA integrity_check");
	if (stmt && sqlite3_step(stmt) == SQLITE_ROW &&
	    strcmp((const char *)sqlite3_column_text(stmt, 0), "ok") == 0)
		rc = 0;
	sqlite3_finalize(stmt);
	pthread_mutex_unlock(&s->reader_lock);
	return rc;
}

/* ----------------------------------------------------------------- metrics */

/* Where count_states() puts a state's count (column 1) and, when SECOND is
 * not NULL, column 2. */
struct state_count {
	const char *state;
	long long *count, *second;
};

/* Steps STMT, whose rows are (state, count[, second]), and stores each
 * state's numbers where COUNTS (ended by a NULL state) says; states it does
 * not name are passed over. Finalizes STMT; LL_ESTORE when STMT is NULL. */
static int count_states(sqlite3_stmt *stmt, const struct state_count *counts)
{
	if (!stmt)
		return LL_ESTORE;
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *state = (const char *)sqlite3_column_text(stmt, 0);
		for (const struct state_count *c = counts; c->state; c++)
			if (strcmp(state, c->state) == 0) {
				*c->count = sqlite3_column_int64(stmt, 1);
				if (c->second)
					*c->second = sqlite3_column_int64(stmt, 2);
				break;
			}
	}
	sqlite3_finalize(stmt);
	return 0;
}

int sqlite_stats(struct store *s, long long now, struct store_stats *ret)
{
	struct store_stats st = {0};
	sqlite3_stmt *stmt;
	int rc = 0;

	pthread_mutex_lock(&s->reader_lock);
	db_exec(s->reader, "BEGIN");
	stmt = db_prepare(s->reader,
			  "SELECT state, count(*), sum(not_before <= ?) FROM tasks GROUP BY state");
	if (stmt)
		sqlite3_bind_int64(stmt, 1, now);
	if (count_states(stmt, (const struct state_count[]){{"queued", &st.tasks_queued, &st.tasks_ready},
							    {"leased", &st.tasks_leased, NULL},
							    {"done", &st.tasks_done, NULL},
							    {"dead", &st.tasks_dead, NULL},
							    {"cancelled", &st.tasks_cancelled, NULL},
							    {NULL, NULL, NULL}}) < 0)
		rc = LL_ESTORE;
	if (count_states(db_prepare(s->reader, "SELECT state, count(*) FROM jobs GROUP BY state"),
			 (const struct state_count[]){{"queued", &st.jobs_queued, NULL},
						      {"running", &st.jobs_running, NULL},
						      {"done", &st.jobs_done, NULL},
						      {"failed", &st.jobs_failed, NULL},
						      {"cancelled", &st.jobs_cancelled, NULL},
						      {NULL, NULL, NULL}}) < 0)
		rc = LL_ESTORE;
	if (rc == 0)
		rc = db_int(s->reader, &st.agents_quarantined, 0,
			    "SELECT count(*) FROM agents WHERE quarantined != 0", "");
	if (rc == 0)
		rc = db_int(s->reader, &st.agents_online, 0,
			    "SELECT count(*) FROM agents WHERE quarantined = 0 AND last_seen >= ?", "i",
			    now - s->options.offline_after_ms);
	if (rc == 0)
		rc = db_int(s->reader, &st.agents_offline, 0,
			    "SELECT count(*) FROM agents WHERE quarantined = 0 AND (last_seen IS NULL OR "
			    "last_seen < ?)",
			    "i", now - s->options.offline_after_ms);
	if (rc == 0)
		rc = db_int(s->reader, &st.results, 0, "SELECT count(*) FROM results", "");
	if (rc == 0) {
		long long pages = 0, free_pages = 0, page_size = 0;
		if ((rc = db_int(s->reader, &pages, 0, "PRAGMA page_count", "")) == 0 &&
		    (rc = db_int(s->reader, &free_pages, 0, "PRAGMA freelist_count", "")) == 0 &&
		    (rc = db_int(s->reader, &page_size, 0, "PRAGMA page_size", "")) == 0) {
			st.store_bytes = pages * page_size;
			st.store_free_bytes = free_pages * page_size;
		}
	}
	if (rc == 0)
		rc = db_int(s->reader, &st.webhooks_pending, 0,
			    "SELECT count(*) FROM alerts WHERE webhook_due IS NOT NULL", "");
	db_exec(s->reader, "COMMIT");
	pthread_mutex_unlock(&s->reader_lock);
	pthread_mutex_lock(&s->queue_lock);
	st.commits = s->commits;
	st.committed_ops = s->committed_ops;
	st.syncs = s->syncs;
	pthread_mutex_unlock(&s->queue_lock);
	if (rc < 0)
		return rc;
	*ret = st;
	return 0;
}
