/*
 * store_tasks.c - an agent's reports on the task it leased (store.h
 * "tasks", store_async.h): progress, results, failures, and the leases
 * that expired, over the statement layer (db.h) for every driver. What
 * happens to a task is decided by queue.h; this file reads and writes the
 * rows. The lease itself is store_lease.c's.
 */
#include "db.h"
#include "store_agents.h"
#include "store_backend.h"
#include "store_cache.h"
#include "store_jobs.h"

#include "store/queue.h"

#include "loadlab/err.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct task_row {
	long long job_id, attempt, holder;
	char state[16];
};

static int read_task_row(void *context, struct db_stmt *stmt)
{
	struct task_row *row = context;

	row->job_id = db_column_int64(stmt, 0);
	row->attempt = db_column_int64(stmt, 1);
	row->holder = db_column_null(stmt, 2) ? 0 : db_column_int64(stmt, 2);
	snprintf(row->state, sizeof(row->state), "%s", db_column_text(stmt, 3));
	return 0;
}

/* Checks that AGENT may report on (TASK, ATTEMPT): the task exists
 * (LL_ENOTFOUND), the agent held some attempt of it (LL_EFORBIDDEN), this
 * is the current, leased attempt held by the agent (else
 * STORE_STALE_ATTEMPT, or STORE_TASK_CANCELLED for a cancelled job). The
 * task's row stays locked until the write ends (db_row_locks()). */
static int check_holder(struct store *s, long long agent_id, long long task_id, long long attempt,
			struct task_row *ret)
{
	struct task_row row = {0};
	long long held;
	int rc;

	if ((rc = db_row_by_id(s,
			       DB_SQL_FOR_UPDATE(s, "SELECT job_id, attempt, lease_holder, state FROM tasks"
						    " WHERE id = ?"),
			       task_id, "task", read_task_row, &row)) < 0)
		return rc;
	/* The lease that made the agent the holder inserted its attempt in the
	 * same op: only another holder needs the attempts looked up. */
	held = row.holder == agent_id;
	if (!held &&
	    (rc = db_int(s, &held, 0, "SELECT count(*) FROM task_attempts WHERE task_id = ? AND agent_id = ?",
			 "ii", task_id, agent_id)) < 0)
		return rc;
	if (!held)
		return err_set(LL_EFORBIDDEN, "Task %lld was never leased to this agent.", task_id);
	if (strcmp(row.state, "cancelled") == 0 && row.attempt == attempt && row.holder == agent_id)
		return err_set(STORE_TASK_CANCELLED, "Task %lld was cancelled with its job.", task_id);
	if (strcmp(row.state, "leased") != 0 || row.attempt != attempt || row.holder != agent_id)
		return err_set(STORE_STALE_ATTEMPT,
			       "Attempt %lld of task %lld is not the current lease (the task is %s, "
			       "attempt %lld).",
			       attempt, task_id, row.state, row.attempt);
	*ret = row;
	return 0;
}

/* An agent's report on attempt ATTEMPT of task TASK_ID at NOW: the
 * argument of the progress, result and failure ops, each of which reads
 * its own fields and builds its answer in OUT. */
struct report_op {
	long long agent_id, task_id, attempt, now;
	const char *phase;  /* progress */
	int percent;        /* progress */
	const char *body;   /* result */
	size_t body_len;    /* result */
	bool replayed;      /* result: set when it was stored before */
	bool calibration;   /* result: its job is a calibration job */
	const char *reason; /* failure */
	bool retryable;     /* failure */
	cJSON *out;
};

static int op_task_progress(struct store *s, void *arg)
{
	struct report_op *a = arg;
	struct task_row row;
	long long expires = a->now + store_options_of(s)->lease_ms;
	int rc;

	if ((rc = store_agent_touch(s, a->agent_id, a->now)) < 0 ||
	    (rc = check_holder(s, a->agent_id, a->task_id, a->attempt, &row)) < 0 ||
	    (rc = db_run(s,
			 "UPDATE tasks SET phase = ?, percent = ?, lease_expires = ?, updated_at = ?"
			 " WHERE id = ?",
			 "tiiii", a->phase, (long long)a->percent, expires, a->now, a->task_id)) < 0)
		return rc;
	a->out = task_attempt_json(a->task_id, a->attempt, "leased");
	cJSON_AddBoolToObject(a->out, "cancelled", false);
	db_add_time_value(a->out, "lease_expires_at", expires);
	return 0;
}

int store_task_progress(struct store *s, long long agent_id, long long task_id, long long attempt,
			const char *phase, int percent, long long now, cJSON **ret_body)
{
	struct report_op a = {agent_id, task_id, attempt, now, .phase = phase, .percent = percent};

	return db_write_answer(s, op_task_progress, &a, &a.out, ret_body);
}

static cJSON *result_answer(long long task_id, long long attempt, long long result_id)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "task_id", (double)task_id);
	cJSON_AddNumberToObject(o, "attempt", (double)attempt);
	cJSON_AddNumberToObject(o, "result_id", (double)result_id);
	cJSON_AddStringToObject(o, "state", "done");
	return o;
}

/* Whether job JOB_ID is a calibration job (the condition
 * store_task_calibration_spec() reads): from the lease's cached job when
 * the cache holds it, which it nearly always does for a task just leased;
 * else from the row. */
static int job_is_calibration(struct store *s, long long job_id, bool *ret)
{
	long long found = 0;
	bool cached;
	int rc = 0;

	if (store_cache_lease_job_calibration(((struct store_base *)s)->cache, job_id, &cached))
		found = cached;
	else
		rc = db_int(
			s, &found, 0,
			db_sql(s,
			       "SELECT json_extract(spec, '$.calibration') IS NOT NULL FROM jobs WHERE id = "
			       "?",
			       "SELECT (spec::jsonb ->> 'calibration') IS NOT NULL FROM jobs WHERE id = ?"),
			"i", job_id);
	*ret = found != 0;
	return rc;
}

/* The result stored for (TASK_ID, ATTEMPT) before, if any: its id in
 * *RET_ID (0: none) and its agent in *RET_AGENT. */
static int result_stored(struct store *s, long long task_id, long long attempt, long long *ret_id,
			 long long *ret_agent)
{
	struct db_stmt st;
	int rc = db_prepare(s, "SELECT id, agent_id FROM results WHERE task_id = ? AND attempt = ?", &st);

	if (rc < 0)
		return rc;
	db_bind(&st, "ii", task_id, attempt);
	rc = db_step(&st);
	if (rc == DB_ROW) {
		*ret_id = db_column_int64(&st, 0);
		*ret_agent = db_column_int64(&st, 1);
	}
	db_finish(&st);
	return rc < 0 ? rc : 0;
}

/* Inserts the result of A's attempt: its id in *RET_ID. */
static int result_insert(struct store *s, const struct report_op *a, long long *ret_id)
{
	struct db_stmt st;
	int rc = db_prepare(s,
			    "INSERT INTO results (task_id, attempt, agent_id, body, created_at)"
			    " VALUES (?, ?, ?, ?, ?) RETURNING id",
			    &st);

	if (rc < 0)
		return rc;
	db_bind(&st, "iii", a->task_id, a->attempt, a->agent_id);
	db_bind_text_len(&st, 4, a->body, a->body_len);
	db_bind_int64(&st, 5, a->now);
	rc = db_step(&st);
	if (rc == DB_ROW)
		*ret_id = db_column_int64(&st, 0);
	else if (rc == DB_DONE)
		rc = err_set(LL_ESTORE, "The store failed.");
	db_finish(&st);
	return rc < 0 ? rc : 0;
}

static int op_task_result(struct store *s, void *arg)
{
	struct report_op *a = arg;
	struct task_row row;
	long long existing = 0, existing_agent = 0, result_id = 0, waiting = 0;
	int rc;

	a->replayed = a->calibration = false; /* the op may run again after a rollback */
	/* A replay of a stored (task, attempt) gets the same answer. */
	if ((rc = result_stored(s, a->task_id, a->attempt, &existing, &existing_agent)) < 0)
		return rc;
	if (existing) {
		if (existing_agent != a->agent_id)
			return err_set(LL_EFORBIDDEN, "Task %lld was never leased to this agent.",
				       a->task_id);
		a->out = result_answer(a->task_id, a->attempt, existing);
		a->replayed = true;
		return store_agent_touch(s, a->agent_id, a->now);
	}
	if ((rc = check_holder(s, a->agent_id, a->task_id, a->attempt, &row)) < 0 ||
	    (rc = result_insert(s, a, &result_id)) < 0 ||
	    (rc = db_run(s,
			 "UPDATE tasks SET state = 'done', percent = 100, lease_expires = NULL,"
			 " updated_at = ? WHERE id = ?",
			 "ii", a->now, a->task_id)) < 0 ||
	    (rc = db_run(s,
			 "UPDATE task_attempts SET ended_at = ?, outcome = 'done' WHERE task_id = ? AND "
			 "attempt = ?",
			 "iii", a->now, a->task_id, a->attempt)) < 0 ||
	    (rc = store_agent_touch(s, a->agent_id, a->now)) < 0 ||
	    (rc = job_refresh_state(s, row.job_id, a->now)) < 0)
		return rc;
	/* A build done frees the cells waiting for it: other daemons' agents
	 * may take them (db_tasks_ready()). */
	if (!db_single_writer(s) &&
	    ((rc = db_int(
		      s, &waiting, 0,
		      "SELECT count(*) FROM (SELECT 1 FROM tasks WHERE build_task = ? AND state = 'queued'"
		      " LIMIT 1) AS waiting",
		      "i", a->task_id)) < 0 ||
	     (waiting > 0 && (rc = db_tasks_ready(s)) < 0)))
		return rc;
	/* Not knowing does not fail the result: calibration_note() then reads
	 * the job itself (and logs what fails). */
	if (job_is_calibration(s, row.job_id, &a->calibration) < 0)
		a->calibration = true;
	a->out = result_answer(a->task_id, a->attempt, result_id);
	return 0;
}

int store_task_result_begin(struct store *s, long long agent_id, long long task_id, long long attempt,
			    const char *body, size_t body_len, long long now, store_done_fn done,
			    void *context, struct store_call **ret_call)
{
	struct report_op a;

	if (body_len >= INT_MAX)
		return err_set(LL_ETOOBIG, "A result body has at most %d bytes.", INT_MAX - 1);
	a = (struct report_op){agent_id, task_id, attempt, now, .body = body, .body_len = body_len};
	return db_call_start(s, &a, sizeof(a), offsetof(struct report_op, out), op_task_result, done, context,
			     ret_call);
}

bool store_task_result_is_calibration(const struct store_call *call)
{
	const struct report_op *a = db_call_arg((struct store_call *)call);

	return db_call_result(call) >= 0 && !a->replayed && a->calibration;
}

int store_task_result_end(struct store_call *call, cJSON **ret_body, bool *ret_replayed)
{
	const struct report_op *a = db_call_arg(call);
	long long task_id = a->task_id;
	bool replayed = a->replayed;
	int rc = db_call_end(call, ret_body);

	if (rc == 0 && !replayed)
		db_log_state("task_state", "task_id", task_id, "leased", "done", NULL);
	if (rc == 0)
		*ret_replayed = replayed;
	return rc;
}

/* A build task that is dead fails its job once: every measuring task
 * waiting for it is dead too, with the build's REASON (its log). */
static int build_dead(struct store *s, long long task_id, const char *reason, long long now)
{
	char text[2200];

	snprintf(text, sizeof(text), "Build task %lld failed: %s", task_id, reason ? reason : "");
	return db_run(s,
		      "UPDATE tasks SET state = 'dead', last_error = ?, updated_at = ?"
		      " WHERE build_task = ? AND state = 'queued'",
		      "tii", text, now, task_id);
}

/* Ends the current attempt of a leased task: back to the queue after
 * DELAY_MS, or dead when RETRY is false or the attempts are used up. */
static int end_attempt(struct store *s, long long task_id, long long job_id, long long attempt,
		       const char *outcome, const char *reason, bool retry, long long delay_ms, long long now,
		       const char **ret_state, long long *ret_retry_at)
{
	const char *next =
		queue_task_state_name(queue_after_attempt(attempt, store_options_of(s)->max_attempts, retry));
	long long retry_at = now + delay_ms;
	int rc;

	if ((rc = db_run(s,
			 "UPDATE tasks SET state = ?, lease_holder = NULL, lease_expires = NULL,"
			 " not_before = ?, last_error = ?, updated_at = ? WHERE id = ?",
			 "titii", next, retry_at, reason, now, task_id)) < 0 ||
	    (rc = db_run(
		     s,
		     "UPDATE task_attempts SET ended_at = ?, outcome = ? WHERE task_id = ? AND attempt = ?",
		     "itii", now, outcome, task_id, attempt)) < 0 ||
	    (strcmp(next, "dead") == 0 && (rc = build_dead(s, task_id, reason, now)) < 0) ||
	    (rc = job_refresh_state(s, job_id, now)) < 0)
		return rc;
	/* Back to the queue at once (an expired lease): every daemon's
	 * long-polls may take it. */
	if (strcmp(next, "queued") == 0 && delay_ms <= 0 && (rc = db_tasks_ready(s)) < 0)
		return rc;
	db_log_state("task_state", "task_id", task_id, "leased", next, reason);
	*ret_state = next;
	*ret_retry_at = retry_at;
	return 0;
}

static int op_task_fail(struct store *s, void *arg)
{
	struct report_op *a = arg;
	const struct store_options *options = store_options_of(s);
	struct task_row row;
	const char *state;
	long long delay, retry_at;
	int rc;

	if ((rc = check_holder(s, a->agent_id, a->task_id, a->attempt, &row)) < 0)
		return rc;
	delay = queue_retry_delay(a->attempt, options->backoff_ms, options->backoff_max_ms);
	if ((rc = end_attempt(s, a->task_id, row.job_id, a->attempt, "failed", a->reason, a->retryable, delay,
			      a->now, &state, &retry_at)) < 0 ||
	    (rc = store_agent_touch(s, a->agent_id, a->now)) < 0)
		return rc;
	a->out = task_attempt_json(a->task_id, a->attempt, state);
	if (strcmp(state, "queued") == 0)
		db_add_time_value(a->out, "retry_at", retry_at);
	else
		cJSON_AddNullToObject(a->out, "retry_at");
	return 0;
}

int store_task_fail(struct store *s, long long agent_id, long long task_id, long long attempt,
		    const char *reason, bool retryable, long long now, cJSON **ret_body)
{
	struct report_op a = {agent_id, task_id, attempt, now, .reason = reason, .retryable = retryable};

	return db_write_answer(s, op_task_fail, &a, &a.out, ret_body);
}

/* Leases expired at most per sweep (one write). */
#define EXPIRE_BATCH 64

struct expire_op {
	long long now;
	int expired;
};

static int op_expire_leases(struct store *s, void *arg)
{
	struct expire_op *a = arg;
	struct db_stmt st;
	long long ids[EXPIRE_BATCH][3];
	int n = 0, rc;

	/* Oldest lease first; one another daemon's sweep holds is passed by. */
	if ((rc = db_prepare(s,
			     DB_SQL_SKIP_LOCKED(s, "SELECT id, job_id, attempt FROM tasks"
						   " WHERE state = 'leased' AND lease_expires < ?"
						   " ORDER BY lease_expires, id LIMIT ?"),
			     &st)) < 0)
		return rc;
	db_bind(&st, "ii", a->now, (long long)EXPIRE_BATCH);
	while (n < EXPIRE_BATCH && db_step(&st) == DB_ROW) {
		ids[n][0] = db_column_int64(&st, 0);
		ids[n][1] = db_column_int64(&st, 1);
		ids[n][2] = db_column_int64(&st, 2);
		n++;
	}
	if ((rc = db_finish(&st)) < 0)
		return rc;
	for (int i = 0; i < n && rc == 0; i++) {
		const char *state;
		long long retry_at;
		char reason[96];
		snprintf(reason, sizeof(reason), "The lease of attempt %lld expired.", ids[i][2]);
		/* The holder vanished, not the task's fault: no backoff. */
		rc = end_attempt(s, ids[i][0], ids[i][1], ids[i][2], "expired", reason, true, 0, a->now,
				 &state, &retry_at);
	}
	a->expired = n;
	return rc;
}

int store_expire_leases(struct store *s, long long now, int *ret_expired)
{
	struct expire_op a = {now, 0};
	long long oldest;
	int rc;

	/* A cheap read first: most sweeps find nothing to do. */
	db_read_begin(s);
	rc = db_int(s, &oldest, LLONG_MAX, "SELECT min(lease_expires) FROM tasks WHERE state = 'leased'", "");
	db_read_end(s);
	if (rc < 0)
		return rc;
	*ret_expired = 0;
	if (!queue_lease_expired(oldest, now))
		return 0;
	if ((rc = db_write(s, op_expire_leases, &a)) < 0)
		return rc;
	*ret_expired = a.expired;
	return 0;
}
