/*
 * store_series.c - the series and regression alerts (store.h, "series,
 * schedules, regression alerts"), on every driver (db.h); the webhook
 * deliveries' queue is each driver's (store_webhooks.h). A job's series and revision are
 * the generated columns jobs.series and jobs.revision (from its spec).
 */
#include "db.h"
#include "store.h"
#include "store_webhooks.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs FN(S, CONTEXT) inside one read transaction. */
static int with_reader(struct store *s, int (*fn)(struct store *s, void *context), void *context)
{
	int rc, failed;

	db_snapshot_begin(s);
	rc = fn(s, context);
	failed = db_snapshot_end(s); /* a step failed that FN did not see */
	return rc < 0 ? rc : failed;
}

static void settings_defaults(struct store_series_settings *st)
{
	st->threshold_pct = STORE_SERIES_DEFAULT_THRESHOLD_PCT;
	st->retain_days = st->retain_points = 0;
	st->webhook_url[0] = '\0';
	st->owner[0] = '\0';
}

/* The owner of series NAME with no owner stored (store.h): its first
 * job's submitter, or that job's schedule's creator. */
static void first_submitter(struct store *s, const char *name, struct store_series_settings *st)
{
	struct db_stmt stmt_buf,
		*stmt = db_statement(s, &stmt_buf,
				     "SELECT coalesce((SELECT created_by FROM schedules WHERE 'schedule:' || "
				     "id = j.submitted_by),"
				     " j.submitted_by) FROM jobs j WHERE j.series = ? ORDER BY j.id LIMIT 1");

	if (!stmt)
		return;
	db_bind_text(stmt, 1, name);
	if (db_step(stmt) == DB_ROW && !db_column_null(stmt, 0))
		snprintf(st->owner, sizeof(st->owner), "%s", db_column_text(stmt, 0));
	db_finish(stmt);
}

static int settings_read(struct store *s, const char *name, struct store_series_settings *st)
{
	struct db_stmt stmt_buf, *stmt = db_statement(s, &stmt_buf,
						      "SELECT threshold_pct, webhook_url, owner, "
						      "retain_days, retain_points FROM series_settings"
						      " WHERE name = ?");
	int rc;

	settings_defaults(st);
	if (!stmt)
		return LL_ESTORE;
	db_bind_text(stmt, 1, name);
	if (db_step(stmt) == DB_ROW) {
		st->threshold_pct = db_column_double(stmt, 0);
		if (!db_column_null(stmt, 1))
			snprintf(st->webhook_url, sizeof(st->webhook_url), "%s", db_column_text(stmt, 1));
		if (!db_column_null(stmt, 2))
			snprintf(st->owner, sizeof(st->owner), "%s", db_column_text(stmt, 2));
		st->retain_days = db_column_int64(stmt, 3);
		st->retain_points = db_column_int64(stmt, 4);
	}
	if ((rc = db_finish(stmt)) < 0)
		return rc;
	if (!st->owner[0])
		first_submitter(s, name, st);
	return 0;
}

static void add_settings(cJSON *o, const struct store_series_settings *st)
{
	cJSON_AddNumberToObject(o, "threshold_pct", st->threshold_pct);
	if (st->webhook_url[0])
		cJSON_AddStringToObject(o, "webhook_url", st->webhook_url);
	else
		cJSON_AddNullToObject(o, "webhook_url");
	if (st->owner[0])
		cJSON_AddStringToObject(o, "owner", st->owner);
	else
		cJSON_AddNullToObject(o, "owner");
	cJSON_AddNumberToObject(o, "retain_days", (double)st->retain_days);
	cJSON_AddNumberToObject(o, "retain_points", (double)st->retain_points);
}

/* A series' jobs (series_jobs()) and its last job (series_list()). */
static const struct column series_job_columns[] = {
	{"id", COLUMN_INT},          {"name", COLUMN_TEXT},
	{"state", COLUMN_TEXT},      {"revision", COLUMN_TEXT_OR_NULL},
	{"created_at", COLUMN_TIME}, {NULL, 0},
};
static const struct column last_job_columns[] = {
	{"id", COLUMN_INT},
	{"state", COLUMN_TEXT},
	{"revision", COLUMN_TEXT_OR_NULL},
	{"created_at", COLUMN_TIME},
	{NULL, 0},
};

static int series_list(struct store *s, void *context)
{
	cJSON *list = context;
	struct db_stmt stmt_buf, last_buf, *stmt, *last;
	int rc = 0;

	stmt = db_statement(s, &stmt_buf,
			    "SELECT series, count(*), max(id) FROM jobs WHERE series IS NOT NULL"
			    " GROUP BY series ORDER BY series");
	last = db_statement(s, &last_buf, "SELECT id, state, revision, created_at FROM jobs WHERE id = ?");
	if (!stmt || !last)
		rc = LL_ESTORE;
	while (rc == 0 && db_step(stmt) == DB_ROW) {
		struct store_series_settings st;
		cJSON *o = cJSON_CreateObject();
		const char *name = db_column_text(stmt, 0);
		cJSON_AddStringToObject(o, "name", name);
		cJSON_AddNumberToObject(o, "jobs", (double)db_column_int64(stmt, 1));
		db_reset(last);
		db_bind_int64(last, 1, db_column_int64(stmt, 2));
		if (db_step(last) == DB_ROW)
			db_add_columns(cJSON_AddObjectToObject(o, "last_job"), last, 0, last_job_columns);
		rc = settings_read(s, name, &st);
		add_settings(o, &st);
		cJSON_AddItemToArray(list, o);
	}
	rc = db_finish_read(last, rc);
	return db_finish_read(stmt, rc);
}

int store_series_list(struct store *s, cJSON **ret_list)
{
	cJSON *out = cJSON_CreateObject();
	int rc = with_reader(s, series_list, cJSON_AddArrayToObject(out, "series"));

	return db_answer(rc, out, ret_list);
}

struct series_jobs_read {
	const char *name;
	long long since;
	cJSON *jobs;
};

static int series_jobs(struct store *s, void *context)
{
	struct series_jobs_read *r = context;
	struct db_stmt stmt_buf, *stmt = db_statement(s, &stmt_buf,
						      "SELECT id, name, state, revision, created_at FROM jobs"
						      " WHERE series = ? AND created_at >= ? ORDER BY id");

	if (!stmt)
		return LL_ESTORE;
	db_bind_text(stmt, 1, r->name);
	db_bind_int64(stmt, 2, r->since);
	while (db_step(stmt) == DB_ROW) {
		cJSON *j = cJSON_CreateObject();
		db_add_columns(j, stmt, 0, series_job_columns);
		cJSON_AddItemToArray(r->jobs, j);
	}
	return db_finish(stmt);
}

int store_series_jobs(struct store *s, const char *name, long long since_ms, cJSON **ret_jobs)
{
	struct series_jobs_read r = {name, since_ms, cJSON_CreateArray()};
	int rc = with_reader(s, series_jobs, &r);

	if (rc < 0) {
		cJSON_Delete(r.jobs);
		return rc;
	}
	*ret_jobs = r.jobs;
	return 0;
}

int store_series_settings_get(struct store *s, const char *name, struct store_series_settings *ret)
{
	struct store_series_settings st;
	int rc, failed;

	db_read_begin(s);
	rc = settings_read(s, name, &st);
	failed = db_read_end(s);
	if (rc == 0)
		rc = failed;
	if (rc == 0)
		*ret = st;
	return rc;
}

struct settings_put_op {
	const char *name;
	const struct store_series_settings *settings;
	long long now;
};

static int op_settings_put(struct store *s, void *arg)
{
	struct settings_put_op *a = arg;
	struct db_stmt stmt_buf,
		*stmt = db_statement(
			s, &stmt_buf,
			"INSERT INTO series_settings (name, threshold_pct, webhook_url, updated_at, owner,"
			" retain_days, retain_points) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
			" ON CONFLICT (name) DO UPDATE SET threshold_pct = ?2, webhook_url = ?3,"
			" updated_at = ?4, owner = ?5, retain_days = ?6, retain_points = ?7");
	int rc;

	if (!stmt)
		return LL_ESTORE;
	db_bind_text(stmt, 1, a->name);
	db_bind_double(stmt, 2, a->settings->threshold_pct);
	if (a->settings->webhook_url[0])
		db_bind_text(stmt, 3, a->settings->webhook_url);
	db_bind_int64(stmt, 4, a->now);
	if (a->settings->owner[0])
		db_bind_text(stmt, 5, a->settings->owner);
	db_bind_int64(stmt, 6, a->settings->retain_days);
	db_bind_int64(stmt, 7, a->settings->retain_points);
	rc = db_step(stmt);
	rc = rc < 0 ? rc : 0;
	db_finish(stmt);
	return rc;
}

int store_series_settings_put(struct store *s, const char *name, const struct store_series_settings *settings,
			      long long now, cJSON **ret_body)
{
	struct settings_put_op a = {name, settings, now};
	int rc = db_write(s, op_settings_put, &a);
	cJSON *out;

	if (rc < 0)
		return rc;
	out = cJSON_CreateObject();
	cJSON_AddStringToObject(out, "name", name);
	add_settings(out, settings);
	*ret_body = out;
	return 0;
}

/* ------------------------------------------------------------ alerts */

static void add_unchecked(void *context, struct db_stmt *row)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddNumberToObject(j, "id", (double)db_column_int64(row, 0));
	cJSON_AddStringToObject(j, "series", db_column_text(row, 1));
	cJSON_AddStringToObject(j, "state", db_column_text(row, 2));
	cJSON_AddItemToArray(context, j);
}

int store_series_unchecked(struct store *s, int limit, cJSON **ret_jobs)
{
	cJSON *jobs = cJSON_CreateArray();
	char sql[300];
	int rc;

	snprintf(sql, sizeof(sql),
		 "SELECT id, series, state FROM jobs WHERE series IS NOT NULL"
		 " AND state IN ('done', 'failed', 'cancelled')"
		 " AND id NOT IN (SELECT job_id FROM series_checks) ORDER BY id LIMIT %d",
		 limit);
	if ((rc = db_read_each(s, sql, add_unchecked, jobs)) < 0) {
		cJSON_Delete(jobs);
		return rc;
	}
	*ret_jobs = jobs;
	return 0;
}

int store_series_previous_done(struct store *s, const char *series, long long job_id, long long *ret_job_id)
{
	long long id = 0;
	int rc;

	db_read_begin(s);
	rc = db_int(s, &id, 0, "SELECT max(id) FROM jobs WHERE series = ? AND state = 'done' AND id < ?",
		    "ti", series, job_id);
	db_read_end(s);
	if (rc < 0)
		return rc;
	if (!id)
		return err_set(LL_ENOTFOUND, "Series '%s' has no done job before job %lld.", series, job_id);
	*ret_job_id = id;
	return 0;
}

struct check_op {
	long long job_id;
	const char *series;
	long long baseline_id;
	const char *verdict;
	const cJSON *alert;
	long long now;
	long long alert_id;
};

/* Queues the webhook of alert ID (store.h, store_series_check_record()). */
static int queue_delivery(struct store *s, long long id, const char *series, long long now)
{
	long long hooked = 0, pending = 0;
	int rc;

	if ((rc = db_int(s, &hooked, 0,
			 "SELECT count(*) FROM series_settings WHERE name = ? AND webhook_url IS NOT NULL",
			 "t", series)) < 0 ||
	    !hooked)
		return rc;
	if ((rc = db_int(s, &pending, 0, "SELECT count(*) FROM alerts WHERE webhook_due IS NOT NULL", "")) <
	    0)
		return rc;
	if (pending >= STORE_WEBHOOK_PENDING_MAX)
		return db_run(s,
			      "UPDATE alerts SET webhook = 'failed: the delivery queue is full' WHERE id = ?",
			      "i", id);
	return db_run(s, "UPDATE alerts SET webhook = 'pending', webhook_due = ? WHERE id = ?", "ii", now,
		      id);
}

static int op_check_record(struct store *s, void *arg)
{
	struct check_op *a = arg;
	long long inserted = 0, alert_job = a->job_id, alert_baseline = a->baseline_id;
	char *rows;
	int rc;

	/* ON CONFLICT: another daemon checking the same job waits for
	 * this one's commit, then inserts nothing. */
	if ((rc = db_int(s, &inserted, 0,
			 "INSERT INTO series_checks (job_id, series, baseline_id, verdict, checked_at)"
			 " VALUES (?, ?, ?, ?, ?) ON CONFLICT (job_id) DO NOTHING RETURNING 1",
			 "ititi", a->job_id, a->series, a->baseline_id, a->verdict, a->now)) < 0)
		return rc;
	if (!inserted)
		return 0; /* checked already: never a second alert */
	if (a->baseline_id == 0)
		db_run(s, "UPDATE series_checks SET baseline_id = NULL WHERE job_id = ?", "i", a->job_id);
	if (!a->alert)
		return 0;
	if (!(rows = json_print(cJSON_GetObjectItemCaseSensitive(a->alert, "rows"))))
		return LL_ENOMEM;
	/* an alert from a change point names the jobs around the change */
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(a->alert, "job_id")))
		alert_job =
			(long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(a->alert, "job_id"));
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(a->alert, "baseline_id")))
		alert_baseline = (long long)cJSON_GetNumberValue(
			cJSON_GetObjectItemCaseSensitive(a->alert, "baseline_id"));
	rc = db_int(s, &a->alert_id, 0,
		    "INSERT INTO alerts (series, job_id, baseline_id, threshold_pct,"
		    " worst_change_pct, rows, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
		    "tiiddti", a->series, alert_job, alert_baseline,
		    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(a->alert, "threshold_pct")),
		    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(a->alert, "worst_change_pct")),
		    rows, a->now);
	free(rows);
	if (rc == 0) {
		db_log_state("alert", "alert_id", a->alert_id, "", "open", a->series);
		rc = queue_delivery(s, a->alert_id, a->series, a->now);
	}
	return rc;
}

int store_series_check_record(struct store *s, long long job_id, const char *series, long long baseline_id,
			      const char *verdict, const cJSON *alert, long long now, long long *ret_alert_id)
{
	struct check_op a = {job_id, series, baseline_id, verdict, alert, now, 0};
	int rc = db_write(s, op_check_record, &a);

	if (rc == 0)
		*ret_alert_id = a.alert_id;
	return rc;
}

#define ALERT_COLUMNS                                                                         \
	"id, series, job_id, baseline_id, threshold_pct, worst_change_pct, rows, created_at," \
	" acked_at, acked_by, webhook"

static cJSON *alert_from_row(struct db_stmt *row)
{
	cJSON *o = cJSON_CreateObject(), *rows = NULL;
	const char *text = db_column_text(row, 6);

	cJSON_AddNumberToObject(o, "id", (double)db_column_int64(row, 0));
	cJSON_AddStringToObject(o, "series", db_column_text(row, 1));
	cJSON_AddNumberToObject(o, "job_id", (double)db_column_int64(row, 2));
	cJSON_AddNumberToObject(o, "baseline_id", (double)db_column_int64(row, 3));
	cJSON_AddNumberToObject(o, "threshold_pct", db_column_double(row, 4));
	if (db_column_null(row, 5))
		cJSON_AddNullToObject(o, "worst_change_pct");
	else
		cJSON_AddNumberToObject(o, "worst_change_pct", db_column_double(row, 5));
	rows = text ? cJSON_Parse(text) : NULL;
	cJSON_AddItemToObject(o, "rows",
			      cJSON_IsArray(rows) ? rows : (cJSON_Delete(rows), cJSON_CreateArray()));
	db_add_time(o, "created_at", row, 7);
	db_add_time(o, "acked_at", row, 8);
	db_add_text_or_null(o, "acked_by", row, 9);
	db_add_text_or_null(o, "webhook", row, 10);
	return o;
}

static void add_alert(void *context, struct db_stmt *row)
{
	cJSON_AddItemToArray(context, alert_from_row(row));
}

int store_alert_list(struct store *s, bool open_only, cJSON **ret_list)
{
	cJSON *out = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(out, "alerts");
	int rc = db_read_each(s,
			      open_only ? "SELECT " ALERT_COLUMNS " FROM alerts WHERE acked_at IS NULL"
					  " ORDER BY id DESC LIMIT 500"
					: "SELECT " ALERT_COLUMNS " FROM alerts ORDER BY id DESC LIMIT 500",
			      add_alert, list);

	return db_answer(rc, out, ret_list);
}

static int read_alert(void *context, struct db_stmt *row)
{
	*(cJSON **)context = alert_from_row(row);
	return 0;
}

int store_alert_get(struct store *s, long long id, cJSON **ret_alert)
{
	int rc;

	db_read_begin(s);
	rc = db_row_by_id(s, "SELECT " ALERT_COLUMNS " FROM alerts WHERE id = ?", id, "alert", read_alert,
			  ret_alert);
	db_read_end(s);
	return rc;
}

struct ack_op {
	long long id;
	const char *by;
	long long now;
	cJSON *out;
};

static int op_alert_ack(struct store *s, void *arg)
{
	struct ack_op *a = arg;
	long long acked = 0;
	int rc;

	if ((rc = db_row_by_id(s, "SELECT " ALERT_COLUMNS " FROM alerts WHERE id = ?", a->id, "alert",
			       read_alert, &a->out)) < 0)
		return rc;
	acked = !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(a->out, "acked_at"));
	cJSON_Delete(a->out);
	a->out = NULL;
	if (acked)
		return err_set(LL_ECONFLICT, "Alert %lld is already acknowledged.", a->id);
	if ((rc = db_run(s, "UPDATE alerts SET acked_at = ?, acked_by = ? WHERE id = ?", "iti", a->now, a->by,
			 a->id)) < 0)
		return rc;
	db_log_state("alert", "alert_id", a->id, "open", "acknowledged", a->by);
	return db_row_by_id(s, "SELECT " ALERT_COLUMNS " FROM alerts WHERE id = ?", a->id, "alert",
			    read_alert, &a->out);
}

int store_alert_ack(struct store *s, long long id, const char *by, long long now, cJSON **ret_alert)
{
	struct ack_op a = {id, by, now, NULL};

	return db_write_answer(s, op_alert_ack, &a, &a.out, ret_alert);
}

/* -------------------------------------- webhook deliveries (store_webhooks.h) */

struct webhook_op {
	long long id;
	const char *status;
	long long retry_at;
};

static int op_webhook_status(struct store *s, void *arg)
{
	struct webhook_op *a = arg;

	if (a->retry_at)
		return db_run(s,
			      "UPDATE alerts SET webhook = ?, webhook_due = ?,"
			      " webhook_attempts = webhook_attempts + 1 WHERE id = ?",
			      "tii", a->status, a->retry_at, a->id);
	return db_run(s,
		      "UPDATE alerts SET webhook = ?, webhook_due = NULL,"
		      " webhook_attempts = webhook_attempts + 1 WHERE id = ?",
		      "ti", a->status, a->id);
}

int webhook_status_write(struct store *s, long long id, const char *status, long long retry_at_ms)
{
	struct webhook_op a = {id, status, retry_at_ms};

	return db_write(s, op_webhook_status, &a);
}

void webhook_due_add(void *due, struct db_stmt *row)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "alert_id", (double)db_column_int64(row, 0));
	cJSON_AddStringToObject(o, "series", db_column_text(row, 1));
	cJSON_AddNumberToObject(o, "attempts", (double)db_column_int64(row, 2));
	cJSON_AddItemToArray(due, o);
}
