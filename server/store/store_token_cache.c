/*
 * store_token_cache.c - the live tokens a single-writer store remembers
 * (store_token_cache.h).
 */
#include "store_token_cache.h"

#include "loadlab/clock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A token found live while the generation was GENERATION. */
struct token_cache_entry {
	bool used;
	unsigned long long generation;
	long long at_ms; /* when the lookup began (clock_monotonic_us) */
	unsigned char hash[STORE_TOKEN_HASH_SIZE];
	struct store_token token;
};

struct token_cache {
	long long max_age_ms; /* 0: none */
	pthread_mutex_t lock; /* guards the two below */
	unsigned long long generation;
	struct token_cache_entry slots[STORE_TOKEN_CACHE_SLOTS];
};

struct token_cache *token_cache_new(long long max_age_ms)
{
	struct token_cache *c = calloc(1, sizeof(*c));

	if (c) {
		c->max_age_ms = max_age_ms;
		pthread_mutex_init(&c->lock, NULL);
	}
	return c;
}

void token_cache_free(struct token_cache *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void token_cache_forget(struct token_cache *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->generation++;
	pthread_mutex_unlock(&c->lock);
}

/* The slot of HASH: its first two bytes (SHA-256's are uniform). */
static struct token_cache_entry *slot_of(struct token_cache *c, const unsigned char *hash)
{
	return &c->slots[((unsigned)hash[0] | (unsigned)hash[1] << 8) % STORE_TOKEN_CACHE_SLOTS];
}

bool token_hash_equal(const unsigned char *a, const unsigned char *b)
{
	unsigned char diff = 0;

	for (int i = 0; i < STORE_TOKEN_HASH_SIZE; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

bool token_cache_get(struct token_cache *c, const unsigned char *hash, struct store_token *ret,
		     unsigned long long *ret_generation)
{
	struct token_cache_entry *e;
	bool found;

	if (!c)
		return false;
	e = slot_of(c, hash);
	pthread_mutex_lock(&c->lock);
	found = e->used && e->generation == c->generation && token_hash_equal(e->hash, hash) &&
		(c->max_age_ms <= 0 || (clock_monotonic_us() / 1000) - e->at_ms < c->max_age_ms);
	if (found)
		*ret = e->token;
	*ret_generation = c->generation;
	pthread_mutex_unlock(&c->lock);
	return found;
}

void token_cache_put(struct token_cache *c, const unsigned char *hash, const struct store_token *token,
		     unsigned long long generation)
{
	struct token_cache_entry *e;

	if (!c)
		return;
	e = slot_of(c, hash);
	pthread_mutex_lock(&c->lock);
	if (generation == c->generation) {
		e->used = true;
		e->generation = generation;
		e->at_ms = (clock_monotonic_us() / 1000);
		memcpy(e->hash, hash, STORE_TOKEN_HASH_SIZE);
		e->token = *token;
	}
	pthread_mutex_unlock(&c->lock);
}
