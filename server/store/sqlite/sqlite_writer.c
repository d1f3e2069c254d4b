/*
 * sqlite_writer.c - the SQLite backend (store_backend.h): opening, the
 * writer and syncer threads, and stats (the schema's versions:
 * sqlite_migrate.c). The resources are
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
 * included, stay prepared (sq_cached()). An op that fails is rolled back
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
		if ((op->rc = sq_exec_cached(s->writer, "SAVEPOINT op")) < 0) {
			snprintf(op->message, sizeof(op->message), "%s", err_message(op->rc));
			continue;
		}
		op->rc = op->fn(s, op->arg);
		/* An op that met a full disk in a statement of its own. */
		if (op->rc == LL_ESTORE && sq_disk_full(s->writer))
			op->rc = err_set(LL_ENOSPACE, STORE_FULL_MESSAGE);
		if (op->rc < 0) {
			snprintf(op->message, sizeof(op->message), "%s", err_message(op->rc));
			sq_exec_cached(s->writer, "ROLLBACK TO op");
			store_cache_agent_touches_forget(s->base.cache); /* the op's touch may be undone */
		}
		sq_exec_cached(s->writer, "RELEASE op");
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

		rc = sq_exec_cached(s->writer, "BEGIN IMMEDIATE");
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
		if (rc == 0 && (rc = sq_exec_cached(s->writer, "COMMIT")) < 0) {
			/* A full disk (SQLITE_FULL) refuses the batch's writes
			 * as storage_full (REST 507): nothing of them stays. */
			bool full = rc == LL_ENOSPACE;
			sq_exec_cached(s->writer, "ROLLBACK");
			store_cache_lease_jobs_forget(s->base.cache);
			store_cache_agent_touches_forget(s->base.cache);
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

/* ------------------------------------------------------------ open, close */

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
	if (sqlite_refuse_newer(db) < 0) {
		sqlite3_close(db);
		return LL_ESTORE; /* its message is set */
	}
	/* A new store is made compactable (sqlite_auto_vacuum.c) before its
	 * first page is written, which journal_mode=WAL does; on an existing
	 * one this changes nothing. */
	if (sq_exec(db, "PRAGMA auto_vacuum=INCREMENTAL") < 0 || sq_exec(db, "PRAGMA journal_mode=WAL") < 0 ||
	    sq_exec(db, "PRAGMA synchronous=FULL") < 0 || sq_exec(db, "PRAGMA foreign_keys=ON") < 0) {
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

	if (sq_exec(s->writer, "PRAGMA synchronous=NORMAL") < 0 ||
	    sq_exec(s->writer, "PRAGMA wal_autocheckpoint=" STORE_CHECKPOINT_PAGES_TEXT) < 0 ||
	    sqlite3_file_control(s->writer, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK ||
	    !wal || !wal->pMethods || wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL) != SQLITE_OK)
		return err_set(LL_ESTORE, "Cannot sync the store's write-ahead log.");
	s->wal = wal;
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
	pthread_cond_init(&s->sync_cond, NULL);
	if ((rc = open_connection(path, &s->writer)) < 0 || (rc = sqlite_migrate(s->writer)) < 0 ||
	    (rc = compaction_prepare(s->writer)) < 0 || (rc = open_connection(path, &s->reader)) < 0 ||
	    (rc = open_wal_sync(s)) < 0)
		goto fail;
	sq_cache_attach(s->writer);
	sq_cache_attach(s->reader);
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
	sq_cache_detach(s->reader);
	sq_cache_detach(s->writer);
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
	sq_cache_detach(s->reader);
	sq_cache_detach(s->writer);
	sqlite3_close(s->reader);
	sqlite3_close(s->writer);
	pthread_mutex_destroy(&s->reader_lock);
	pthread_mutex_destroy(&s->queue_lock);
	pthread_cond_destroy(&s->queue_cond);
	pthread_cond_destroy(&s->sync_cond);
	free(s);
}

int sqlite_integrity_check(struct store *s)
{
	sqlite3_stmt *stmt;
	int rc = LL_ESTORE;

	pthread_mutex_lock(&s->reader_lock);
	stmt = sq_prepare(s->reader, "PRAGMA integrity_check");
	if (stmt && sqlite3_step(stmt) == SQLITE_ROW &&
	    strcmp((const char *)sqlite3_column_text(stmt, 0), "ok") == 0)
		rc = 0;
	sqlite3_finalize(stmt);
	pthread_mutex_unlock(&s->reader_lock);
	return rc;
}

/* ----------------------------------------------------------------- metrics */

int sqlite_stats(struct store *s, struct store_stats *st)
{
	long long pages = 0, free_pages = 0, page_size = 0;
	int rc;

	pthread_mutex_lock(&s->reader_lock);
	if ((rc = sq_int(s->reader, &pages, 0, "PRAGMA page_count", "")) == 0 &&
	    (rc = sq_int(s->reader, &free_pages, 0, "PRAGMA freelist_count", "")) == 0 &&
	    (rc = sq_int(s->reader, &page_size, 0, "PRAGMA page_size", "")) == 0) {
		st->store_bytes = pages * page_size;
		st->store_free_bytes = free_pages * page_size;
	}
	pthread_mutex_unlock(&s->reader_lock);
	pthread_mutex_lock(&s->queue_lock);
	st->commits = s->commits;
	st->committed_ops = s->committed_ops;
	st->syncs = s->syncs;
	pthread_mutex_unlock(&s->queue_lock);
	return rc < 0 ? rc : 0;
}
