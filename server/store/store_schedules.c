/*
 * store_schedules.c - the schedules (store.h, "series, schedules,
 * regression alerts"): recurring jobs and the runs that fire them once
 * per due time.
 */
#include "db.h"
#include "store.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEDULE_COLUMNS                                                                  \
	"id, series, cron, interval_s, job, enabled, created_by, created_at, updated_at," \
	" next_due, last_due, last_job_id, skipped, last_skip_at, last_skip_reason,"      \
	" coalesce(owner, created_by)"

static cJSON *schedule_from_row(struct db_stmt *row)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "id", (double)db_column_int64(row, 0));
	cJSON_AddStringToObject(o, "series", db_column_text(row, 1));
	db_add_text_or_null(o, "cron", row, 2);
	db_add_int_or_null(o, "interval_s", row, 3);
	cJSON_AddItemToObject(o, "job", db_column_json(row, 4));
	cJSON_AddBoolToObject(o, "enabled", (int)db_column_int64(row, 5) != 0);
	cJSON_AddStringToObject(o, "created_by", db_column_text(row, 6));
	cJSON_AddStringToObject(o, "owner", db_column_text(row, 15));
	db_add_time(o, "created_at", row, 7);
	db_add_time(o, "updated_at", row, 8);
	if ((int)db_column_int64(row, 5))
		db_add_time(o, "next_run_at", row, 9);
	else
		cJSON_AddNullToObject(o, "next_run_at");
	db_add_time(o, "last_due_at", row, 10);
	db_add_int_or_null(o, "last_job_id", row, 11);
	cJSON_AddNumberToObject(o, "skipped", (double)db_column_int64(row, 12));
	if (db_column_null(row, 13)) {
		cJSON_AddNullToObject(o, "last_skip");
	} else {
		cJSON *skip = cJSON_AddObjectToObject(o, "last_skip");
		db_add_time(skip, "at", row, 13);
		db_add_text_or_null(skip, "reason", row, 14);
	}
	return o;
}

static int read_schedule(void *context, struct db_stmt *row)
{
	*(cJSON **)context = schedule_from_row(row);
	return 0;
}

static int schedule_by_id(struct store *s, long long id, cJSON **ret)
{
	return db_row_by_id(s, "SELECT " SCHEDULE_COLUMNS " FROM schedules WHERE id = ? AND deleted = 0", id,
			    "schedule", read_schedule, ret);
}

struct schedule_create_op {
	const struct store_schedule_new *new;
	long long now;
	cJSON *out;
};

static int op_schedule_create(struct store *s, void *arg)
{
	struct schedule_create_op *a = arg;
	const struct store_schedule_new *n = a->new;
	long long id = 0;
	int rc;

	rc = db_int(s, &id, 0,
		    "INSERT INTO schedules (series, cron, interval_s, job, enabled, created_by, created_at,"
		    " updated_at, next_due) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
		    "ttititiii", n->series, n->cron, n->interval_s, n->job_text, (long long)n->enabled,
		    n->created_by, a->now, a->now, n->first_due_ms);
	if (rc < 0)
		return rc;
	if (!n->cron)
		db_run(s, "UPDATE schedules SET cron = NULL WHERE id = ?", "i", id);
	else
		db_run(s, "UPDATE schedules SET interval_s = NULL WHERE id = ?", "i", id);
	return schedule_by_id(s, id, &a->out);
}

int store_schedule_create(struct store *s, const struct store_schedule_new *schedule, long long now,
			  cJSON **ret_schedule)
{
	struct schedule_create_op a = {schedule, now, NULL};

	return db_write_answer(s, op_schedule_create, &a, &a.out, ret_schedule);
}

static void add_schedule(void *context, struct db_stmt *row)
{
	cJSON_AddItemToArray(context, schedule_from_row(row));
}

int store_schedule_list(struct store *s, cJSON **ret_list)
{
	cJSON *out = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(out, "schedules");
	int rc = db_read_each(s, "SELECT " SCHEDULE_COLUMNS " FROM schedules WHERE deleted = 0 ORDER BY id",
			      add_schedule, list);

	return db_answer(rc, out, ret_list);
}

int store_schedule_get(struct store *s, long long id, cJSON **ret_schedule)
{
	int rc;

	db_read_begin(s);
	rc = schedule_by_id(s, id, ret_schedule);
	db_read_end(s);
	return rc;
}

/* 0 when schedule ID exists (read with the writer, inside an op), else
 * schedule_by_id()'s error. */
static int writer_schedule_exists(struct store *s, long long id)
{
	cJSON *current = NULL;
	int rc = schedule_by_id(s, id, &current);

	cJSON_Delete(current);
	return rc;
}

/* The argument of the ops on one schedule: a patch reads every field
 * (enabled < 0, NULL texts and 0 numbers leave a column alone), a delete
 * only ID. */
struct schedule_op {
	long long id;
	int enabled;
	const char *cron;
	long long interval_s;
	const char *job_text;
	long long next_due, now;
	cJSON *out;
};

static int op_schedule_patch(struct store *s, void *arg)
{
	struct schedule_op *a = arg;
	int rc;

	if ((rc = writer_schedule_exists(s, a->id)) < 0)
		return rc;
	if (a->enabled >= 0 && (rc = db_run(s, "UPDATE schedules SET enabled = ? WHERE id = ?", "ii",
					    (long long)a->enabled, a->id)) < 0)
		return rc;
	if (a->cron && (rc = db_run(s, "UPDATE schedules SET cron = ?, interval_s = NULL WHERE id = ?", "ti",
				    a->cron, a->id)) < 0)
		return rc;
	if (!a->cron && a->interval_s > 0 &&
	    (rc = db_run(s, "UPDATE schedules SET cron = NULL, interval_s = ? WHERE id = ?", "ii",
			 a->interval_s, a->id)) < 0)
		return rc;
	if (a->job_text &&
	    (rc = db_run(s, "UPDATE schedules SET job = ? WHERE id = ?", "ti", a->job_text, a->id)) < 0)
		return rc;
	if (a->next_due > 0 &&
	    (rc = db_run(s, "UPDATE schedules SET next_due = ? WHERE id = ?", "ii", a->next_due, a->id)) < 0)
		return rc;
	if ((rc = db_run(s, "UPDATE schedules SET updated_at = ? WHERE id = ?", "ii", a->now, a->id)) < 0)
		return rc;
	return schedule_by_id(s, a->id, &a->out);
}

int store_schedule_patch(struct store *s, long long id, int enabled, const char *cron, long long interval_s,
			 const char *job_text, long long next_due_ms, long long now, cJSON **ret_schedule)
{
	struct schedule_op a = {id, enabled, cron, interval_s, job_text, next_due_ms, now, NULL};

	return db_write_answer(s, op_schedule_patch, &a, &a.out, ret_schedule);
}

struct owner_op {
	long long id;
	const char *owner;
};

static int op_schedule_owner_set(struct store *s, void *arg)
{
	struct owner_op *a = arg;
	int rc;

	if ((rc = writer_schedule_exists(s, a->id)) < 0)
		return rc;
	return db_run(s, "UPDATE schedules SET owner = ? WHERE id = ?", "ti", a->owner, a->id);
}

int store_schedule_owner_set(struct store *s, long long id, const char *owner)
{
	struct owner_op a = {id, owner};

	return db_write(s, op_schedule_owner_set, &a);
}

static int op_schedule_delete(struct store *s, void *arg)
{
	struct schedule_op *a = arg;
	int rc;

	if ((rc = writer_schedule_exists(s, a->id)) < 0)
		return rc;
	/* Kept, marked deleted: an open claim may still name it. */
	if ((rc = db_run(s, "UPDATE schedules SET deleted = 1, enabled = 0 WHERE id = ?", "i", a->id)) < 0)
		return rc;
	a->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(a->out, "id", (double)a->id);
	cJSON_AddBoolToObject(a->out, "deleted", true);
	return 0;
}

int store_schedule_delete(struct store *s, long long id, cJSON **ret_body)
{
	struct schedule_op a = {.id = id};

	return db_write_answer(s, op_schedule_delete, &a, &a.out, ret_body);
}

int store_schedules_due(struct store *s, long long now, long long *ret_ids, int max, int *ret_count)
{
	struct db_stmt st;
	int n = 0, rc;

	db_read_begin(s);
	rc = db_prepare(s,
			"SELECT id FROM schedules WHERE enabled = 1 AND deleted = 0"
			" AND next_due <= ? ORDER BY next_due, id LIMIT ?",
			&st);
	if (rc == 0) {
		db_bind(&st, "ii", now, (long long)max);
		while (n < max && (rc = db_step(&st)) == DB_ROW)
			ret_ids[n++] = db_column_int64(&st, 0);
	}
	db_finish(&st);
	db_read_end(s);
	if (rc < 0)
		return rc;
	*ret_count = n;
	return 0;
}

/* "schedule:ID", the submitter of the jobs a schedule creates. */
static void schedule_submitter(long long id, char *out, size_t size)
{
	snprintf(out, size, "schedule:%lld", id);
}

struct claim_op {
	long long id, now;
	bool manual;
	store_next_due_fn next_due;
	struct store_schedule_claim claim;
};

/* The columns a claim needs, into the claim_op CONTEXT. */
struct claim_row {
	bool enabled;
	long long next_due, interval_s;
	char cron[300];
	char *job_text;
};

static int read_claim_row(void *context, struct db_stmt *row)
{
	struct claim_row *r = context;

	r->enabled = (int)db_column_int64(row, 0) != 0;
	r->next_due = db_column_int64(row, 1);
	snprintf(r->cron, sizeof(r->cron), "%s", db_column_null(row, 2) ? "" : db_column_text(row, 2));
	r->interval_s = db_column_int64(row, 3);
	r->job_text = strdup(db_column_text(row, 4));
	return r->job_text ? 0 : LL_ENOMEM;
}

static int op_schedule_claim(struct store *s, void *arg)
{
	struct claim_op *a = arg;
	struct claim_row r = {0};
	char submitter[48];
	long long active = 0, open_claim = 0, jobs_before = 0, due, next = 0, skipped_run = 0;
	int rc;

	/* The schedule's row is locked on PostgreSQL (FOR UPDATE): another
	 * daemon's claim of the same due time waits, then finds next_due
	 * moved (LL_ESTATE). */
	rc = db_row_by_id(s,
			  db_sql(s,
				 "SELECT enabled, next_due, cron, interval_s, job FROM schedules"
				 " WHERE id = ? AND deleted = 0",
				 "SELECT enabled, next_due, cron, interval_s, job FROM schedules"
				 " WHERE id = ? AND deleted = 0 FOR UPDATE"),
			  a->id, "schedule", read_claim_row, &r);
	if (rc < 0)
		goto done;
	if (!a->manual && (!r.enabled || r.next_due > a->now)) {
		rc = err_set(LL_ESTATE, "Schedule %lld is not due.", a->id);
		goto done;
	}
	due = a->manual ? a->now : r.next_due;
	if (!a->manual) {
		if ((rc = a->next_due(r.cron[0] ? r.cron : NULL, r.interval_s, r.next_due, a->now, &next)) <
		    0)
			goto done;
		if ((rc = db_run(s, "UPDATE schedules SET next_due = ?, last_due = ? WHERE id = ?", "iii",
				 next, due, a->id)) < 0)
			goto done;
	}
	schedule_submitter(a->id, submitter, sizeof(submitter));
	if ((rc = db_int(s, &active, 0,
			 "SELECT id FROM jobs WHERE submitted_by = ? AND state IN ('queued', 'running')"
			 " ORDER BY id LIMIT 1",
			 "t", submitter)) < 0 ||
	    (rc = db_int(s, &open_claim, 0,
			 "SELECT id FROM schedule_runs WHERE schedule_id = ? AND outcome = 'claimed' LIMIT 1",
			 "i", a->id)) < 0 ||
	    (rc = db_int(s, &jobs_before, 0, "SELECT max(id) FROM jobs", "")) < 0)
		goto done;
	a->claim.schedule_id = a->id;
	a->claim.due_ms = due;
	if (active || open_claim) {
		if (active)
			snprintf(a->claim.reason, sizeof(a->claim.reason),
				 "job %lld of the schedule is still queued or running", active);
		else
			snprintf(a->claim.reason, sizeof(a->claim.reason),
				 "a run of the schedule is being created");
		if (a->manual) {
			rc = err_set(LL_ECONFLICT, "Not run: %s.", a->claim.reason);
			goto done;
		}
		a->claim.skipped = true;
		if ((rc = db_int(
			     s, &skipped_run, 0,
			     "INSERT INTO schedule_runs (schedule_id, due, kind, outcome, job_id, "
			     "jobs_before,"
			     " reason, created_at) VALUES (?, ?, 'due', 'skipped', ?, ?, ?, ?) RETURNING id",
			     "iiiiti", a->id, due, active, jobs_before, a->claim.reason, a->now)) < 0 ||
		    (rc = db_run(s,
				 "UPDATE schedules SET skipped = skipped + 1, last_skip_at = ?,"
				 " last_skip_reason = ? WHERE id = ?",
				 "iti", a->now, a->claim.reason, a->id)) < 0)
			goto done;
		a->claim.run_id = skipped_run;
		goto done;
	}
	if ((rc = db_int(
		     s, &a->claim.run_id, 0,
		     "INSERT INTO schedule_runs (schedule_id, due, kind, outcome, jobs_before, created_at)"
		     " VALUES (?, ?, ?, 'claimed', ?, ?) RETURNING id",
		     "iitii", a->id, due, a->manual ? "manual" : "due", jobs_before, a->now)) < 0)
		goto done;
	a->claim.job_text = r.job_text;
	r.job_text = NULL;
done:
	free(r.job_text);
	return rc;
}

int store_schedule_claim(struct store *s, long long id, bool manual, long long now,
			 store_next_due_fn next_due, struct store_schedule_claim *ret_claim)
{
	struct claim_op a = {id, now, manual, next_due, {0}};
	int rc = db_write(s, op_schedule_claim, &a);

	if (rc < 0) {
		free(a.claim.job_text);
		return rc;
	}
	*ret_claim = a.claim;
	return 0;
}

struct run_finish_op {
	long long run_id, job_id;
	const char *error;
};

static int op_run_finish(struct store *s, void *arg)
{
	struct run_finish_op *a = arg;
	int rc;

	if (a->job_id)
		rc = db_run(s, "UPDATE schedule_runs SET outcome = 'created', job_id = ? WHERE id = ?", "ii",
			    a->job_id, a->run_id);
	else
		rc = db_run(s, "UPDATE schedule_runs SET outcome = 'failed', reason = ? WHERE id = ?", "ti",
			    a->error ? a->error : "unknown error", a->run_id);
	if (rc == 0 && a->job_id)
		rc = db_run(s,
			    "UPDATE schedules SET last_job_id = ? WHERE id ="
			    " (SELECT schedule_id FROM schedule_runs WHERE id = ?)",
			    "ii", a->job_id, a->run_id);
	if (rc == 0 && !a->job_id)
		rc = db_run(s,
			    "UPDATE schedules SET last_skip_at = (SELECT created_at FROM"
			    " schedule_runs WHERE id = ?1), last_skip_reason = ?2 WHERE id ="
			    " (SELECT schedule_id FROM schedule_runs WHERE id = ?1)",
			    "it", a->run_id, a->error ? a->error : "unknown error");
	return rc;
}

int store_schedule_run_finish(struct store *s, long long run_id, long long job_id, const char *error,
			      long long now)
{
	struct run_finish_op a = {run_id, job_id, error};

	(void)now;
	return db_write(s, op_run_finish, &a);
}

struct pending_op {
	cJSON *out;
};

static int op_pending(struct store *s, void *arg)
{
	struct pending_op *a = arg;
	struct db_stmt st, *stmt = &st;
	char submitter[48];
	int rc;

	a->out = cJSON_CreateArray();
	if ((rc = db_prepare(s,
			     "SELECT r.id, r.schedule_id, r.due, r.jobs_before, s.job FROM schedule_runs r"
			     " JOIN schedules s ON s.id = r.schedule_id WHERE r.outcome = 'claimed'"
			     " ORDER BY r.id",
			     &st)) < 0)
		return rc;
	while (rc == 0 && db_step(stmt) == DB_ROW) {
		long long run_id = db_column_int64(stmt, 0), schedule_id = db_column_int64(stmt, 1);
		long long job_id = 0;
		schedule_submitter(schedule_id, submitter, sizeof(submitter));
		rc = db_int(s, &job_id, 0, "SELECT min(id) FROM jobs WHERE submitted_by = ? AND id > ?", "ti",
			    submitter, db_column_int64(stmt, 3));
		if (rc == 0 && job_id) {
			struct run_finish_op f = {run_id, job_id, NULL};
			rc = op_run_finish(s, &f);
			db_log_state("schedule_run", "run_id", run_id, "claimed", "created",
				     "job found after a restart");
		} else if (rc == 0) {
			cJSON *run = cJSON_CreateObject();
			cJSON_AddNumberToObject(run, "run_id", (double)run_id);
			cJSON_AddNumberToObject(run, "schedule_id", (double)schedule_id);
			cJSON_AddNumberToObject(run, "due", (double)db_column_int64(stmt, 2));
			cJSON_AddItemToObject(run, "job", db_column_json(stmt, 4));
			cJSON_AddItemToArray(a->out, run);
		}
	}
	return db_finish_read(stmt, rc);
}

int store_schedule_pending(struct store *s, cJSON **ret_runs)
{
	struct pending_op a = {NULL};

	return db_write_answer(s, op_pending, &a, &a.out, ret_runs);
}
