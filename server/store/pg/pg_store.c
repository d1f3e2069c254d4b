/*
 * pg_store.c - the PostgreSQL backend (store_backend.h): opening (the
 * pool, the migrations), closing, checks and stats. The writes'
 * transactions are pg_write.c's, the resources the other pg_*.c files
 * (pg_int.h).
 *
 * --db postgresql://… (or postgres://…) is libpq's URI, given to it as
 * is but for one parameter of loadlabd's own, pool_size=N (the most
 * connections this daemon keeps, PG_POOL_DEFAULT when not given).
 */
#include "pg_int.h"

#include "loadlab/err.h"
#include "loadlab/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Takes "pool_size=N" out of the query of URI (in place); *RET_SIZE N. */
static int take_pool_size(char *uri, int *ret_size)
{
	char *q = strchr(uri, '?'), *p, *end;
	long n;

	*ret_size = PG_POOL_DEFAULT;
	for (p = q; p && *p; p = strchr(p + 1, '&')) {
		if (strncmp(p + 1, "pool_size=", 10) != 0)
			continue;
		n = strtol(p + 11, &end, 10);
		if (end == p + 11 || (*end && *end != '&') || n < 1 || n > PG_POOL_MAX)
			return err_set(LL_EINVAL, "--db: pool_size must be 1 to %d.", PG_POOL_MAX);
		*ret_size = (int)n;
		if (*end == '&')
			memmove(p + 1, end + 1, strlen(end + 1) + 1); /* "?pool_size=4&x" -> "?x" */
		else
			*p = '\0'; /* the last parameter */
		return 0;
	}
	return 0;
}

/* Opens the store at LOCATION, what follows SCHEME: in --db. */
static int open_scheme(const char *scheme, const char *location, const struct store_options *options,
		       struct store **ret_store)
{
	struct store *s = calloc(1, sizeof(*s));
	size_t len = strlen(scheme) + strlen(location) + 2;
	char *uri = malloc(len);
	int size, rc;
	PGconn *conn;

	if (!s || !uri) {
		free(s);
		free(uri);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	snprintf(uri, len, "%s:%s", scheme, location);
	s->options = *options;
	pthread_mutex_init(&s->shared_lock, NULL);
	pg_watch_init(s);
	pg_roles_init(s);
	if ((rc = take_pool_size(uri, &size)) < 0 || (rc = pg_pool_init(&s->pool, uri, size)) < 0)
		goto fail;
	if (!(conn = pg_pool_take(&s->pool))) {
		rc = err_set(LL_ESTORE, "Cannot connect to the store's PostgreSQL database (--db).");
		goto fail;
	}
	rc = pg_migrate(conn);
	pg_pool_give(&s->pool, conn, rc < 0);
	if (rc < 0 || (rc = pg_writer_start(s)) < 0)
		goto fail;
	free(uri);
	*ret_store = s;
	return 0;
fail:
	pg_watch_stop(s);
	pg_roles_close(s);
	pg_pool_destroy(&s->pool);
	pthread_mutex_destroy(&s->shared_lock);
	free(uri);
	free(s);
	return rc;
}

/* LOCATION is what follows "postgresql:" or "postgres:" in --db: libpq
 * takes either scheme, so it is given back as "postgresql:LOCATION". */
int pg_open(const char *location, const struct store_options *options, struct store **ret_store)
{
	return open_scheme("postgresql", location, options, ret_store);
}

void pg_close(struct store *s)
{
	if (!s)
		return;
	pg_writer_stop(s); /* what is queued is written first */
	pg_watch_stop(s);
	pg_roles_close(s);
	pg_webhook_claims_release(s);
	pg_pool_destroy(&s->pool);
	pthread_mutex_destroy(&s->shared_lock);
	free(s);
}

/* ------------------------------------------------------- checks and stats */

int pg_integrity_check(struct store *s)
{
	long long version = 0;
	int rc;

	pq_read_begin(s);
	rc = pq_int(pq_reader(), &version, 0, "SELECT max(version) FROM schema_version", "");
	pq_read_end(s);
	return rc < 0 || version != pg_schema_latest() ? LL_ESTORE : 0;
}

int pg_stats(struct store *s, struct store_stats *st)
{
	int rc;

	/* the database's size on the server; its free room is autovacuum's */
	pq_read_begin(s);
	rc = pq_int(pq_reader(), &st->store_bytes, 0, "SELECT pg_database_size(current_database())", "");
	pq_read_end(s);
	pthread_mutex_lock(&s->shared_lock);
	st->commits = s->commits;
	st->committed_ops = s->committed_ops;
	st->syncs = s->commits; /* PostgreSQL makes each commit durable */
	pthread_mutex_unlock(&s->shared_lock);
	return rc < 0 ? rc : 0;
}
