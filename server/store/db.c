/*
 * db.c - the statement layer (db.h) over the driver of the handle's
 * backend (db_driver.h): the calls in one, the row readers and JSON
 * helpers every resource shares.
 */
#include "db.h"

#include "db_args.h"
#include "db_driver.h"
#include "store_backend.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/log.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct db_driver *driver_of(const struct store *s)
{
	return ((const struct store_base *)s)->backend->db;
}

enum db_dialect db_dialect(const struct store *s)
{
	return driver_of(s)->dialect;
}

const char *db_sql(const struct store *s, const char *sqlite, const char *postgresql)
{
	return db_dialect(s) == DB_POSTGRESQL ? postgresql : sqlite;
}

bool db_row_locks(const struct store *s)
{
	return driver_of(s)->row_locks;
}

bool db_single_writer(const struct store *s)
{
	return driver_of(s)->single_writer;
}

/* ------------------------------------------------------ transactions */

int db_write(struct store *s, int (*fn)(struct store *, void *), void *arg)
{
	return driver_of(s)->write(s, fn, arg);
}

int db_write_answer(struct store *s, int (*fn)(struct store *, void *), void *arg, cJSON **out, cJSON **ret)
{
	int rc = db_write(s, fn, arg);

	if (rc < 0) {
		cJSON_Delete(*out);
		*out = NULL;
		return rc;
	}
	*ret = *out;
	*out = NULL;
	return 0;
}

/* This thread's reads: their depth and the first failure of a step since
 * the outermost began (db_step()). */
static __thread int read_depth;
static __thread int read_failed;

/* Begins a read (SNAPSHOT: in a read transaction). */
static void read_begin(struct store *s, bool snapshot)
{
	if (read_depth++ == 0)
		read_failed = 0;
	driver_of(s)->read_begin(s, snapshot);
}

/* Ends a read begun by read_begin(): its first failure, else 0. */
static int read_end(struct store *s, bool snapshot)
{
	int failed = read_failed;

	driver_of(s)->read_end(s, snapshot);
	if (--read_depth == 0)
		read_failed = 0;
	return failed;
}

void db_read_begin(struct store *s)
{
	read_begin(s, false);
}

int db_read_end(struct store *s)
{
	return read_end(s, false);
}

void db_snapshot_begin(struct store *s)
{
	read_begin(s, true);
}

int db_snapshot_end(struct store *s)
{
	return read_end(s, true);
}

int db_before_commit(struct store *s, int (*fn)(struct store *, long long key, long long now), long long key,
		     long long now)
{
	return driver_of(s)->before_commit ? driver_of(s)->before_commit(s, fn, key, now) : fn(s, key, now);
}

int db_tasks_ready(struct store *s)
{
	return driver_of(s)->tasks_ready ? driver_of(s)->tasks_ready(s) : 0;
}

/* Where a call's argument begins: past the backend's struct store_call,
 * aligned for any member. */
static size_t call_arg_offset(const struct db_driver *d)
{
	size_t align = _Alignof(max_align_t);

	return (d->call_size + align - 1) / align * align;
}

int db_call_start(struct store *s, const void *arg, size_t arg_size, size_t out_offset,
		  int (*fn)(struct store *, void *), void (*done)(void *context), void *context,
		  struct store_call **ret_call)
{
	const struct db_driver *d = driver_of(s);
	size_t offset = call_arg_offset(d);
	char *call = calloc(1, offset + arg_size);

	if (!call)
		return err_set(LL_ENOMEM, "Out of memory.");
	memcpy(call + offset, arg, arg_size);
	return d->call_submit(s, (struct store_call *)call, fn, call + offset,
			      (cJSON **)(call + offset + out_offset), done, context, ret_call);
}

void *db_call_arg(struct store_call *call)
{
	return (char *)call + call_arg_offset(driver_of((struct store *)call));
}

int db_call_end(struct store_call *call, cJSON **ret)
{
	return driver_of((struct store *)call)->call_end(call, ret);
}

int db_call_result(const struct store_call *call)
{
	return *(const int *)((const char *)call + driver_of((const struct store *)call)->call_rc_offset);
}

/* -------------------------------------------------------- statements */

int db_prepare(struct store *s, const char *sql, struct db_stmt *ret)
{
	ret->store = s;
	ret->driver = driver_of(s);
	ret->failed = 0;
	ret->native = ret->driver->prepare(s, sql);
	return ret->native ? 0 : LL_ESTORE;
}

struct db_stmt *db_statement(struct store *s, struct db_stmt *buf, const char *sql)
{
	return db_prepare(s, sql, buf) == 0 ? buf : NULL;
}

int db_finish(struct db_stmt *st)
{
	if (!st)
		return 0; /* a failed db_statement(), which said so */
	if (st->native)
		st->driver->release(st->store, st->native);
	st->native = NULL;
	return st->failed;
}

int db_finish_read(struct db_stmt *st, int rc)
{
	int failed = db_finish(st);

	return rc < 0 ? rc : failed;
}

void db_bind_int64(struct db_stmt *st, int i, long long v)
{
	st->driver->stmt->bind_int64(st->native, i, v);
}

void db_bind_double(struct db_stmt *st, int i, double v)
{
	st->driver->stmt->bind_double(st->native, i, v);
}

void db_bind_text(struct db_stmt *st, int i, const char *text)
{
	st->driver->stmt->bind_text(st->native, i, text, -1); /* NULL: a text NULL */
}

void db_bind_text_len(struct db_stmt *st, int i, const char *text, size_t n)
{
	st->driver->stmt->bind_text(st->native, i, text, (int)n);
}

void db_bind_blob(struct db_stmt *st, int i, const void *blob, int n)
{
	st->driver->stmt->bind_blob(st->native, i, blob, n);
}

void db_bind_null(struct db_stmt *st, int i)
{
	st->driver->stmt->bind_null(st->native, i);
}

void db_bind(struct db_stmt *st, const char *types, ...)
{
	va_list ap;

	va_start(ap, types);
	db_args_bind(st->driver->stmt, st->native, types, ap);
	va_end(ap);
}

/* Remembers RC, a step's result, when it is a failure (db_finish(),
 * db_read_end()); returns it. */
static int step_result(struct db_stmt *st, int rc)
{
	if (rc < 0) {
		if (!st->failed)
			st->failed = rc;
		if (read_depth > 0 && !read_failed)
			read_failed = rc;
	}
	return rc;
}

int db_step(struct db_stmt *st)
{
	return step_result(st, st->driver->stmt->step(st->native));
}

void db_reset(struct db_stmt *st)
{
	st->driver->stmt->reset(st->native);
}

bool db_column_null(const struct db_stmt *st, int col)
{
	return st->driver->stmt->column_null(st->native, col);
}

long long db_column_int64(const struct db_stmt *st, int col)
{
	return st->driver->stmt->column_int64(st->native, col);
}

double db_column_double(const struct db_stmt *st, int col)
{
	return st->driver->stmt->column_double(st->native, col);
}

const char *db_column_text(const struct db_stmt *st, int col)
{
	return st->driver->stmt->column_text(st->native, col);
}

const void *db_column_blob(const struct db_stmt *st, int col, int *ret_len)
{
	return st->driver->stmt->column_blob(st->native, col, ret_len);
}

long long db_changes(struct store *s)
{
	return driver_of(s)->changes(s);
}

/* ---------------------------------------------- statements in one call */

/* Runs SQL with the arguments of TYPES; when RET is not NULL, stores the
 * first column of the first row there (DEFAULT_VALUE when there is no row
 * or it is NULL). */
static int run_list(struct store *s, long long *ret, long long default_value, const char *sql,
		    const char *types, va_list ap)
{
	struct db_stmt st;
	int rc;

	if (!sql) /* nothing to run in this dialect */
		return 0;
	if ((rc = db_prepare(s, sql, &st)) < 0)
		return rc;
	rc = step_result(&st, db_args_int(st.driver->stmt, st.native, ret, default_value, types, ap));
	db_finish(&st);
	return rc < 0 ? rc : 0;
}

int db_run(struct store *s, const char *sql, const char *types, ...)
{
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = run_list(s, NULL, 0, sql, types, ap);
	va_end(ap);
	return rc;
}

int db_int(struct store *s, long long *ret, long long default_value, const char *sql, const char *types, ...)
{
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = run_list(s, ret, default_value, sql, types, ap);
	va_end(ap);
	return rc;
}

int db_row_by_id(struct store *s, const char *sql, long long id, const char *what,
		 int (*read)(void *context, struct db_stmt *row), void *context)
{
	struct db_stmt st;
	int rc, step;

	if ((rc = db_prepare(s, sql, &st)) < 0)
		return rc;
	db_bind_int64(&st, 1, id);
	step = db_step(&st);
	if (step == DB_ROW)
		rc = read(context, &st);
	else if (step < 0)
		rc = step;
	else if (what)
		rc = err_set(LL_ENOTFOUND, "No %s has id %lld.", what, id);
	else
		rc = LL_ENOTFOUND;
	db_finish(&st);
	return rc;
}

int db_row_read(struct store *s, const char *sql, long long id, const char *what,
		int (*read)(void *context, struct db_stmt *row), void *context)
{
	int rc;

	db_read_begin(s);
	rc = db_row_by_id(s, sql, id, what, read, context);
	db_read_end(s);
	return rc;
}

int db_read_rows(struct store *s, const char *sql, void (*add)(void *context, struct db_stmt *row),
		 void *context, const char *types, ...)
{
	struct db_stmt st;
	va_list ap;
	int rc;

	db_read_begin(s);
	rc = db_prepare(s, sql, &st);
	if (rc == 0) {
		va_start(ap, types);
		db_args_bind(st.driver->stmt, st.native, types, ap);
		va_end(ap);
		while ((rc = db_step(&st)) == DB_ROW)
			add(context, &st);
	}
	db_finish(&st);
	db_read_end(s);
	return rc < 0 ? rc : 0;
}

int db_read_each(struct store *s, const char *sql, void (*add)(void *context, struct db_stmt *row),
		 void *context)
{
	return db_read_rows(s, sql, add, context, "");
}

/* --------------------------------------------------- JSON from columns */

cJSON *db_column_json(const struct db_stmt *row, int col)
{
	const char *text = db_column_text(row, col);
	cJSON *v = text ? cJSON_Parse(text) : NULL;

	return v ? v : cJSON_CreateObject();
}

void db_add_time(cJSON *obj, const char *key, const struct db_stmt *row, int col)
{
	if (db_column_null(row, col))
		cJSON_AddNullToObject(obj, key);
	else
		db_add_time_value(obj, key, db_column_int64(row, col));
}

void db_add_time_value(cJSON *obj, const char *key, long long ms)
{
	char text[32];

	cJSON_AddStringToObject(obj, key, clock_format_rfc3339(ms, text));
}

void db_add_text_or_null(cJSON *obj, const char *key, const struct db_stmt *row, int col)
{
	if (db_column_null(row, col))
		cJSON_AddNullToObject(obj, key);
	else
		cJSON_AddStringToObject(obj, key, db_column_text(row, col));
}

void db_add_int_or_null(cJSON *obj, const char *key, const struct db_stmt *row, int col)
{
	if (db_column_null(row, col))
		cJSON_AddNullToObject(obj, key);
	else
		cJSON_AddNumberToObject(obj, key, (double)db_column_int64(row, col));
}

void db_add_columns(cJSON *obj, const struct db_stmt *row, int first, const struct column *columns)
{
	for (int i = 0; columns[i].key; i++) {
		const char *key = columns[i].key;
		int col = first + i;
		switch (columns[i].kind) {
		case COLUMN_INT:
			cJSON_AddNumberToObject(obj, key, (double)db_column_int64(row, col));
			break;
		case COLUMN_TEXT:
			cJSON_AddStringToObject(obj, key, db_column_text(row, col));
			break;
		case COLUMN_TEXT_OR_NULL:
			db_add_text_or_null(obj, key, row, col);
			break;
		case COLUMN_INT_OR_NULL:
			db_add_int_or_null(obj, key, row, col);
			break;
		case COLUMN_TIME:
			db_add_time(obj, key, row, col);
			break;
		}
	}
}

int db_answer(int rc, cJSON *out, cJSON **ret)
{
	if (rc < 0) {
		cJSON_Delete(out);
		return rc;
	}
	*ret = out;
	return 0;
}

void db_log_state(const char *event, const char *id_key, long long id, const char *from, const char *to,
		  const char *reason)
{
	char text[24];

	snprintf(text, sizeof(text), "%lld", id);
	log_event(LOG_INFO, event, id_key, text, "from", from, "to", to, reason ? "reason" : NULL, reason,
		  NULL);
}
