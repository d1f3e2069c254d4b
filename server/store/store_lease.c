/*
 * store_lease.c - the lease (store.h "tasks", store_async.h): the best
 * queued task an agent may run, taken for it, and the lease's answer, over
 * the statement layer (db.h) for every driver. Which task an agent may
 * take is decided by queue.h and queue_build.h; this file reads and
 * writes the rows.
 */
#include "db.h"
#include "store_agents.h"
#include "store_backend.h"
#include "store_build_hold.h"
#include "store_cache.h"
#include "store_jobs.h"
#include "store_queue_agents.h"

#include "store/queue.h"
#include "store/queue_build.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The lease scan looks at this many ready tasks per call. */
#define STORE_LEASE_SCAN 500
/* ... first this many: only when none of them can be taken and more are
 * ready does it look again, up to STORE_LEASE_SCAN. PostgreSQL sends a
 * statement's rows up to its LIMIT at once: 500 candidate rows cost a
 * lease 1.2-3 ms of the server's time, most of its whole time in
 * bench_pg (tests/bench/README.md, "PostgreSQL"); SQLite steps lazily. */
#define STORE_LEASE_FIRST_SCAN 16

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

static int read_lease_job(void *context, struct db_stmt *row)
{
	struct lease_job *job = context;
	const char *state = db_column_text(row, 0);

	/* With a task leased a job is running (queue_job_state()): only a
	 * job in another state than running or cancelled changes. */
	job->refresh = !state || (strcmp(state, "running") != 0 && strcmp(state, "cancelled") != 0);
	if (job->want_spec)
		job->spec = db_column_json(row, 1);
	return 0;
}

/* Task TASK_ID's kind and build, read by read_task_kind(). */
struct task_kind {
	char kind[16];
	long long build_task;
};

static int read_task_kind(void *context, struct db_stmt *row)
{
	struct task_kind *k = context;

	snprintf(k->kind, sizeof(k->kind), "%s", db_column_text(row, 0));
	k->build_task = db_column_null(row, 1) ? 0 : db_column_int64(row, 1);
	return 0;
}

/* The build BUILD_TASK's result and builder, read by read_build(). */
static int read_build(void *context, struct db_stmt *row)
{
	cJSON *build = context;

	cJSON_AddItemToObject(build, "builder", cJSON_CreateString(db_column_text(row, 1)));
	cJSON_AddItemToObject(build, "result", db_column_json(row, 0));
	return 0;
}

/* Adds to LEASE of task TASK_ID its "kind" and, for a build, its "target"
 * (its cell); for a measuring task of a shared build, "build": {"task_id",
 * "builder", "result": the build's result as posted}. */
static int add_lease_kind(struct store *s, long long task_id, cJSON *lease)
{
	struct task_kind k = {"measure", 0};
	cJSON *build;
	int rc = db_row_by_id(s, "SELECT kind, build_task FROM tasks WHERE id = ?", task_id, "task",
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
	rc = db_row_by_id(s,
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
	text = json_print(job);
	cJSON_Delete(job);
	return text;
}

/* Builds the lease's answer (taking CELL) and refreshes the job's state
 * when the lease changes it. The job's part is the same for every lease
 * of its tasks (a job's spec never changes): printed once, kept in the
 * writers' cache (store_cache.h), and added as raw JSON (the same bytes
 * once printed). */
static int build_lease(struct store *s, long long task_id, long long job_id, long long attempt, cJSON *cell,
		       long long expires, long long now, cJSON **ret)
{
	struct store_cache *cache = ((struct store_base *)s)->cache;
	const struct store_options *options = store_options_of(s);
	cJSON *job = store_cache_lease_job(cache, job_id, NULL), *lease;
	struct lease_job found = {.want_spec = !job};
	int rc = db_row_by_id(s, "SELECT state, spec FROM jobs WHERE id = ?", job_id, NULL, read_lease_job,
			      &found);

	if (rc == LL_ENOTFOUND)
		rc = err_set(LL_ESTORE, "Task %lld has no job.", task_id);
	if (rc == 0 && found.refresh)
		rc = job_refresh_state(s, job_id, now);
	if (rc == 0 && found.want_spec) {
		const cJSON *calibration = cJSON_GetObjectItemCaseSensitive(found.spec, "calibration");
		bool is_calibration = calibration && !cJSON_IsNull(calibration);
		char *text = lease_job_text(job_id, found.spec); /* deletes the spec */

		found.spec = NULL;
		if (!text || !(job = cJSON_CreateRaw(text)))
			rc = err_set(LL_ENOMEM, "Out of memory.");
		store_cache_lease_job_put(cache, job_id, text, is_calibration);
	}
	if (rc < 0) {
		cJSON_Delete(job);
		cJSON_Delete(found.spec);
		cJSON_Delete(cell);
		return rc;
	}

	lease = cJSON_CreateObject();
	cJSON_AddNumberToObject(lease, "task_id", (double)task_id);
	cJSON_AddNumberToObject(lease, "job_id", (double)job_id);
	cJSON_AddNumberToObject(lease, "attempt", (double)attempt);
	cJSON_AddItemToObject(lease, "cell", cell);
	db_add_time_value(lease, "lease_expires_at", expires);
	cJSON_AddNumberToObject(lease, "lease_seconds", (double)queue_lease_seconds(options->lease_ms));
	cJSON_AddNumberToObject(lease, "heartbeat_seconds",
				(double)queue_heartbeat_seconds(options->lease_ms));
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
static bool queue_order_before(const struct db_stmt *row_a, const struct db_stmt *row_b)
{
	long long priority_a = db_column_int64(row_a, 5), priority_b = db_column_int64(row_b, 5);

	if (priority_a != priority_b)
		return priority_a > priority_b;
	return db_column_int64(row_a, 0) < db_column_int64(row_b, 0);
}

static int read_lease_agent(void *context, struct db_stmt *row)
{
	struct queue_agent *agent = context;

	agent->facts = db_column_json(row, 0);
	agent->labels = db_column_json(row, 1);
	agent->quarantined = db_column_int64(row, 2) != 0;
	agent->builder = db_column_int64(row, 3) != 0;
	return 0;
}

/* A measuring task is ready once its build (if any) is done. */
#define BUILD_DONE                    \
	" AND (build_task IS NULL OR" \
	" (SELECT b.state FROM tasks b WHERE b.id = tasks.build_task) = 'done')"

/* The agent a lease call is for, and the enrolled agents, read once per
 * call at its first build candidate (store_build_wanted()). */
struct lease_agents {
	struct queue_agent agent;
	struct queue_agents enrolled;
	bool enrolled_read;
	long long now;
};

/* Whether the agent of A may lease the task at ROW of a lease scan: a build
 * by its target (queue_build_matches()) while some enrolled agent can
 * measure what it builds (store_build_wanted(): else it is held), any
 * other by its cell. A failed read holds the build. */
static bool lease_matches(struct store *s, const struct db_stmt *row, const cJSON *cell,
			  struct lease_agents *a)
{
	bool wanted = false;
	const char *kind = db_column_text(row, 6);

	if (!kind || strcmp(kind, "build") != 0)
		return queue_task_matches(cell, db_column_null(row, 3) ? 0 : db_column_int64(row, 3),
					  &a->agent);
	if (!queue_build_matches(cell, &a->agent))
		return false;
	if (!a->enrolled_read && store_queue_agents_read(s, a->now, &a->enrolled) < 0)
		return false;
	a->enrolled_read = true;
	return store_build_wanted(s, db_column_int64(row, 0), &a->enrolled, &wanted) == 0 && wanted;
}

/* The task the scan found for the agent: its id (0: none), job, attempt
 * to be, and cell. */
struct lease_pick {
	long long task_id, job_id, attempt;
	cJSON *cell;
};

/* Takes the candidate at ROW for the agent when it matches: where writes
 * run at once (db_row_locks()) another lease may hold the row, or have
 * taken it since the scan read it, and then the next candidate is looked
 * at; SQLite's one writer takes the row as scanned. */
static int lease_take(struct store *s, const struct db_stmt *row, struct lease_agents *agents,
		      struct lease_pick *pick)
{
	cJSON *cell = db_column_json(row, 2);
	long long attempt = db_column_int64(row, 4);
	int rc = 0;

	if (!lease_matches(s, row, cell, agents) ||
	    (db_row_locks(s) &&
	     (rc = db_int(
		      s, &attempt, -1,
		      "SELECT attempt FROM tasks WHERE id = ? AND state = 'queued' FOR UPDATE SKIP LOCKED",
		      "i", db_column_int64(row, 0))) < 0) ||
	    attempt < 0) {
		cJSON_Delete(cell);
		return rc;
	}
	*pick = (struct lease_pick){db_column_int64(row, 0), db_column_int64(row, 1), attempt + 1, cell};
	return 0;
}

/* Scans the queue in its order over both of its parts, the tasks pinned
 * to the agent of AGENTS and those pinned to none, up to LIMIT ready
 * tasks, for the first it may take (lease_take()); *RET_CUT tells whether
 * it stopped at LIMIT with nothing taken (more may be ready). */
static int lease_scan_to(struct store *s, struct lease_agents *agents, long long limit,
			 struct lease_pick *pick, bool *ret_cut)
{
	struct db_stmt pinned_buf, anyone_buf, *pinned, *anyone;
	bool has_pinned, has_anyone;
	long long pinned_rows = 0, anyone_rows = 0;
	int rc = 0;

	pinned = db_statement(s, &pinned_buf,
			      "SELECT id, job_id, cell, pinned_agent, attempt, priority, kind FROM tasks"
			      " WHERE state = 'queued' AND pinned_agent = ?2 AND not_before <= ?1" BUILD_DONE
			      " ORDER BY priority DESC, id LIMIT ?3");
	anyone = db_statement(
		s, &anyone_buf,
		"SELECT id, job_id, cell, pinned_agent, attempt, priority, kind FROM tasks"
		" WHERE state = 'queued' AND pinned_agent IS NULL AND not_before <= ?1" BUILD_DONE
		" ORDER BY priority DESC, id LIMIT ?3");
	if (!pinned || !anyone) {
		db_finish(pinned);
		db_finish(anyone);
		return LL_ESTORE;
	}
	db_bind(pinned, "iii", agents->now, agents->agent.id, limit);
	db_bind_int64(anyone, 1, agents->now);
	db_bind_int64(anyone, 3, limit);
	has_pinned = db_step(pinned) == DB_ROW;
	has_anyone = db_step(anyone) == DB_ROW;
	pinned_rows += has_pinned;
	anyone_rows += has_anyone;
	long long scanned = 0;
	for (; (has_pinned || has_anyone) && scanned < limit; scanned++) {
		struct db_stmt *row =
			!has_anyone || (has_pinned && queue_order_before(pinned, anyone)) ? pinned : anyone;
		if ((rc = lease_take(s, row, agents, pick)) < 0 || pick->task_id)
			break;
		if (row == pinned) {
			has_pinned = db_step(pinned) == DB_ROW;
			pinned_rows += has_pinned;
		} else {
			has_anyone = db_step(anyone) == DB_ROW;
			anyone_rows += has_anyone;
		}
	}
	*ret_cut = !pick->task_id && (scanned >= limit || pinned_rows >= limit || anyone_rows >= limit);
	rc = db_finish_read(pinned, rc);
	return db_finish_read(anyone, rc);
}

/* lease_scan_to() over STORE_LEASE_FIRST_SCAN tasks, then, when those
 * were not all that is ready, over STORE_LEASE_SCAN. */
static int lease_scan(struct store *s, struct lease_agents *agents, struct lease_pick *pick)
{
	bool cut = false;
	int rc = lease_scan_to(s, agents, STORE_LEASE_FIRST_SCAN, pick, &cut);

	if (rc < 0 || !cut)
		return rc;
	return lease_scan_to(s, agents, STORE_LEASE_SCAN, pick, &cut);
}

static int op_task_lease(struct store *s, void *arg)
{
	struct lease_op *a = arg;
	struct lease_agents agents = {.agent = {.id = a->agent_id}, .now = a->now};
	struct lease_pick pick = {0, 0, 0, NULL};
	long long expires;
	int rc;

	a->task_id = 0; /* the op may run again after a rollback */
	if ((rc = db_row_by_id(s, "SELECT facts, labels, quarantined, builder FROM agents WHERE id = ?",
			       a->agent_id, "agent", read_lease_agent, &agents.agent)) < 0)
		return rc;
	rc = store_agent_touch(s, a->agent_id, a->now);
	if (rc < 0 || agents.agent.quarantined || (rc = lease_scan(s, &agents, &pick)) < 0 || !pick.task_id)
		goto out;

	expires = a->now + store_options_of(s)->lease_ms;
	if ((rc = db_run(s,
			 "UPDATE tasks SET state = 'leased', attempt = ?, lease_holder = ?,"
			 " lease_expires = ?, phase = NULL, percent = NULL, updated_at = ? WHERE id = ?",
			 "iiiii", pick.attempt, a->agent_id, expires, a->now, pick.task_id)) < 0 ||
	    (rc = db_run(
		     s,
		     "INSERT INTO task_attempts (task_id, attempt, agent_id, leased_at) VALUES (?, ?, ?, ?)",
		     "iiii", pick.task_id, pick.attempt, a->agent_id, a->now)) < 0)
		goto out;
	rc = build_lease(s, pick.task_id, pick.job_id, pick.attempt, pick.cell, expires, a->now, &a->out);
	pick.cell = NULL;
	if (rc == 0)
		a->task_id = pick.task_id;
out:
	cJSON_Delete(pick.cell);
	cJSON_Delete((cJSON *)agents.agent.facts);
	cJSON_Delete((cJSON *)agents.agent.labels);
	store_queue_agents_release(&agents.enrolled);
	return rc;
}

int store_task_lease_begin(struct store *s, long long agent_id, long long now, store_done_fn done,
			   void *context, struct store_call **ret_call)
{
	struct lease_op a = {agent_id, now, 0, NULL};

	return db_call_start(s, &a, sizeof(a), offsetof(struct lease_op, out), op_task_lease, done, context,
			     ret_call);
}

int store_task_lease_end(struct store_call *call, cJSON **ret_lease)
{
	const struct lease_op *a = db_call_arg(call);
	long long task_id = a->task_id, agent_id = a->agent_id;
	int rc = db_call_end(call, ret_lease);

	/* Logged by the caller once committed: the writer only writes. */
	if (rc == 0 && task_id) {
		char task_text[24], agent_text[24];
		snprintf(task_text, sizeof(task_text), "%lld", task_id);
		snprintf(agent_text, sizeof(agent_text), "%lld", agent_id);
		log_event(LOG_INFO, "task_state", "task_id", task_text, "from", "queued", "to", "leased",
			  "agent_id", agent_text, NULL);
	}
	return rc;
}
