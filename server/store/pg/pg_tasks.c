/*
 * pg_tasks.c - the PostgreSQL store's tasks (store.h, "tasks"): leasing, progress,
 * results, failures and expired leases. What happens to a task is decided
 * by queue.h; this file reads and writes the rows.
 */
#include "pg_int.h"

#include "store/queue.h"
#include "store/queue_build.h"
#include "store/store_build_hold.h"

#include "loadlab/err.h"
#include "loadlab/log.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pq_agent_touch()'s longest wait between two writes of an agent's
 * last_seen, as SQLite's backend (tests/bench/README.md, pass 6): a burst
 * of one agent's requests writes its row once. */
#define AGENT_TOUCH_MAX_MS 1000

int pq_agent_touch(struct store *s, long long agent_id, long long now)
{
	long long window = s->options.offline_after_ms / 8;
	int rc;

	if (window <= 0 || window > AGENT_TOUCH_MAX_MS)
		window = AGENT_TOUCH_MAX_MS;
	pthread_mutex_lock(&s->cache_lock);
	bool due = store_cache_agent_touch_due(&s->cache, agent_id, now, window);
	pthread_mutex_unlock(&s->cache_lock);
	if (!due)
		return 0;
	/* GREATEST: another daemon's later touch stays. */
	rc = pq_run(pq_writer(),
		    "UPDATE agents SET last_seen = GREATEST(coalesce(last_seen, 0), ?) WHERE id = ?", "ii",
		    now, agent_id);
	if (rc == 0) {
		pthread_mutex_lock(&s->cache_lock);
		store_cache_agent_touch_put(&s->cache, agent_id, now);
		pthread_mutex_unlock(&s->cache_lock);
	}
	return rc;
}

struct lease_op {
	long long agent_id, now;
	long long task_id; /* set when a task was leased */
	cJSON *out;
};

/* A leased task's job: whether its state must be refreshed, and its
 * spec parsed when WANT_SPEC. */
struct lease_job {
	bool want_spec, refresh;
	cJSON *spec;
};

static int read_lease_job(void *context, struct pgq *row)
{
	struct lease_job *job = context;
	const char *state = (const char *)pgq_column_text(row, 0);

	/* With a task leased a job is running (queue_job_state()): only a
	 * job in another state than running or cancelled changes. */
	job->refresh = !state || (strcmp(state, "running") != 0 && strcmp(state, "cancelled") != 0);
	if (job->want_spec)
		job->spec = pq_column_json(row, 1);
	return 0;
}

/* Task TASK_ID's kind and build, read by read_task_kind(). */
struct task_kind {
	char kind[16];
	long long build_task;
};

static int read_task_kind(void *context, struct pgq *row)
{
	struct task_kind *k = context;

	snprintf(k->kind, sizeof(k->kind), "%s", (const char *)pgq_column_text(row, 0));
	k->build_task = pgq_column_int64(row, 1);
	return 0;
}

/* The build BUILD_TASK's result and builder, read by read_build(). */
static int read_build(void *context, struct pgq *row)
{
	cJSON *build = context;

	cJSON_AddItemToObject(build, "builder", cJSON_CreateString((const char *)pgq_column_text(row, 1)));
	cJSON_AddItemToObject(build, "result", pq_column_json(row, 0));
	return 0;
}

/* Adds to LEASE of task TASK_ID its "kind" and, for a build, its "target"
 * (its cell); for a measuring task of a shared build, "build": {"task_id",
 * "builder", "result": the build's result as posted}. */
static int add_lease_kind(struct store *s, long long task_id, cJSON *lease)
{
	struct task_kind k = {"measure", 0};
	cJSON *build;
	int rc = pq_row_by_id(pq_writer(), "SELECT kind, build_task FROM tasks WHERE id = ?", task_id, "task",
			      read_task_kind, &k);

	if (rc < 0)
		return rc;
	if (!cJSON_AddStringToObject(lease, "kind", k.kind))
		return err_set(LL_ENOMEM, "Out of memory.");
	if (strcmp(k.kind, "build") == 0) {
		cJSON *target = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(lease, "cell"), true);
		return cJSON_AddItemToObject(lease, "target", target) ? 0
								      : err_set(LL_ENOMEM, "Out of memory.");
	}
	if (!k.build_task)
		return 0;
	if (!(build = cJSON_AddObjectToObject(lease, "build")) ||
	    !cJSON_AddNumberToObject(build, "task_id", (double)k.build_task))
		return err_set(LL_ENOMEM, "Out of memory.");
	rc = pq_row_by_id(pq_writer(),
			  "SELECT r.body, a.name FROM results r JOIN agents a ON a.id = r.agent_id"
			  " WHERE r.task_id = ? ORDER BY r.id DESC LIMIT 1",
			  k.build_task, NULL, read_build, build);
	return rc == LL_ENOTFOUND ? err_set(LL_ESTORE, "Build task %lld has no result.", k.build_task) : rc;
}

/* The "job" member of JOB_ID's leases, printed, from its SPEC (taken). */
static char *lease_job_text(long long job_id, cJSON *spec)
{
	static const char *const copied[] = {"name", "family", "generator", "program", "variants", "measure"};
	cJSON *job = cJSON_CreateObject();
	char *text;

	cJSON_AddNumberToObject(job, "id", (double)job_id);
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++)
		cJSON_AddItemToObject(job, copied[i],
				      cJSON_DetachItemFromObjectCaseSensitive(spec, copied[i]));
	cJSON_Delete(spec);
	text = pq_json_text(job);
	cJSON_Delete(job);
	return text;
}

/* Builds the lease's answer (taking CELL) and refreshes the job's state
 * when the lease changes it. The job's part is the same for every lease
 * of its tasks (a job's spec never changes): printed once, kept in the
 * writer's slots, and added as raw JSON (the same bytes once printed). */
static int build_lease(struct store *s, long long task_id, long long job_id, long long attempt, cJSON *cell,
		       long long expires, long long now, cJSON **ret)
{
	struct store_cache_lease_job *slot;
	struct lease_job found;
	cJSON *lease, *job;
	char *printed = NULL;

	pthread_mutex_lock(&s->cache_lock);
	slot = store_cache_lease_job(&s->cache, job_id);
	if (slot->job_id == job_id && slot->text)
		printed = strdup(slot->text);
	pthread_mutex_unlock(&s->cache_lock);
	found = (struct lease_job){.want_spec = !printed};
	int rc = pq_row_by_id(pq_writer(), "SELECT state, spec FROM jobs WHERE id = ?", job_id, NULL,
			      read_lease_job, &found);

	if (rc == LL_ENOTFOUND)
		rc = err_set(LL_ESTORE, "Task %lld has no job.", task_id);
	if (rc == 0 && found.refresh)
		rc = job_refresh_state(s, job_id, now);
	if (rc == 0 && found.want_spec) {
		const cJSON *calibration = cJSON_GetObjectItemCaseSensitive(found.spec, "calibration");
		bool is_calibration = calibration && !cJSON_IsNull(calibration);
		printed = lease_job_text(job_id, found.spec); /* deletes the spec */

		pthread_mutex_lock(&s->cache_lock);
		store_cache_lease_job_put(&s->cache, job_id, printed ? strdup(printed) : NULL,
					  is_calibration);
		pthread_mutex_unlock(&s->cache_lock);
		if (!printed)
			rc = err_set(LL_ENOMEM, "Out of memory.");
		found.spec = NULL;
	}
	if (rc < 0 || !(job = cJSON_CreateRaw(printed))) {
		free(printed);
		cJSON_Delete(found.spec);
		cJSON_Delete(cell);
		return rc < 0 ? rc : err_set(LL_ENOMEM, "Out of memory.");
	}
	free(printed);

	lease = cJSON_CreateObject();
	cJSON_AddNumberToObject(lease, "task_id", (double)task_id);
	cJSON_AddNumberToObject(lease, "job_id", (double)job_id);
	cJSON_AddNumberToObject(lease, "attempt", (double)attempt);
	cJSON_AddItemToObject(lease, "cell", cell);
	pq_add_time_value(lease, "lease_expires_at", expires);
	cJSON_AddNumberToObject(lease, "lease_seconds", (double)queue_lease_seconds(s->options.lease_ms));
	cJSON_AddNumberToObject(lease, "heartbeat_seconds",
				(double)queue_heartbeat_seconds(s->options.lease_ms));
	cJSON_AddItemToObject(lease, "job", job);
	if ((rc = add_lease_kind(s, task_id, lease)) < 0) {
		cJSON_Delete(lease);
		return rc;
	}
	*ret = lease;
	return 0;
}

/* True when the row at ROW_A comes before the row at ROW_B in the queue's
 * order (priority DESC, id): columns 5 and 0 of the lease scans. */
static bool queue_order_before(struct pgq *row_a, struct pgq *row_b)
{
	long long priority_a = pgq_column_int64(row_a, 5), priority_b = pgq_column_int64(row_b, 5);

	if (priority_a != priority_b)
		return priority_a > priority_b;
	return pgq_column_int64(row_a, 0) < pgq_column_int64(row_b, 0);
}

static int read_lease_agent(void *context, struct pgq *row)
{
	struct queue_agent *agent = context;

	agent->facts = pq_column_json(row, 0);
	agent->labels = pq_column_json(row, 1);
	agent->quarantined = pgq_column_int(row, 2) != 0;
	agent->builder = pgq_column_int(row, 3) != 0;
	return 0;
}

/* A measuring task is ready once its build (if any) is done. */
#define BUILD_DONE                    \
	" AND (build_task IS NULL OR" \
	" (SELECT b.state FROM tasks b WHERE b.id = tasks.build_task) = 'done')"

/* Whether AGENT may lease the task at ROW of a lease scan: a build by its
 * target (queue_build_matches()) while some enrolled agent can measure
 * what it builds (store_build_wanted(): else it is held), any other by
 * its cell. */
static bool lease_matches(struct store *s, struct pgq *row, const cJSON *cell,
			  const struct queue_agent *agent)
{
	bool wanted = false;

	const char *kind = (const char *)pgq_column_text(row, 6);

	if (kind && strcmp(kind, "build") == 0)
		return queue_build_matches(cell, agent) &&
		       store_build_wanted(s, pgq_column_int64(row, 0), &wanted) == 0 && wanted;
	return queue_task_matches(cell, pgq_column_int64(row, 3), agent);
}

static int op_task_lease(struct store *s, void *arg)
{
	struct lease_op *a = arg;
	struct queue_agent agent = {.id = a->agent_id};
	struct pgq *pinned, *anyone;
	bool has_pinned, has_anyone;
	cJSON *cell = NULL;
	long long task_id = 0, job_id = 0, attempt = 0, expires;
	int rc;

	if ((rc = pq_row_by_id(pq_writer(),
			       "SELECT facts, labels, quarantined, builder FROM agents WHERE id = ?",
			       a->agent_id, "agent", read_lease_agent, &agent)) < 0)
		return rc;
	rc = pq_agent_touch(s, a->agent_id, a->now);
	if (rc < 0 || agent.quarantined)
		goto out;

	/* The queue order over both: pinned to this agent, and pinned to none. */
	pinned = pq_cached(pq_writer(),
			   "SELECT id, job_id, cell, pinned_agent, attempt, priority, kind FROM tasks"
			   " WHERE state = 'queued' AND pinned_agent = ?2 AND not_before <= ?1" BUILD_DONE
			   " ORDER BY priority DESC, id LIMIT ?3");
	anyone = pq_cached(pq_writer(),
			   "SELECT id, job_id, cell, pinned_agent, attempt, priority, kind FROM tasks"
			   " WHERE state = 'queued' AND pinned_agent IS NULL AND not_before <= ?1" BUILD_DONE
			   " ORDER BY priority DESC, id LIMIT ?3");
	if (!pinned || !anyone) {
		rc = LL_ESTORE;
		goto release;
	}
	pgq_bind_int64(pinned, 1, a->now);
	pgq_bind_int64(pinned, 2, a->agent_id);
	pgq_bind_int64(pinned, 3, STORE_LEASE_SCAN);
	pgq_bind_int64(anyone, 1, a->now);
	pgq_bind_int64(anyone, 3, STORE_LEASE_SCAN);
	has_pinned = pgq_step(pinned) == PGQ_ROW;
	has_anyone = pgq_step(anyone) == PGQ_ROW;
	for (int scanned = 0; (has_pinned || has_anyone) && scanned < STORE_LEASE_SCAN; scanned++) {
		struct pgq *stmt =
			!has_anyone || (has_pinned && queue_order_before(pinned, anyone)) ? pinned : anyone;
		cJSON *c = pq_column_json(stmt, 2);
		long long taken = -1;
		/* Another daemon's lease may hold the row, or have taken it
		 * since the scan read it: the next candidate then. */
		if (lease_matches(s, stmt, c, &agent) &&
		    (rc = pq_int(pq_writer(), &taken, -1,
				 "SELECT attempt FROM tasks WHERE id = ? AND state = 'queued'"
				 " FOR UPDATE SKIP LOCKED",
				 "i", pgq_column_int64(stmt, 0))) == 0 &&
		    taken >= 0) {
			task_id = pgq_column_int64(stmt, 0);
			job_id = pgq_column_int64(stmt, 1);
			attempt = taken + 1;
			cell = c;
			break;
		}
		cJSON_Delete(c);
		if (rc < 0)
			break;
		if (stmt == pinned)
			has_pinned = pgq_step(pinned) == PGQ_ROW;
		else
			has_anyone = pgq_step(anyone) == PGQ_ROW;
	}
release:
	pq_release(pq_writer(), pinned);
	pq_release(pq_writer(), anyone);
	if (rc < 0)
		goto out;
	if (!task_id)
		goto out;

	expires = a->now + s->options.lease_ms;
	if ((rc = pq_run(pq_writer(),
			 "UPDATE tasks SET state = 'leased', attempt = ?, lease_holder = ?,"
			 " lease_expires = ?, phase = NULL, percent = NULL, updated_at = ? WHERE id = ?",
			 "iiiii", attempt, a->agent_id, expires, a->now, task_id)) < 0 ||
	    (rc = pq_run(
		     pq_writer(),
		     "INSERT INTO task_attempts (task_id, attempt, agent_id, leased_at) VALUES (?, ?, ?, ?)",
		     "iiii", task_id, attempt, a->agent_id, a->now)) < 0)
		goto out;
	rc = build_lease(s, task_id, job_id, attempt, cell, expires, a->now, &a->out);
	cell = NULL;
	a->task_id = task_id;
out:
	cJSON_Delete(cell);
	cJSON_Delete((cJSON *)agent.facts);
	cJSON_Delete((cJSON *)agent.labels);
	return rc;
}

struct lease_call {
	struct store_call call;
	struct lease_op a;
};

int pg_task_lease_begin(struct store *s, long long agent_id, long long now, store_done_fn done, void *context,
			struct store_call **ret_call)
{
	struct lease_call *c = calloc(1, sizeof(*c));

	if (!c)
		return err_set(LL_ENOMEM, "Out of memory.");
	c->a = (struct lease_op){agent_id, now, 0, NULL};
	return pq_call_submit(s, &c->call, op_task_lease, &c->a, &c->a.out, done, context, ret_call);
}

int pg_task_lease_end(struct store_call *call, cJSON **ret_lease)
{
	struct lease_call *c = (struct lease_call *)call;
	long long task_id = c->a.task_id, agent_id = c->a.agent_id;
	int rc = pq_call_end(call, ret_lease);

	/* Logged once committed, by the caller. */
	if (rc == 0 && task_id) {
		char task_text[24], agent_text[24];
		snprintf(task_text, sizeof(task_text), "%lld", task_id);
		snprintf(agent_text, sizeof(agent_text), "%lld", agent_id);
		log_event(LOG_INFO, "task_state", "task_id", task_text, "from", "queued", "to", "leased",
			  "agent_id", agent_text, NULL);
	}
	return rc;
}

struct task_row {
	long long job_id, attempt, holder;
	char state[16];
};

static int read_task_row(void *context, struct pgq *stmt)
{
	struct task_row *row = context;

	row->job_id = pgq_column_int64(stmt, 0);
	row->attempt = pgq_column_int64(stmt, 1);
	row->holder = pgq_column_int64(stmt, 2);
	snprintf(row->state, sizeof(row->state), "%s", (const char *)pgq_column_text(stmt, 3));
	return 0;
}

/* Checks that AGENT may report on (TASK, ATTEMPT): the task exists
 * (LL_ENOTFOUND), the agent held some attempt of it (LL_EFORBIDDEN), this
 * is the current, leased attempt held by the agent (else
 * STORE_STALE_ATTEMPT, or STORE_TASK_CANCELLED for a cancelled job). */
static int check_holder(struct store *s, long long agent_id, long long task_id, long long attempt,
			struct task_row *ret)
{
	struct task_row row = {0};
	long long held;
	int rc;

	if ((rc = pq_row_by_id(
		     pq_writer(),
		     "SELECT job_id, attempt, lease_holder, state FROM tasks WHERE id = ? FOR UPDATE",
		     task_id, "task", read_task_row, &row)) < 0)
		return rc;
	/* The lease that made the agent the holder inserted its attempt in the
	 * same op: only another holder needs the attempts looked up. */
	held = row.holder == agent_id;
	if (!held && (rc = pq_int(pq_writer(), &held, 0,
				  "SELECT count(*) FROM task_attempts WHERE task_id = ? AND agent_id = ?",
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
	long long expires = a->now + s->options.lease_ms;
	int rc;

	if ((rc = pq_agent_touch(s, a->agent_id, a->now)) < 0 ||
	    (rc = check_holder(s, a->agent_id, a->task_id, a->attempt, &row)) < 0 ||
	    (rc = pq_run(pq_writer(),
			 "UPDATE tasks SET phase = ?, percent = ?, lease_expires = ?, updated_at = ?"
			 " WHERE id = ?",
			 "tiiii", a->phase, (long long)a->percent, expires, a->now, a->task_id)) < 0)
		return rc;
	a->out = pq_task_attempt_json(a->task_id, a->attempt, "leased");
	cJSON_AddBoolToObject(a->out, "cancelled", false);
	pq_add_time_value(a->out, "lease_expires_at", expires);
	return 0;
}

int pg_task_progress(struct store *s, long long agent_id, long long task_id, long long attempt,
		     const char *phase, int percent, long long now, cJSON **ret_body)
{
	struct report_op a = {agent_id, task_id, attempt, now, .phase = phase, .percent = percent};

	return pq_write_answer(s, op_task_progress, &a, &a.out, ret_body);
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
 * pg_task_calibration_spec() reads): from the lease's slot of the job
 * when the writer holds it, which it nearly always does for a task just
 * leased; else from the row. */
static int job_is_calibration(struct store *s, long long job_id, bool *ret)
{
	const struct store_cache_lease_job *slot;
	long long found = 0;
	bool cached;
	int rc = 0;

	pthread_mutex_lock(&s->cache_lock);
	slot = store_cache_lease_job(&s->cache, job_id);
	cached = slot->job_id == job_id && slot->text;
	if (cached)
		found = slot->calibration;
	pthread_mutex_unlock(&s->cache_lock);
	if (!cached)
		rc = pq_int(pq_writer(), &found, 0,
			    "SELECT (spec::jsonb ->> 'calibration') IS NOT NULL FROM jobs WHERE id = ?", "i",
			    job_id);
	*ret = found != 0;
	return rc;
}

static int op_task_result(struct store *s, void *arg)
{
	struct report_op *a = arg;
	struct task_row row;
	struct pgq *stmt;
	long long existing = 0, existing_agent = 0, result_id, waiting = 0;
	int rc;

	/* A replay of a stored (task, attempt) gets the same answer. */
	stmt = pq_cached(pq_writer(), "SELECT id, agent_id FROM results WHERE task_id = ? AND attempt = ?");
	if (!stmt)
		return LL_ESTORE;
	pgq_bind_int64(stmt, 1, a->task_id);
	pgq_bind_int64(stmt, 2, a->attempt);
	if (pgq_step(stmt) == PGQ_ROW) {
		existing = pgq_column_int64(stmt, 0);
		existing_agent = pgq_column_int64(stmt, 1);
	}
	pq_release(pq_writer(), stmt);
	if (existing) {
		if (existing_agent != a->agent_id)
			return err_set(LL_EFORBIDDEN, "Task %lld was never leased to this agent.",
				       a->task_id);
		a->out = result_answer(a->task_id, a->attempt, existing);
		a->replayed = true;
		return pq_agent_touch(s, a->agent_id, a->now);
	}
	if ((rc = check_holder(s, a->agent_id, a->task_id, a->attempt, &row)) < 0)
		return rc;
	stmt = pq_cached(pq_writer(), "INSERT INTO results (task_id, attempt, agent_id, body, created_at)"
				      " VALUES (?, ?, ?, ?, ?)");
	if (!stmt)
		return LL_ESTORE;
	pgq_bind_int64(stmt, 1, a->task_id);
	pgq_bind_int64(stmt, 2, a->attempt);
	pgq_bind_int64(stmt, 3, a->agent_id);
	pgq_bind_text(stmt, 4, a->body, (int)a->body_len, PGQ_TRANSIENT);
	pgq_bind_int64(stmt, 5, a->now);
	rc = pgq_step(stmt) == PGQ_DONE ? 0 : pq_error(pq_writer(), "insert result");
	pq_release(pq_writer(), stmt);
	if (rc < 0)
		return rc;
	result_id = pgq_last_insert_id(pq_writer());
	if ((rc = pq_run(pq_writer(),
			 "UPDATE tasks SET state = 'done', percent = 100, lease_expires = NULL,"
			 " updated_at = ? WHERE id = ?",
			 "ii", a->now, a->task_id)) < 0 ||
	    (rc = pq_run(pq_writer(),
			 "UPDATE task_attempts SET ended_at = ?, outcome = 'done' WHERE task_id = ? AND "
			 "attempt = ?",
			 "iii", a->now, a->task_id, a->attempt)) < 0 ||
	    (rc = pq_agent_touch(s, a->agent_id, a->now)) < 0 ||
	    (rc = job_refresh_state(s, row.job_id, a->now)) < 0)
		return rc;
	/* A build done frees the cells waiting for it (pg_watch.c). */
	if ((rc = pq_int(pq_writer(), &waiting, 0,
			 "SELECT count(*) FROM (SELECT 1 FROM tasks WHERE build_task = ? AND state = 'queued'"
			 " LIMIT 1) AS waiting",
			 "i", a->task_id)) < 0 ||
	    (waiting > 0 && (rc = pq_notify_tasks(s)) < 0))
		return rc;
	/* Not knowing does not fail the result: calibration_note() then reads
	 * the job itself (and logs what fails). */
	if (job_is_calibration(s, row.job_id, &a->calibration) < 0)
		a->calibration = true;
	a->out = result_answer(a->task_id, a->attempt, result_id);
	return 0;
}

struct report_call {
	struct store_call call;
	struct report_op a;
};

int pg_task_result_begin(struct store *s, long long agent_id, long long task_id, long long attempt,
			 const char *body, size_t body_len, long long now, store_done_fn done, void *context,
			 struct store_call **ret_call)
{
	struct report_call *c = calloc(1, sizeof(*c));

	if (!c)
		return err_set(LL_ENOMEM, "Out of memory.");
	c->a = (struct report_op){agent_id, task_id, attempt, now, .body = body, .body_len = body_len};
	return pq_call_submit(s, &c->call, op_task_result, &c->a, &c->a.out, done, context, ret_call);
}

bool pg_task_result_is_calibration(const struct store_call *call)
{
	const struct report_call *c = (const struct report_call *)call;

	return c->call.op.rc >= 0 && !c->a.replayed && c->a.calibration;
}

int pg_task_result_end(struct store_call *call, cJSON **ret_body, bool *ret_replayed)
{
	struct report_call *c = (struct report_call *)call;
	long long task_id = c->a.task_id;
	bool replayed = c->a.replayed;
	int rc = pq_call_end(call, ret_body);

	if (rc == 0 && !replayed)
		pq_log_state("task_state", "task_id", task_id, "leased", "done", NULL);
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
	return pq_run(pq_writer(),
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
		queue_task_state_name(queue_after_attempt(attempt, s->options.max_attempts, retry));
	long long retry_at = now + delay_ms;
	int rc;

	if ((rc = pq_run(pq_writer(),
			 "UPDATE tasks SET state = ?, lease_holder = NULL, lease_expires = NULL,"
			 " not_before = ?, last_error = ?, updated_at = ? WHERE id = ?",
			 "titii", next, retry_at, reason, now, task_id)) < 0 ||
	    (rc = pq_run(
		     pq_writer(),
		     "UPDATE task_attempts SET ended_at = ?, outcome = ? WHERE task_id = ? AND attempt = ?",
		     "itii", now, outcome, task_id, attempt)) < 0 ||
	    (strcmp(next, "dead") == 0 && (rc = build_dead(s, task_id, reason, now)) < 0) ||
	    (rc = job_refresh_state(s, job_id, now)) < 0)
		return rc;
	/* Back to the queue at once (an expired lease): every daemon's
	 * long-polls may take it (pg_watch.c). */
	if (strcmp(next, "queued") == 0 && delay_ms <= 0 && (rc = pq_notify_tasks(s)) < 0)
		return rc;
	pq_log_state("task_state", "task_id", task_id, "leased", next, reason);
	*ret_state = next;
	*ret_retry_at = retry_at;
	return 0;
}

static int op_task_fail(struct store *s, void *arg)
{
	struct report_op *a = arg;
	struct task_row row;
	const char *state;
	long long delay, retry_at;
	int rc;

	if ((rc = check_holder(s, a->agent_id, a->task_id, a->attempt, &row)) < 0)
		return rc;
	delay = queue_retry_delay(a->attempt, s->options.backoff_ms, s->options.backoff_max_ms);
	if ((rc = end_attempt(s, a->task_id, row.job_id, a->attempt, "failed", a->reason, a->retryable, delay,
			      a->now, &state, &retry_at)) < 0 ||
	    (rc = pq_agent_touch(s, a->agent_id, a->now)) < 0)
		return rc;
	a->out = pq_task_attempt_json(a->task_id, a->attempt, state);
	if (strcmp(state, "queued") == 0)
		pq_add_time_value(a->out, "retry_at", retry_at);
	else
		cJSON_AddNullToObject(a->out, "retry_at");
	return 0;
}

int pg_task_fail(struct store *s, long long agent_id, long long task_id, long long attempt,
		 const char *reason, bool retryable, long long now, cJSON **ret_body)
{
	struct report_op a = {agent_id, task_id, attempt, now, .reason = reason, .retryable = retryable};

	return pq_write_answer(s, op_task_fail, &a, &a.out, ret_body);
}

struct expire_op {
	long long now;
	int expired;
};

static int op_expire_leases(struct store *s, void *arg)
{
	struct expire_op *a = arg;
	struct pgq *stmt;
	long long ids[64][3];
	int n = 0, rc = 0;

	/* Oldest lease first: the scan stops at the first one still good. */
	stmt = pq_cached(pq_writer(), "SELECT id, job_id, attempt, lease_expires FROM tasks"
				      " WHERE state = 'leased' AND lease_expires < ?"
				      " ORDER BY lease_expires, id LIMIT 64 FOR UPDATE SKIP LOCKED");
	if (!stmt)
		return LL_ESTORE;
	pgq_bind_int64(stmt, 1, a->now);
	while (n < 64 && pgq_step(stmt) == PGQ_ROW &&
	       queue_lease_expired(pgq_column_int64(stmt, 3), a->now)) {
		ids[n][0] = pgq_column_int64(stmt, 0);
		ids[n][1] = pgq_column_int64(stmt, 1);
		ids[n][2] = pgq_column_int64(stmt, 2);
		n++;
	}
	pq_release(pq_writer(), stmt);
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

int pg_expire_leases(struct store *s, long long now, int *ret_expired)
{
	struct expire_op a = {now, 0};
	long long oldest;
	int rc;

	/* A cheap read first: most sweeps find nothing to do. */
	pq_read_begin(s);
	rc = pq_int(pq_reader(), &oldest, LLONG_MAX,
		    "SELECT min(lease_expires) FROM tasks WHERE state = 'leased'", "");
	pq_read_end(s);
	if (rc < 0)
		return rc;
	*ret_expired = 0;
	if (!queue_lease_expired(oldest, now))
		return 0;
	if ((rc = pq_write(s, op_expire_leases, &a)) < 0)
		return rc;
	*ret_expired = a.expired;
	return 0;
}
