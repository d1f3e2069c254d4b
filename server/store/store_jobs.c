/*
 * store_jobs.c - the jobs (store.h, "jobs"): creation with their
 * tasks, listing, reading, cancelling, and keeping a job's state in step
 * with its tasks' (queue_job_state()).
 */
#include "db.h"
#include "store_backend.h"
#include "store_build_hold.h"
#include "store_jobs.h"
#include "store_queue_agents.h"

#include "store/queue.h"
#include "store/queue_build.h"

#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest job state name, with its NUL. */
#define JOB_STATE_SIZE 16

/* Column 0 into the JOB_STATE_SIZE buffer CONTEXT. */
static int read_job_state(void *context, struct db_stmt *row)
{
	snprintf(context, JOB_STATE_SIZE, "%s", db_column_text(row, 0));
	return 0;
}

/* Whether job JOB_ID has a task in STATE (an index seek). The state is
 * written in each statement, not bound: SQLite re-prepares a statement on
 * every new value of a parameter compared with a column that a partial
 * index's condition names (tasks.state: tasks_queued, tasks_held), which
 * cost 60k instructions a call instead of 5k. */
static int job_has_task(struct store *s, long long job_id, enum queue_task_state state, bool *ret)
{
#define HAS_TASK(name) "SELECT EXISTS (SELECT 1 FROM tasks WHERE job_id = ? AND state = '" name "')"
	static const char *const sql[QUEUE_TASK_STATE_COUNT] = {
		[QUEUE_TASK_QUEUED] = HAS_TASK("queued"),       [QUEUE_TASK_LEASED] = HAS_TASK("leased"),
		[QUEUE_TASK_DONE] = HAS_TASK("done"),           [QUEUE_TASK_DEAD] = HAS_TASK("dead"),
		[QUEUE_TASK_CANCELLED] = HAS_TASK("cancelled"),
	};
#undef HAS_TASK
	long long found = 0;
	int rc = db_int(s, &found, 0, sql[state], "i", job_id);

	*ret = found != 0;
	return rc;
}

/*
 * queue_job_state() reads the counts only as "is there a task in this
 * state" and "was any task attempted", so those are what is asked: one
 * index seek per state (tasks_by_job_state), where counting the job's
 * tasks by state cost a scan of all of them per result. Counts of 1 stand
 * for "some".
 */
static int refresh_state(struct store *s, long long job_id, long long now)
{
	struct queue_task_counts counts = {0};
	char current[JOB_STATE_SIZE] = "";
	const char *next;
	bool has_leased;
	int rc;

	/* The job's row locked first on PostgreSQL: another transaction's
	 * change of a task of this job (another thread, another daemon) is
	 * committed before this one reads the tasks, so the last of them
	 * sees every change. */
	rc = db_row_by_id(s,
			  db_sql(s, "SELECT state FROM jobs WHERE id = ?",
				 "SELECT state FROM jobs WHERE id = ? FOR UPDATE"),
			  job_id, NULL, read_job_state, current);
	if (rc == LL_ENOTFOUND || (rc == 0 && strcmp(current, "cancelled") == 0))
		return 0;
	if (rc < 0)
		return rc;
	/* A leased task decides alone (the job runs), so it is asked first:
	 * a lease, or a result while others are out, costs one seek. */
	if ((rc = job_has_task(s, job_id, QUEUE_TASK_LEASED, &has_leased)) < 0)
		return rc;
	counts.by_state[QUEUE_TASK_LEASED] = has_leased;
	for (int i = 0; i < QUEUE_TASK_STATE_COUNT && !has_leased; i++) {
		bool has;
		if (i == QUEUE_TASK_LEASED)
			continue;
		if ((rc = job_has_task(s, job_id, (enum queue_task_state)i, &has)) < 0)
			return rc;
		counts.by_state[i] = has;
	}
	/* An attempt matters only while every task is queued (or cancelled). */
	if (!counts.by_state[QUEUE_TASK_LEASED] && !counts.by_state[QUEUE_TASK_DONE] &&
	    !counts.by_state[QUEUE_TASK_DEAD] &&
	    (rc = db_int(s, &counts.max_attempt, 0,
			 "SELECT EXISTS (SELECT 1 FROM tasks WHERE job_id = ? AND attempt > 0)", "i",
			 job_id)) < 0)
		return rc;

	next = queue_job_state(current, &counts);
	if (strcmp(next, current) == 0)
		return 0;
	rc = db_run(s, "UPDATE jobs SET state = ?, updated_at = ? WHERE id = ?", "tii", next, now, job_id);
	if (rc == 0)
		db_log_state("job_state", "job_id", job_id, current, next, NULL);
	return rc;
}

/* Just before the write commits where several daemons write (db.h):
 * the jobs' rows locked last, in id order, once per job and batch. */
int job_refresh_state(struct store *s, long long job_id, long long now)
{
	return db_before_commit(s, refresh_state, job_id, now);
}

#define JOB_COLUMNS "id, name, family, state, priority, submitted_by, created_at, updated_at"
static const struct column job_columns[] = {
	{"id", COLUMN_INT},          {"name", COLUMN_TEXT},       {"family", COLUMN_TEXT},
	{"state", COLUMN_TEXT},      {"priority", COLUMN_INT},    {"submitted_by", COLUMN_TEXT},
	{"created_at", COLUMN_TIME}, {"updated_at", COLUMN_TIME}, {NULL, 0},
};

static cJSON *job_summary(struct store *s, struct db_stmt *row)
{
	cJSON *j = cJSON_CreateObject(), *by_state;
	struct db_stmt stmt_buf, *stmt;
	long long id = db_column_int64(row, 0), total = 0;

	db_add_columns(j, row, 0, job_columns);
	by_state = cJSON_CreateObject();
	for (int i = 0; i < QUEUE_TASK_STATE_COUNT; i++)
		cJSON_AddNumberToObject(by_state, queue_task_state_name((enum queue_task_state)i), 0);
	stmt = db_statement(s, &stmt_buf,
			    "SELECT state, count(*) FROM tasks WHERE job_id = ? AND kind = 'measure'"
			    " GROUP BY state");
	if (stmt) {
		db_bind_int64(stmt, 1, id);
		while (db_step(stmt) == DB_ROW) {
			const char *st = db_column_text(stmt, 0);
			long long n = db_column_int64(stmt, 1);
			cJSON_ReplaceItemInObjectCaseSensitive(by_state, st, cJSON_CreateNumber((double)n));
			total += n;
		}
		db_finish(stmt);
	}
	cJSON_AddNumberToObject(j, "task_count", (double)total);
	cJSON_AddItemToObject(j, "tasks_by_state", by_state);
	return j;
}

/* The context of read_job_summary(). */
struct job_summary_read {
	struct store *s;
	cJSON *job;
};

static int read_job_summary(void *context, struct db_stmt *row)
{
	struct job_summary_read *c = context;

	c->job = job_summary(c->s, row);
	return 0;
}

static int job_summary_by_id(struct store *s, long long job_id, cJSON **ret)
{
	struct job_summary_read c = {s, NULL};
	int rc = db_row_by_id(s, "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?", job_id, "job",
			      read_job_summary, &c);

	if (rc == 0)
		*ret = c.job;
	return rc;
}

struct job_create_op {
	const cJSON *spec;
	const char *submitted_by;
	long long now;
	cJSON *out;
};

/* Inserts a task of KIND ("measure" or "build") waiting for BUILD_TASK (0:
 * none); its id into *RET_ID (may be NULL). */
static int insert_task_kind(struct store *s, long long job_id, const char *kind, const cJSON *cell,
			    long long pinned, long long build_task, long long priority, long long now,
			    long long *ret_id)
{
	char *text = json_print(cell);
	long long id = 0;
	int rc;

	if (!text)
		return LL_ENOMEM;
	rc = db_int(s, &id, 0,
		    "INSERT INTO tasks (job_id, kind, cell, pinned_agent, build_task, state, priority,"
		    " created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?) RETURNING id",
		    "ittnniii", job_id, kind, text, pinned, build_task, priority, now, now);
	free(text);
	if (rc == 0 && ret_id)
		*ret_id = id;
	return rc;
}

/* The build tasks of one job being created: a target's text and its task. */
struct job_builds {
	char *targets[STORE_MAX_BUILDS];
	long long ids[STORE_MAX_BUILDS];
	size_t count;
};

static void job_builds_release(struct job_builds *b)
{
	for (size_t i = 0; i < b->count; i++)
		free(b->targets[i]);
}

/* The build task CELL of a shared-build job needs (made before it when it
 * is the first cell of its target) into *RET_ID; 0 when the job builds on
 * each agent. FACTS: those of the agent the cell is pinned to, or NULL. */
static int build_for_cell(struct store *s, const cJSON *spec, long long job_id, const cJSON *cell,
			  const cJSON *facts, long long priority, long long now, struct job_builds *b,
			  long long *ret_id)
{
	cJSON *target = NULL;
	char *text;
	int rc;

	*ret_id = 0;
	if (!queue_build_shared(spec, store_options_of(s)->each_agent_build))
		return 0;
	if ((rc = queue_build_target(cJSON_GetObjectItemCaseSensitive(spec, "family")->valuestring, cell,
				     facts, &target)) < 0)
		return rc;
	text = json_print(target);
	for (size_t i = 0; text && i < b->count; i++)
		if (strcmp(b->targets[i], text) == 0) {
			*ret_id = b->ids[i];
			free(text);
			cJSON_Delete(target);
			return 0;
		}
	if (!text)
		rc = LL_ENOMEM;
	else if (b->count == STORE_MAX_BUILDS)
		rc = err_set(LL_ETOOBIG, "A job's cells need more than %d builds.", STORE_MAX_BUILDS);
	else if ((rc = insert_task_kind(s, job_id, "build", target, 0, 0, priority, now, ret_id)) == 0) {
		b->targets[b->count] = text;
		b->ids[b->count++] = *ret_id;
		text = NULL;
	}
	free(text);
	cJSON_Delete(target);
	return rc;
}

/* A measuring task of CELL, after its build when the job has shared builds. */
static int insert_task(struct store *s, const cJSON *spec, long long job_id, const cJSON *cell,
		       const cJSON *facts, long long pinned, long long priority, long long now,
		       struct job_builds *builds)
{
	long long build_task;
	int rc = build_for_cell(s, spec, job_id, cell, facts, priority, now, builds, &build_task);

	if (rc < 0)
		return rc;
	return insert_task_kind(s, job_id, "measure", cell, pinned, build_task, priority, now, NULL);
}

static int op_job_create(struct store *s, void *arg)
{
	struct job_create_op *a = arg;
	const cJSON *matrix = cJSON_GetObjectItemCaseSensitive(a->spec, "matrix");
	const cJSON *selector = cJSON_GetObjectItemCaseSensitive(matrix, "each_agent");
	long long priority = (long long)cJSON_GetObjectItemCaseSensitive(a->spec, "priority")->valuedouble;
	long long job_id, tasks = 0;
	struct job_builds builds = {.count = 0};
	char *spec_text = json_print(a->spec);
	int rc;

	if (!spec_text)
		return LL_ENOMEM;
	rc = db_int(s, &job_id, 0,
		    "INSERT INTO jobs (name, family, spec, priority, state, submitted_by, created_at,"
		    " updated_at) VALUES (?, ?, ?, ?, 'queued', ?, ?, ?) RETURNING id",
		    "tttitii", cJSON_GetObjectItemCaseSensitive(a->spec, "name")->valuestring,
		    cJSON_GetObjectItemCaseSensitive(a->spec, "family")->valuestring, spec_text, priority,
		    a->submitted_by, a->now, a->now);
	free(spec_text);
	if (rc < 0)
		return rc;

	if (selector) {
		/* each_agent: one task pinned to every matching agent enrolled now. */
		struct db_stmt stmt_buf, *stmt = db_statement(s, &stmt_buf,
							      "SELECT id, name, facts, labels, quarantined"
							      " FROM agents ORDER BY id");
		if (!stmt)
			return LL_ESTORE;
		while (rc == 0 && db_step(stmt) == DB_ROW) {
			cJSON *facts = db_column_json(stmt, 2), *labels = db_column_json(stmt, 3);
			struct queue_agent agent = {.id = db_column_int64(stmt, 0),
						    .name = db_column_text(stmt, 1),
						    .facts = facts,
						    .labels = labels,
						    .quarantined = (int)db_column_int64(stmt, 4) != 0};
			if (queue_agent_selected(selector, &agent)) {
				cJSON *cell = cJSON_CreateObject();
				cJSON_AddStringToObject(cell, "agent", db_column_text(stmt, 1));
				rc = insert_task(s, a->spec, job_id, cell, facts, db_column_int64(stmt, 0),
						 priority, a->now, &builds);
				cJSON_Delete(cell);
				tasks++;
			}
			cJSON_Delete(facts);
			cJSON_Delete(labels);
		}
		rc = db_finish_read(stmt, rc);
		if (rc == 0 && tasks == 0)
			rc = err_set(LL_EINVAL, "No enrolled, non-quarantined agent matches the "
						"job's each_agent selector.");
	} else {
		cJSON *cells = NULL, *cell;
		if ((rc = job_spec_expand_cells(a->spec, &cells)) < 0) {
			job_builds_release(&builds);
			return rc;
		}
		cJSON_ArrayForEach(cell, cells) {
			if ((rc = insert_task(s, a->spec, job_id, cell, NULL, 0, priority, a->now, &builds)) <
			    0)
				break;
			tasks++;
		}
		cJSON_Delete(cells);
	}
	job_builds_release(&builds);
	/* Other daemons' parked long-polls look at the new tasks. */
	if (rc < 0 || (rc = db_tasks_ready(s)) < 0)
		return rc;
	a->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(a->out, "id", (double)job_id);
	cJSON_AddNumberToObject(a->out, "task_count", (double)tasks);
	cJSON_AddStringToObject(a->out, "state", "queued");
	db_log_state("job_state", "job_id", job_id, "", "queued", NULL);
	return 0;
}

int store_job_create(struct store *s, const cJSON *spec, const char *submitted_by, long long now,
		     cJSON **ret_body)
{
	struct job_create_op a = {spec, submitted_by, now, NULL};

	return db_write_answer(s, op_job_create, &a, &a.out, ret_body);
}

int store_job_list(struct store *s, const char *state, int limit, long long before, cJSON **ret_list)
{
	struct db_stmt stmt_buf, *stmt;
	cJSON *out = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(out, "jobs");
	long long last = 0;
	int n = 0, step = DB_DONE, failed;

	db_snapshot_begin(s);
	stmt = db_statement(s, &stmt_buf,
			    "SELECT " JOB_COLUMNS " FROM jobs"
			    " WHERE (?1 IS NULL OR state = ?1) AND (?2 = 0 OR id < ?2)"
			    " ORDER BY id DESC LIMIT ?3");
	if (stmt) {
		db_bind_text(stmt, 1, state);
		db_bind_int64(stmt, 2, before);
		db_bind_int64(stmt, 3, limit + 1);
		while ((step = db_step(stmt)) == DB_ROW) {
			if (n++ == limit)
				break;
			last = db_column_int64(stmt, 0);
			cJSON_AddItemToArray(list, job_summary(s, stmt));
		}
	}
	db_finish(stmt);
	/* job_summary()'s reads too */
	if ((failed = db_snapshot_end(s)) < 0 && step >= 0)
		step = failed;
	if (!stmt || step < 0) {
		/* A database that fails mid-list fails the list: never a short one. */
		cJSON_Delete(out);
		return step < 0 ? step : LL_ESTORE;
	}
	if (n > limit)
		cJSON_AddNumberToObject(out, "next_before", (double)last);
	else
		cJSON_AddNullToObject(out, "next_before");
	*ret_list = out;
	return 0;
}

static cJSON *task_from_row(struct db_stmt *stmt)
{
	/* columns: id, cell, pinned_agent, lease_holder, state, attempt, phase,
	 * percent, lease_expires, not_before, last_error, result_id */
	cJSON *t = cJSON_CreateObject();
	const char *state = db_column_text(stmt, 4);
	bool leased = strcmp(state, "leased") == 0;

	cJSON_AddNumberToObject(t, "id", (double)db_column_int64(stmt, 0));
	cJSON_AddItemToObject(t, "cell", db_column_json(stmt, 1));
	if (!db_column_null(stmt, 2))
		db_add_int_or_null(t, "agent_id", stmt, 2);
	else
		db_add_int_or_null(t, "agent_id", stmt, 3);
	cJSON_AddStringToObject(t, "state", state);
	cJSON_AddNumberToObject(t, "attempt", (double)db_column_int64(stmt, 5));
	db_add_text_or_null(t, "phase", stmt, 6);
	db_add_int_or_null(t, "percent", stmt, 7);
	if (leased)
		db_add_time(t, "lease_expires_at", stmt, 8);
	else
		cJSON_AddNullToObject(t, "lease_expires_at");
	if (strcmp(state, "queued") == 0 && db_column_int64(stmt, 5) > 0)
		db_add_time(t, "retry_at", stmt, 9);
	else
		cJSON_AddNullToObject(t, "retry_at");
	db_add_text_or_null(t, "last_error", stmt, 10);
	db_add_int_or_null(t, "result_id", stmt, 11);
	return t;
}

/* Adds column 0 as the "spec" of the job CONTEXT. */
static int read_spec(void *context, struct db_stmt *row)
{
	cJSON_AddItemToObject(context, "spec", db_column_json(row, 0));
	return 0;
}

/* Adds to the array LIST every task of JOB_ID of KIND ("measure" or "build"). */
static int add_tasks(struct store *s, long long job_id, const char *kind, cJSON *list)
{
	struct db_stmt stmt_buf,
		*stmt = db_statement(
			s, &stmt_buf,
			"SELECT t.id, t.cell, t.pinned_agent, t.lease_holder, t.state, t.attempt,"
			" t.phase, t.percent, t.lease_expires, t.not_before, t.last_error,"
			" (SELECT r.id FROM results r WHERE r.task_id = t.id ORDER BY r.id DESC LIMIT 1),"
			" t.build_task, (SELECT a.name FROM agents a WHERE a.id = t.lease_holder)"
			" FROM tasks t WHERE t.job_id = ? AND t.kind = ? ORDER BY t.id");
	bool build = strcmp(kind, "build") == 0;
	int step = DB_DONE;

	if (!stmt)
		return LL_ESTORE;
	db_bind_int64(stmt, 1, job_id);
	db_bind_text(stmt, 2, kind);
	while ((step = db_step(stmt)) == DB_ROW) {
		cJSON *t = task_from_row(stmt);
		if (build) {
			/* A build's cell is its target; its agent_id the builder,
			 * "builder" its name (null until leased). */
			cJSON_AddItemToObject(t, "target",
					      cJSON_DetachItemFromObjectCaseSensitive(t, "cell"));
			db_add_text_or_null(t, "builder", stmt, 13);
		} else if (!db_column_null(stmt, 12)) {
			db_add_int_or_null(t, "build_task", stmt, 12);
		}
		cJSON_AddItemToArray(list, t);
	}
	db_finish(stmt);
	return step < 0 ? step : 0;
}

int store_job_get(struct store *s, long long job_id, cJSON **ret_job)
{
	cJSON *job = NULL;
	int rc, failed;

	db_snapshot_begin(s);
	rc = job_summary_by_id(s, job_id, &job);
	if (rc == 0) {
		db_row_by_id(s, "SELECT spec FROM jobs WHERE id = ?", job_id, NULL, read_spec, job);
		rc = add_tasks(s, job_id, "measure", cJSON_AddArrayToObject(job, "tasks"));
		/* "builds" only for a job that has some. */
		if (rc == 0 &&
		    (rc = add_tasks(s, job_id, "build", cJSON_AddArrayToObject(job, "builds"))) == 0 &&
		    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(job, "builds")) == 0)
			cJSON_DeleteItemFromObjectCaseSensitive(job, "builds");
	}
	failed = db_snapshot_end(s); /* job_summary()'s and the spec's reads */
	return db_answer(rc < 0 ? rc : failed, job, ret_job);
}

/* What the waiting reasons of a job read: the agents, once
 * (store_queue_agents.h), and the first failure of a build's read. */
struct waiting {
	struct store *store;
	struct queue_agents agents;
	int rc;
};

/* A queued task's pinned agent: its agent_id (the lease holder is cleared
 * when a task goes back to the queue), 0 when none. */
static long long pinned_of(const cJSON *task)
{
	const cJSON *agent = cJSON_GetObjectItemCaseSensitive(task, "agent_id");

	return cJSON_IsNumber(agent) ? (long long)agent->valuedouble : 0;
}

/* The build task ID among JOB's "builds"; NULL when it has none such. */
static const cJSON *find_build(const cJSON *job, long long id)
{
	const cJSON *b;

	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(job, "builds")) {
		const cJSON *bid = cJSON_GetObjectItemCaseSensitive(b, "id");
		if (cJSON_IsNumber(bid) && (long long)bid->valuedouble == id)
			return b;
	}
	return NULL;
}

/* Whether the queued build BUILD of JOB can be leased now, REASON why
 * not: held while no enrolled agent can measure one of the queued cells
 * waiting for it (queue_build_wanted(), as the lease decides), else
 * queue_build_waiting(). */
static bool build_waiting(struct waiting *w, const cJSON *job, const cJSON *build, char *reason)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(build, "id"), *task, *first = NULL;
	const struct queue_agents *agents = &w->agents;
	char why[QUEUE_WAITING_REASON_SIZE];
	bool wanted = true;
	int rc;

	if (cJSON_IsNumber(id) &&
	    (rc = store_build_wanted(w->store, (long long)id->valuedouble, agents, &wanted)) < 0) {
		w->rc = w->rc < 0 ? w->rc : rc;
		wanted = true;
	}
	if (wanted)
		return queue_build_waiting(cJSON_GetObjectItemCaseSensitive(build, "target"), agents->list,
					   agents->count, reason);
	/* Why the first queued cell waiting for it cannot be measured. */
	cJSON_ArrayForEach(task, cJSON_GetObjectItemCaseSensitive(job, "tasks")) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(task, "build_task");
		const cJSON *state = cJSON_GetObjectItemCaseSensitive(task, "state");
		if (cJSON_IsNumber(b) && b->valuedouble == id->valuedouble && cJSON_IsString(state) &&
		    strcmp(state->valuestring, "queued") == 0) {
			first = task;
			break;
		}
	}
	if (first && !queue_task_waiting(cJSON_GetObjectItemCaseSensitive(first, "cell"), pinned_of(first),
					 agents->list, agents->count, why))
		snprintf(reason, QUEUE_WAITING_REASON_SIZE,
			 "held: no agent can measure what it builds (%.200s)", why);
	else
		snprintf(reason, QUEUE_WAITING_REASON_SIZE, "held: no agent can measure what it builds");
	return false;
}

/* Whether a queued measuring TASK of JOB can be leased now: its build
 * done (queue_task_waiting() then), else REASON says which build it waits
 * for and where (or why no agent can do it). */
static bool task_waiting(struct waiting *w, const cJSON *job, const cJSON *task, char *reason)
{
	const cJSON *pinned = cJSON_GetObjectItemCaseSensitive(task, "agent_id");
	const cJSON *build_id = cJSON_GetObjectItemCaseSensitive(task, "build_task");
	const cJSON *build =
		cJSON_IsNumber(build_id) ? find_build(job, (long long)build_id->valuedouble) : NULL;
	const cJSON *state = cJSON_GetObjectItemCaseSensitive(build, "state");
	const cJSON *holder = cJSON_GetObjectItemCaseSensitive(build, "agent_id");
	char name[32];

	if (build && cJSON_IsString(state) && strcmp(state->valuestring, "done") != 0) {
		long long id = (long long)build_id->valuedouble;
		if (strcmp(state->valuestring, "leased") == 0 && cJSON_IsNumber(holder))
			snprintf(reason, QUEUE_WAITING_REASON_SIZE, "waiting for build %lld on %s", id,
				 store_queue_agent_name(&w->agents, (long long)holder->valuedouble, name,
							sizeof(name)));
		else if (strcmp(state->valuestring, "queued") != 0 || build_waiting(w, job, build, reason))
			snprintf(reason, QUEUE_WAITING_REASON_SIZE, "waiting for build %lld (%s)", id,
				 state->valuestring);
		return false;
	}
	/* A queued task's agent_id is its pinned agent: the lease holder is
	 * cleared when a task goes back to the queue. */
	return queue_task_waiting(cJSON_GetObjectItemCaseSensitive(task, "cell"),
				  cJSON_IsNumber(pinned) ? (long long)pinned->valuedouble : 0, w->agents.list,
				  w->agents.count, reason);
}

/* Adds "waiting" to every task of LIST (builds when BUILDS). */
static void add_waiting(struct waiting *w, const cJSON *job, cJSON *list, bool builds)
{
	cJSON *task;

	cJSON_ArrayForEach(task, list) {
		const cJSON *state = cJSON_GetObjectItemCaseSensitive(task, "state");
		char reason[QUEUE_WAITING_REASON_SIZE];
		cJSON *waiting;
		bool could_run;

		if (!cJSON_IsString(state) || strcmp(state->valuestring, "queued") != 0) {
			cJSON_AddNullToObject(task, "waiting");
			continue;
		}
		could_run = builds ? build_waiting(w, job, task, reason) : task_waiting(w, job, task, reason);
		waiting = cJSON_AddObjectToObject(task, "waiting");
		cJSON_AddBoolToObject(waiting, "could_run", could_run);
		if (could_run)
			cJSON_AddNullToObject(waiting, "reason");
		else
			cJSON_AddStringToObject(waiting, "reason", reason);
	}
}

int store_job_add_waiting(struct store *s, cJSON *job, long long now)
{
	struct waiting w = {s, {NULL, 0}, 0};
	int rc;

	db_snapshot_begin(s);
	if ((rc = store_queue_agents_read(s, now, &w.agents)) == 0) {
		add_waiting(&w, job, cJSON_GetObjectItemCaseSensitive(job, "tasks"), false);
		add_waiting(&w, job, cJSON_GetObjectItemCaseSensitive(job, "builds"), true);
		rc = w.rc;
	}
	db_snapshot_end(s);
	store_queue_agents_release(&w.agents);
	return rc;
}

struct job_cancel_op {
	long long id, now;
	cJSON *out;
};

static int op_job_cancel(struct store *s, void *arg)
{
	struct job_cancel_op *a = arg;
	cJSON *job = NULL;
	const char *state;
	int rc;

	if ((rc = job_summary_by_id(s, a->id, &job)) < 0)
		return rc;
	state = cJSON_GetObjectItemCaseSensitive(job, "state")->valuestring;
	if (queue_job_finished(state)) {
		rc = err_set(LL_ECONFLICT, "Job %lld is already %s.", a->id, state);
		cJSON_Delete(job);
		return rc;
	}
	db_log_state("job_state", "job_id", a->id, state, "cancelled", "cancelled by a user");
	cJSON_Delete(job);
	/* Leased tasks keep their holder, who learns of the cancellation at
	 * its next heartbeat (cancel_notified = 0 until then). */
	if ((rc = db_run(s,
			 "UPDATE tasks SET state = 'cancelled', updated_at = ?,"
			 " cancel_notified = CASE WHEN state = 'leased' THEN 0 ELSE 1 END"
			 " WHERE job_id = ? AND state IN ('queued', 'leased')",
			 "ii", a->now, a->id)) < 0 ||
	    (rc = db_run(s, "UPDATE jobs SET state = 'cancelled', updated_at = ? WHERE id = ?", "ii", a->now,
			 a->id)) < 0)
		return rc;
	return job_summary_by_id(s, a->id, &a->out);
}

int store_job_cancel(struct store *s, long long job_id, long long now, cJSON **ret_job)
{
	struct job_cancel_op a = {job_id, now, NULL};

	return db_write_answer(s, op_job_cancel, &a, &a.out, ret_job);
}
