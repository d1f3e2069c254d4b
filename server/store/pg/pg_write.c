/*
 * pg_write.c - the PostgreSQL backend's writes (pg_int.h): each op in a
 * transaction of its own on a connection of the pool, run again after a
 * deadlock or serialization failure, and the calls of store_async.h,
 * which run within X_begin().
 */
#include "pg_int.h"

#include "loadlab/err.h"

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

/* One try of pq_write(). */
static int write_once(struct store *s, int (*fn)(struct store *, void *), void *arg)
{
	PGconn *conn = pg_pool_take(&s->pool);
	int rc;

	if (!conn)
		return LL_ESTORE;
	if ((rc = pq_exec(conn, "BEGIN")) < 0) {
		pg_pool_give(&s->pool, conn, true);
		return rc;
	}
	pq_writer_set(conn);
	err_clear();
	rc = fn(s, arg);
	pq_writer_set(NULL);
	if (rc >= 0 && PQtransactionStatus(conn) != PQTRANS_INTRANS)
		rc = err_set(LL_ESTORE, "The store failed.");
	if (rc >= 0 && pq_exec(conn, "COMMIT") < 0)
		rc = LL_ESTORE;
	if (rc < 0) {
		char message[256];
		snprintf(message, sizeof(message), "%s", err_message(rc));
		pq_exec(conn, "ROLLBACK");
		pthread_mutex_lock(&s->cache_lock);
		store_cache_agent_touches_forget(&s->cache); /* the op's touch may be undone */
		store_cache_lease_jobs_forget(&s->cache);
		pthread_mutex_unlock(&s->cache_lock);
		err_set(rc, "%s", message);
	} else {
		pthread_mutex_lock(&s->cache_lock);
		s->commits++;
		s->committed_ops++;
		pthread_mutex_unlock(&s->cache_lock);
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

int pq_call_submit(struct store *s, struct store_call *call, int (*fn)(struct store *, void *), void *arg,
		   cJSON **out, store_done_fn done, void *context, struct store_call **ret_call)
{
	call->base = s->base;
	call->out = out;
	call->op.rc = pq_write(s, fn, arg);
	if (call->op.rc < 0)
		snprintf(call->op.message, sizeof(call->op.message), "%s", err_message(call->op.rc));
	*ret_call = call;
	if (done)
		done(context);
	return 0;
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

int pq_write_answer(struct store *s, int (*fn)(struct store *, void *), void *arg, cJSON **out, cJSON **ret)
{
	int rc = pq_write(s, fn, arg);

	if (rc < 0) {
		cJSON_Delete(*out);
		*out = NULL;
		return rc;
	}
	*ret = *out;
	return 0;
}
