/*
 * pg_write.c - the PostgreSQL backend's writes (pg_int.h): each op in a
 * transaction of its own on a connection of the pool, run again after a
 * deadlock or serialization failure; and the calls of store_async.h,
 * queued for the writer threads, which run several in one transaction
 * (struct pg_writer).
 */
#include "pg_int.h"

#include "loadlab/err.h"

#include <pthread.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the failed write may run again: a deadlock or a serialization
 * failure, which another transaction caused. */
static bool retryable(void)
{
	const char *state = pgq_last_sqlstate();

	return strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0;
}

/* BEGIN on CONN: the write's transaction, in pipeline mode
 * (pg_pipeline.c). */
static int begin(PGconn *conn)
{
	int rc = pq_pipeline_begin(conn);

	if (rc < 0 && pq_pipelined(conn))
		pq_pipeline_abort(conn);
	return rc;
}

/* Whether the write on CONN may still commit: no statement of it failed
 * (an op may have gone on after one). */
static bool write_ok(PGconn *conn)
{
	return pq_pipelined(conn) ? !pq_pipeline_failed() : PQtransactionStatus(conn) == PQTRANS_INTRANS;
}

/* ------------------------------------------- work before the commit */

/* What a write deferred to its commit (pq_before_commit()), this
 * thread's: at most PG_BEFORE_COMMIT_MAX distinct (fn, key); beyond, FN
 * runs at once (still correct, only in the caller's order). */
#define PG_BEFORE_COMMIT_MAX 256

struct deferred {
	int (*fn)(struct store *, long long key, long long now);
	long long key, now;
};

static __thread struct deferred tls_deferred[PG_BEFORE_COMMIT_MAX];
static __thread int tls_deferred_count;

int pq_before_commit(struct store *s, int (*fn)(struct store *, long long key, long long now), long long key,
		     long long now)
{
	if (!pq_writer())
		return fn(s, key, now);
	for (int i = 0; i < tls_deferred_count; i++)
		if (tls_deferred[i].fn == fn && tls_deferred[i].key == key) {
			if (now > tls_deferred[i].now)
				tls_deferred[i].now = now;
			return 0;
		}
	if (tls_deferred_count >= PG_BEFORE_COMMIT_MAX)
		return fn(s, key, now);
	tls_deferred[tls_deferred_count++] = (struct deferred){fn, key, now};
	return 0;
}

static int deferred_order(const void *a, const void *b)
{
	const struct deferred *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->fn == y->fn ? 0 : (uintptr_t)x->fn < (uintptr_t)y->fn ? -1 : 1;
}

/* Runs what the write deferred (in key order) and forgets it; with RUN
 * false (the write failed) only forgets it. */
static int run_deferred(struct store *s, bool run)
{
	int rc = 0;

	if (run)
		qsort(tls_deferred, (size_t)tls_deferred_count, sizeof(tls_deferred[0]), deferred_order);
	for (int i = 0; run && i < tls_deferred_count && rc >= 0; i++)
		rc = tls_deferred[i].fn(s, tls_deferred[i].key, tls_deferred[i].now);
	tls_deferred_count = 0;
	return rc;
}

/* One try of pq_write(). */
static int write_once(struct store *s, int (*fn)(struct store *, void *), void *arg)
{
	PGconn *conn = pg_pool_take(&s->pool);
	int rc;

	if (!conn)
		return LL_ESTORE;
	if ((rc = begin(conn)) < 0) {
		pg_pool_give(&s->pool, conn, true);
		return rc;
	}
	pq_writer_set(conn);
	err_clear();
	rc = fn(s, arg);
	rc = run_deferred(s, rc >= 0) < 0 ? LL_ESTORE : rc;
	pq_writer_set(NULL);
	if (rc >= 0 && !write_ok(conn))
		rc = err_set(LL_ESTORE, "The store failed.");
	if (rc >= 0 && pq_exec(conn, "COMMIT") < 0)
		rc = LL_ESTORE;
	if (rc < 0) {
		char message[256];
		snprintf(message, sizeof(message), "%s", err_message(rc));
		pq_exec(conn, "ROLLBACK");
		store_cache_agent_touches_forget(s->base.cache); /* the op's touch may be undone */
		store_cache_lease_jobs_forget(s->base.cache);
		err_set(rc, "%s", message);
	} else {
		pthread_mutex_lock(&s->shared_lock);
		s->commits++;
		s->committed_ops++;
		pthread_mutex_unlock(&s->shared_lock);
	}
	pg_pool_give(&s->pool, conn, false);
	return rc;
}

int pq_write(struct store *s, int (*fn)(struct store *, void *), void *arg)
{
	int rc = 0;

	for (int attempt = 0; attempt <= PG_WRITE_RETRIES; attempt++) {
		pgq_clear_sqlstate();
		rc = write_once(s, fn, arg);
		if (rc >= 0 || !retryable())
			break;
	}
	return rc;
}

/* ---------------------------------------------------------- the writer */

/* Forgets what the caches learnt from writes that were undone. */
static void caches_forget(struct store *s)
{
	store_cache_agent_touches_forget(s->base.cache); /* an op's touch may be undone */
	store_cache_lease_jobs_forget(s->base.cache);
}

/* Notes that CALL failed with RC (the message of this thread's error). */
static void call_failed(struct store_call *call, int rc)
{
	call->op.rc = rc;
	snprintf(call->op.message, sizeof(call->op.message), "%s", err_message(rc));
	cJSON_Delete(*call->out);
	*call->out = NULL;
}

/* Runs CALLS (COUNT of them) in one transaction on CONN and commits it:
 * 0 when it committed (each call's op.rc set), else negative, with every
 * change undone. No savepoints (two round trips a call): a batch where
 * one call fails is rolled back whole, and its calls run again alone
 * (write_calls()). */
static int run_batch(struct store *s, PGconn *conn, struct store_call **calls, int count)
{
	int rc;

	if ((rc = begin(conn)) < 0)
		return rc;
	pq_writer_set(conn);
	for (int i = 0; i < count && rc >= 0; i++) {
		err_clear();
		rc = calls[i]->fn(s, calls[i]->arg);
		if (rc >= 0 && !write_ok(conn))
			rc = err_set(LL_ESTORE, "The store failed.");
		calls[i]->op.rc = rc;
	}
	if (run_deferred(s, rc >= 0) < 0)
		rc = LL_ESTORE;
	pq_writer_set(NULL);
	if (rc >= 0 && (rc = pq_exec(conn, "COMMIT")) == 0) {
		pthread_mutex_lock(&s->shared_lock);
		s->commits++;
		s->committed_ops += count;
		pthread_mutex_unlock(&s->shared_lock);
		return 0;
	}
	pq_exec(conn, "ROLLBACK");
	caches_forget(s);
	return rc < 0 ? rc : LL_ESTORE;
}

/* Runs CALLS and calls their DONE: one transaction for all; when it
 * failed (a call failed, a deadlock with another daemon, the commit), each
 * call again in a transaction of its own (pq_write(), with its retries),
 * so that a call fails only for itself. */
static void write_calls(struct store *s, struct store_call **calls, int count)
{
	PGconn *conn = pg_pool_take(&s->pool);
	int rc = LL_ESTORE;
	bool unknown = false; /* the COMMIT was sent, its outcome unknown */

	if (conn) {
		rc = run_batch(s, conn, calls, count);
		unknown = rc < 0 && PQstatus(conn) != CONNECTION_OK;
		pg_pool_give(&s->pool, conn, false);
	}
	for (int i = 0; i < count; i++) {
		struct store_call *call = calls[i];
		if (rc < 0 && (unknown || !conn || (count == 1 && !retryable()))) {
			call_failed(call, call->op.rc < 0 ? call->op.rc : rc);
		} else if (rc < 0) {
			cJSON_Delete(*call->out);
			*call->out = NULL;
			pgq_clear_sqlstate();
			call->op.rc = pq_write(s, call->fn, call->arg);
			if (call->op.rc < 0)
				call_failed(call, call->op.rc);
		}
		if (call->done)
			call->done(call->context);
	}
}

static void *writer_main(void *arg)
{
	struct pg_writer_lane *lane = arg;
	struct store *s = lane->store;
	struct pg_writer *w = &s->writer;
	struct store_call *calls[PG_BATCH_MAX];

	pthread_mutex_lock(&w->lock);
	for (;;) {
		int count = 0;
		while (!lane->head && !w->stopping)
			pthread_cond_wait(&lane->wake, &w->lock);
		if (!lane->head)
			break; /* stopping, and nothing left */
		while (lane->head && count < PG_BATCH_MAX) {
			calls[count++] = lane->head;
			lane->head = lane->head->next;
			w->queued--;
		}
		if (!lane->head)
			lane->tail = NULL;
		pthread_mutex_unlock(&w->lock);
		write_calls(s, calls, count);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int pg_writer_start(struct store *s)
{
	struct pg_writer *w = &s->writer;

	pthread_mutex_init(&w->lock, NULL);
	for (int i = 0; i < PG_WRITER_LANES; i++) {
		struct pg_writer_lane *lane = &w->lanes[i];
		lane->store = s;
		pthread_cond_init(&lane->wake, NULL);
		lane->cond_made = true;
		for (int t = 0; t < PG_LANE_THREADS; t++) {
			if (pthread_create(&lane->threads[t], NULL, writer_main, lane) != 0) {
				pg_writer_stop(s);
				return err_set(LL_EIO, "Cannot start the store's writer threads.");
			}
			lane->started++;
		}
	}
	w->running = true;
	return 0;
}

void pg_writer_stop(struct store *s)
{
	struct pg_writer *w = &s->writer;

	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	for (int i = 0; i < PG_WRITER_LANES; i++)
		if (w->lanes[i].cond_made)
			pthread_cond_broadcast(&w->lanes[i].wake);
	pthread_mutex_unlock(&w->lock);
	for (int i = 0; i < PG_WRITER_LANES; i++) {
		struct pg_writer_lane *lane = &w->lanes[i];
		for (int t = 0; t < lane->started; t++)
			pthread_join(lane->threads[t], NULL);
		lane->started = 0;
		if (lane->cond_made)
			pthread_cond_destroy(&lane->wake);
		lane->cond_made = false;
	}
	w->running = false;
	pthread_mutex_destroy(&w->lock);
}

/* The lane of calls of FN: its own, a free one, or (more kinds than
 * lanes) the last (W's lock held). */
static struct pg_writer_lane *lane_of(struct pg_writer *w, int (*fn)(struct store *, void *))
{
	for (int i = 0; i < PG_WRITER_LANES; i++) {
		if (w->lanes[i].fn == fn)
			return &w->lanes[i];
		if (!w->lanes[i].fn) {
			w->lanes[i].fn = fn;
			return &w->lanes[i];
		}
	}
	return &w->lanes[PG_WRITER_LANES - 1];
}

int pq_call_submit(struct store *s, struct store_call *call, int (*fn)(struct store *, void *), void *arg,
		   cJSON **out, store_done_fn done, void *context, struct store_call **ret_call)
{
	struct pg_writer *w = &s->writer;
	int rc = 0;

	call->base = s->base;
	call->out = out;
	call->fn = fn;
	call->arg = arg;
	call->done = done;
	call->context = context;
	call->next = NULL;
	pthread_mutex_lock(&w->lock);
	if (w->stopping || !w->running)
		rc = err_set(LL_ESTORE, "The store is closing.");
	else if (w->queued >= PG_QUEUE_MAX)
		rc = err_set(LL_ESTORE, "The store's write queue is full (%d writes).", PG_QUEUE_MAX);
	if (rc == 0) {
		struct pg_writer_lane *lane = lane_of(w, fn);
		if (lane->tail)
			lane->tail->next = call;
		else
			lane->head = call;
		lane->tail = call;
		w->queued++;
		*ret_call = call;
		pthread_cond_signal(&lane->wake);
	}
	pthread_mutex_unlock(&w->lock);
	if (rc < 0)
		free(call);
	return rc;
}

int pq_call_end(struct store_call *call, cJSON **ret)
{
	int rc = call->op.rc;

	if (rc < 0)
		err_set(rc, "%s", call->op.message);
	*ret = rc < 0 ? NULL : *call->out;
	if (rc == 0)
		*call->out = NULL;
	pg_call_free(call);
	return rc;
}

void pg_call_free(struct store_call *call)
{
	if (!call)
		return;
	cJSON_Delete(*call->out);
	free(call);
}
