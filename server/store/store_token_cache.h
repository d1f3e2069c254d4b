/*
 * store_token_cache.h - the live tokens a store remembers, so that a
 * request's token check does not query the database (store_tokens.c).
 * A store whose daemon is its only writer (a driver with single_writer,
 * db_driver.h: SQLite) keeps its tokens as long as no token is written:
 * every write to the tokens table is this daemon's, and forgets what was
 * remembered. A store other daemons write too (PostgreSQL) keeps each
 * for STORE_TOKEN_CACHE_SHARED_MS at most: a token write notifies every
 * daemon in its transaction (pg_watch.c hears it and forgets them all),
 * and the age bounds what a lost notification can leave standing.
 *
 * Slots chosen by the hash's first two bytes (STORE_TOKEN_CACHE_SLOTS,
 * about 570 KiB). A lookup remembers what it found under the generation
 * it started in; every token write moves the generation, so a lookup
 * that read the table before a revocation never stands after it.
 */
#ifndef LOADLAB_SERVER_STORE_TOKEN_CACHE_H
#define LOADLAB_SERVER_STORE_TOKEN_CACHE_H

#include "store.h"

#include <stdbool.h>

/* With 64 slots a third of 32 agents shared a slot with another and missed
 * on every other request. */
#define STORE_TOKEN_CACHE_SLOTS 4096
/* How long a store shared with other daemons keeps a token. */
#define STORE_TOKEN_CACHE_SHARED_MS 5000

struct token_cache;

/* A new, empty cache whose tokens stand MAX_AGE_MS after their lookup (0:
 * until forgotten); NULL when out of memory (then nothing is remembered). */
struct token_cache *token_cache_new(long long max_age_ms);
void token_cache_free(struct token_cache *c);

/* Forgets every remembered token: called after each write to the tokens
 * table has committed. C may be NULL (no cache: nothing to do). */
void token_cache_forget(struct token_cache *c);

/* The remembered token of HASH in *RET when it still stands, else false
 * and *RET_GENERATION is the generation to remember a lookup under. */
bool token_cache_get(struct token_cache *c, const unsigned char *hash, struct store_token *ret,
		     unsigned long long *ret_generation);

/* Remembers TOKEN for HASH, found by a lookup that began in GENERATION
 * (ignored when a write came since). */
void token_cache_put(struct token_cache *c, const unsigned char *hash, const struct store_token *token,
		     unsigned long long generation);

/* Whether the hashes A and B (STORE_TOKEN_HASH_SIZE bytes) are equal, in
 * constant time: how long a lookup takes says nothing about how much of
 * a hash matched. */
bool token_hash_equal(const unsigned char *a, const unsigned char *b);

#endif
