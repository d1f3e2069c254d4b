/*
 * pg_role.c - roles one daemon of several holds at a time (store.h,
 * store_role_take()): a session advisory lock per role,
 * pg_try_advisory_lock(PG_ROLE_LOCK, hashtext(role)), taken on one
 * connection outside the pool and held while it lives. When that
 * connection is lost (a PostgreSQL restart, this daemon gone), the
 * server releases the locks and another daemon takes the role at its
 * next ask; this one asks again after the pool's backoff.
 */
#include "pg_int.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/log.h"

#include <string.h>

/* The first key of the roles' locks: "llro" in ASCII (the migrations'
 * lock is a single key: another space). */
#define PG_ROLE_LOCK "1819046511"

void pg_roles_init(struct store *s)
{
	pthread_mutex_init(&s->roles.lock, NULL);
	s->roles.backoff_ms = PG_BACKOFF_MIN_MS;
}

void pg_roles_close(struct store *s)
{
	PQfinish(s->roles.conn); /* the server releases the locks */
	s->roles.conn = NULL;
	pthread_mutex_destroy(&s->roles.lock);
}

static bool held_locked(const struct pg_roles *r, const char *role)
{
	for (int i = 0; i < r->held_count; i++)
		if (strcmp(r->held[i], role) == 0)
			return true;
	return false;
}

int pg_role_take(struct store *s, const char *role, bool *ret_held)
{
	struct pg_roles *r = &s->roles;
	long long got = 0;
	int rc = 0;

	*ret_held = false;
	if (strlen(role) >= sizeof(r->held[0]))
		return err_set(LL_EINVAL, "A role's name is at most %zu bytes.", sizeof(r->held[0]) - 1);
	pthread_mutex_lock(&r->lock);
	/* A connection the server closed has that to read: its locks are gone. */
	if (r->conn && (!PQconsumeInput(r->conn) || PQstatus(r->conn) != CONNECTION_OK)) {
		log_event(LOG_WARN, "store_roles_lost", "postgresql", PQerrorMessage(r->conn), NULL);
		PQfinish(r->conn);
		r->conn = NULL;
		r->held_count = 0;
	}
	if (!r->conn) {
		if (clock_now_ms() < r->retry_at_ms) {
			pthread_mutex_unlock(&r->lock);
			return err_set(LL_ESTORE, "The store's database cannot be reached.");
		}
		if (!(r->conn = pg_pool_connect(&s->pool))) {
			r->retry_at_ms = clock_now_ms() + r->backoff_ms;
			r->backoff_ms = pg_backoff_next(r->backoff_ms);
			pthread_mutex_unlock(&r->lock);
			return err_set(LL_ESTORE, "The store's database cannot be reached.");
		}
		r->backoff_ms = PG_BACKOFF_MIN_MS;
	}
	if (held_locked(r, role)) {
		*ret_held = true;
	} else if (r->held_count < PG_ROLES_MAX &&
		   (rc = pq_int(r->conn, &got, 0,
				"SELECT CASE WHEN pg_try_advisory_lock(" PG_ROLE_LOCK
				", hashtext(?)) THEN 1 ELSE 0 END",
				"t", role)) == 0 &&
		   got == 1) {
		snprintf(r->held[r->held_count++], sizeof(r->held[0]), "%s", role);
		*ret_held = true;
		log_event(LOG_INFO, "store_role_taken", "role", role, NULL);
	}
	pthread_mutex_unlock(&r->lock);
	return rc < 0 ? rc : 0;
}
