/*
 * sqlite_tokens.c - the SQLite store's tokens (store.h, "tokens"): kept by their
 * SHA-256 only, found in constant time, revoked but never deleted.
 */
#include "sqlite_int.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sqlite_token_count(struct store *s, enum store_token_kind kind, long long *ret_count)
{
	int rc;

	pthread_mutex_lock(&s->reader_lock);
	rc = sq_int(s->reader, ret_count, 0,
		    "SELECT count(*) FROM tokens WHERE kind = ? AND revoked_at IS NULL", "t",
		    store_token_kind_name(kind));
	pthread_mutex_unlock(&s->reader_lock);
	return rc;
}

/* Constant-time comparison, so that how long a lookup takes says nothing
 * about how much of a hash matched. */
static bool hash_equal(const unsigned char *a, const unsigned char *b)
{
	unsigned char diff = 0;

	for (int i = 0; i < STORE_TOKEN_HASH_SIZE; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

/* Forgets every remembered token: called after each write to the tokens
 * table has committed. A lookup that read the table before that carries
 * the older generation, so what it remembers never stands. */
static void token_cache_forget(struct store *s)
{
	pthread_mutex_lock(&s->token_cache_lock);
	s->token_generation++;
	pthread_mutex_unlock(&s->token_cache_lock);
}

/* The slot of HASH: its first two bytes (SHA-256's are uniform). */
static struct token_cache_entry *token_slot(struct store *s, const unsigned char *hash)
{
	return &s->token_cache[((unsigned)hash[0] | (unsigned)hash[1] << 8) % STORE_TOKEN_CACHE_SLOTS];
}

/* The remembered token of HASH in *RET when it still stands, else false
 * and *RET_GENERATION is the generation to remember a lookup under. */
static bool token_cache_get(struct store *s, const unsigned char *hash, struct store_token *ret,
			    unsigned long long *ret_generation)
{
	struct token_cache_entry *e = token_slot(s, hash);
	bool found;

	pthread_mutex_lock(&s->token_cache_lock);
	found = e->used && e->generation == s->token_generation && hash_equal(e->hash, hash);
	if (found)
		*ret = e->token;
	*ret_generation = s->token_generation;
	pthread_mutex_unlock(&s->token_cache_lock);
	return found;
}

static void token_cache_put(struct store *s, const unsigned char *hash, const struct store_token *token,
			    unsigned long long generation)
{
	struct token_cache_entry *e = token_slot(s, hash);

	pthread_mutex_lock(&s->token_cache_lock);
	if (generation == s->token_generation) {
		e->used = true;
		e->generation = generation;
		memcpy(e->hash, hash, STORE_TOKEN_HASH_SIZE);
		e->token = *token;
	}
	pthread_mutex_unlock(&s->token_cache_lock);
}

struct token_create_op {
	enum store_token_kind kind;
	const char *name, *team;
	const unsigned char *hash;
	long long now;
	cJSON *out;
};

static int op_token_create(struct store *s, void *arg)
{
	struct token_create_op *a = arg;
	long long id;
	int rc;

	rc = sq_run(
		s->writer,
		"INSERT INTO tokens (kind, name, hash, created_at, team) VALUES (?, ?, ?, ?, nullif(?, ''))"
		" ON CONFLICT (hash) DO UPDATE SET revoked_at = NULL, kind = excluded.kind,"
		" team = excluded.team",
		"ttbit", store_token_kind_name(a->kind), a->name, a->hash, a->now, a->team ? a->team : "");
	if (rc < 0)
		return rc;
	if ((rc = sq_int(s->writer, &id, 0, "SELECT id FROM tokens WHERE hash = ?", "b", a->hash)) < 0)
		return rc;
	a->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(a->out, "id", (double)id);
	cJSON_AddStringToObject(a->out, "kind", store_token_kind_name(a->kind));
	cJSON_AddStringToObject(a->out, "name", a->name);
	if (a->team && a->team[0])
		cJSON_AddStringToObject(a->out, "team", a->team);
	add_time_value(a->out, "created_at", a->now);
	return 0;
}

int sqlite_token_create(struct store *s, enum store_token_kind kind, const char *name, const char *team,
			const unsigned char hash[STORE_TOKEN_HASH_SIZE], long long now, cJSON **ret_token)
{
	struct token_create_op a = {kind, name, team, hash, now, NULL};
	cJSON *answer = NULL;
	int rc = store_write_answer(s, op_token_create, &a, &a.out, &answer);

	token_cache_forget(s); /* a revoked token of this hash may live again */
	if (rc == 0 && ret_token)
		*ret_token = answer;
	else
		cJSON_Delete(answer);
	return rc;
}

/* A live token is remembered (token_cache_get()): every request checks its
 * token, and the query under the reader's lock was most of that check. */
int sqlite_token_find(struct store *s, const unsigned char hash[STORE_TOKEN_HASH_SIZE],
		      struct store_token *ret_token)
{
	sqlite3_stmt *stmt;
	struct store_token t = {0};
	unsigned long long generation;
	int rc = LL_ENOTFOUND;

	if (token_cache_get(s, hash, ret_token, &generation))
		return 0;
	pthread_mutex_lock(&s->reader_lock);
	stmt = sq_cached(s->reader, "SELECT id, kind, agent_id, name, hash, team FROM tokens"
				    " WHERE hash = ? AND revoked_at IS NULL");
	if (!stmt) {
		pthread_mutex_unlock(&s->reader_lock);
		return LL_ESTORE;
	}
	sqlite3_bind_blob(stmt, 1, hash, STORE_TOKEN_HASH_SIZE, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_bytes(stmt, 4) == STORE_TOKEN_HASH_SIZE &&
	    hash_equal(sqlite3_column_blob(stmt, 4), hash) &&
	    store_token_kind_parse((const char *)sqlite3_column_text(stmt, 1), &t.kind) == 0) {
		t.id = sqlite3_column_int64(stmt, 0);
		t.agent_id = sqlite3_column_int64(stmt, 2);
		snprintf(t.name, sizeof(t.name), "%s", (const char *)sqlite3_column_text(stmt, 3));
		if (sqlite3_column_type(stmt, 5) != SQLITE_NULL)
			snprintf(t.team, sizeof(t.team), "%s", (const char *)sqlite3_column_text(stmt, 5));
		*ret_token = t;
		rc = 0;
	}
	sq_release(s->reader, stmt);
	pthread_mutex_unlock(&s->reader_lock);
	if (rc == 0)
		token_cache_put(s, hash, &t, generation);
	return rc;
}

static void add_token(void *context, sqlite3_stmt *row)
{
	static const struct column columns[] = {
		{"id", COLUMN_INT},
		{"kind", COLUMN_TEXT},
		{"name", COLUMN_TEXT},
		{"team", COLUMN_TEXT_OR_NULL},
		{"created_at", COLUMN_TIME},
		{"revoked_at", COLUMN_TIME},
		{NULL, 0},
	};
	cJSON *t = cJSON_CreateObject();

	add_columns(t, row, 0, columns);
	cJSON_AddItemToArray(context, t);
}

int sqlite_token_list(struct store *s, cJSON **ret_list)
{
	cJSON *out = cJSON_CreateObject();
	int rc = sq_reader_each(s,
				"SELECT id, kind, name, team, created_at, revoked_at FROM tokens"
				" WHERE kind != 'agent' ORDER BY id",
				add_token, cJSON_AddArrayToObject(out, "tokens"));

	return store_answer(rc, out, ret_list);
}

struct token_revoke_op {
	long long id, now;
};

static int op_token_revoke(struct store *s, void *arg)
{
	struct token_revoke_op *a = arg;
	long long found;
	int rc = sq_int(s->writer, &found, 0, "SELECT count(*) FROM tokens WHERE id = ?", "i", a->id);

	if (rc < 0)
		return rc;
	if (!found)
		return err_set(LL_ENOTFOUND, "No token has id %lld.", a->id);
	return sq_run(s->writer, "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", "ii",
		      a->now, a->id);
}

int sqlite_token_revoke(struct store *s, long long id, long long now, cJSON **ret_body)
{
	struct token_revoke_op a = {id, now};
	int rc = store_write(s, op_token_revoke, &a);

	token_cache_forget(s);
	if (rc < 0)
		return rc;
	*ret_body = cJSON_CreateObject();
	cJSON_AddNumberToObject(*ret_body, "id", (double)id);
	cJSON_AddBoolToObject(*ret_body, "revoked", true);
	log_state("token_state", "token_id", id, "live", "revoked", NULL);
	return 0;
}
