/*
 * pg_token_cache.c - the PostgreSQL backend's token check without a
 * query per request (pg_int.h, struct pg_token_cache): pg_token_find()'s
 * answers for live tokens remembered, by hash, for PG_TOKEN_CACHE_MS at
 * most.
 *
 * Every replica of the database must stop honouring a revoked token. A
 * token write through this daemon (create, revoke) forgets every
 * remembered token at once and, once committed, sends NOTIFY
 * loadlab_tokens; the task watch's connection (pg_watch.c) LISTENs on that
 * channel too, and each notification, or a reconnection of the watch
 * (notifications may have been lost), forgets every remembered token of
 * the other daemons. So a revocation is seen by every replica within the
 * notification's delivery (milliseconds), and within PG_TOKEN_CACHE_MS
 * when the watch is not running (loadlabd --no-store-watch) or its
 * connection is down. An unknown or revoked token is never remembered: it
 * is looked up every time.
 */
#include "pg_int.h"

#include "loadlab/clock.h"

#include <string.h>

/* The slot of HASH (its first bytes are uniformly random). */
static struct pg_token_entry *slot_of(struct store *s, const unsigned char *hash)
{
	return &s->tokens.slots[((unsigned)hash[0] | (unsigned)hash[1] << 8) % PG_TOKEN_CACHE_SLOTS];
}

void pg_token_cache_forget(struct store *s)
{
	pthread_mutex_lock(&s->tokens.lock);
	s->tokens.generation++;
	pthread_mutex_unlock(&s->tokens.lock);
}

int pg_token_find_cached(struct store *s, const unsigned char hash[STORE_TOKEN_HASH_SIZE],
			 struct store_token *ret_token)
{
	struct pg_token_entry *e = slot_of(s, hash);
	long long now = clock_now_ms(), generation;
	bool found;
	int rc;

	pthread_mutex_lock(&s->tokens.lock);
	found = e->used && e->generation == s->tokens.generation && now - e->at_ms < PG_TOKEN_CACHE_MS &&
		memcmp(e->hash, hash, STORE_TOKEN_HASH_SIZE) == 0;
	if (found)
		*ret_token = e->token;
	generation = s->tokens.generation;
	pthread_mutex_unlock(&s->tokens.lock);
	if (found)
		return 0;
	if ((rc = pg_token_find(s, hash, ret_token)) < 0)
		return rc;
	/* Remembered only when nothing was forgotten since the lookup began:
	 * a revocation committed meanwhile may be in the row just read. */
	pthread_mutex_lock(&s->tokens.lock);
	if (generation == s->tokens.generation) {
		e->used = true;
		e->generation = generation;
		e->at_ms = now;
		memcpy(e->hash, hash, STORE_TOKEN_HASH_SIZE);
		e->token = *ret_token;
	}
	pthread_mutex_unlock(&s->tokens.lock);
	return 0;
}

/* Tells every daemon of the database (this one included) to forget its
 * remembered tokens: NOTIFY on a connection of the pool, outside any
 * transaction (the token write it follows is committed). */
static void notify_tokens(struct store *s)
{
	PGconn *conn = pg_pool_take(&s->pool);

	pg_token_cache_forget(s);
	if (!conn)
		return;
	pg_pool_give(&s->pool, conn, pq_exec(conn, "NOTIFY " PG_TOKENS_CHANNEL) < 0);
}

int pg_token_create_noting(struct store *s, enum store_token_kind kind, const char *name, const char *team,
			   const unsigned char hash[STORE_TOKEN_HASH_SIZE], long long now, cJSON **ret_token)
{
	int rc = pg_token_create(s, kind, name, team, hash, now, ret_token);

	notify_tokens(s); /* a live token's kind or team may have changed */
	return rc;
}

int pg_token_revoke_noting(struct store *s, long long id, long long now, cJSON **ret_body)
{
	int rc = pg_token_revoke(s, id, now, ret_body);

	notify_tokens(s);
	return rc;
}
