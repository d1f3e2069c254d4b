/*
 * store_tokens.c - the tokens (store.h, "tokens"): kept by their SHA-256
 * only, found in constant time, revoked but never deleted; on every
 * driver (db.h). A single-writer store remembers live tokens
 * (store_token_cache.h).
 */
#include "db.h"
#include "store_backend.h"
#include "store_token_cache.h"

#include "loadlab/err.h"

#include <stdio.h>

static struct token_cache *cache_of(struct store *s)
{
	return ((struct store_base *)s)->token_cache;
}

int store_token_count(struct store *s, enum store_token_kind kind, long long *ret_count)
{
	int rc;

	db_read_begin(s);
	rc = db_int(s, ret_count, 0, "SELECT count(*) FROM tokens WHERE kind = ? AND revoked_at IS NULL", "t",
		    store_token_kind_name(kind));
	db_read_end(s);
	return rc;
}

struct token_create_op {
	enum store_token_kind kind;
	const char *name, *team;
	const unsigned char *hash;
	long long now;
	cJSON *out;
};

/* In a token write's transaction: every daemon sharing the store hears at
 * commit that a token changed and forgets the tokens it remembers
 * (PostgreSQL: pg_watch.c; SQLite has no other daemon). */
static int notify_token_written(struct store *s)
{
	return db_run(s, db_sql(s, NULL, "SELECT pg_notify('loadlab_tokens', '')"), "");
}

static int op_token_create(struct store *s, void *arg)
{
	struct token_create_op *a = arg;
	long long id;
	int rc;

	rc = db_int(
		s, &id, 0,
		"INSERT INTO tokens (kind, name, hash, created_at, team) VALUES (?, ?, ?, ?, nullif(?, ''))"
		" ON CONFLICT (hash) DO UPDATE SET revoked_at = NULL, kind = excluded.kind,"
		" team = excluded.team RETURNING id",
		"ttbit", store_token_kind_name(a->kind), a->name, a->hash, a->now, a->team ? a->team : "");
	if (rc < 0 || (rc = notify_token_written(s)) < 0)
		return rc;
	a->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(a->out, "id", (double)id);
	cJSON_AddStringToObject(a->out, "kind", store_token_kind_name(a->kind));
	cJSON_AddStringToObject(a->out, "name", a->name);
	if (a->team && a->team[0])
		cJSON_AddStringToObject(a->out, "team", a->team);
	db_add_time_value(a->out, "created_at", a->now);
	return 0;
}

int store_token_create(struct store *s, enum store_token_kind kind, const char *name, const char *team,
		       const unsigned char hash[STORE_TOKEN_HASH_SIZE], long long now, cJSON **ret_token)
{
	struct token_create_op a = {kind, name, team, hash, now, NULL};
	cJSON *answer = NULL;
	int rc = db_write_answer(s, op_token_create, &a, &a.out, &answer);

	token_cache_forget(cache_of(s)); /* a revoked token of this hash may live again */
	if (rc == 0 && ret_token)
		*ret_token = answer;
	else
		cJSON_Delete(answer);
	return rc;
}

/* A live token is remembered where the store keeps a cache (token_cache_get()):
 * every request checks its token, and the query was most of that check. */
int store_token_find(struct store *s, const unsigned char hash[STORE_TOKEN_HASH_SIZE],
		     struct store_token *ret_token)
{
	struct store_token t = {0};
	unsigned long long generation = 0;
	struct db_stmt st;
	const void *stored;
	int rc, step, stored_len = 0;

	if (token_cache_get(cache_of(s), hash, ret_token, &generation))
		return 0;
	db_read_begin(s);
	rc = db_prepare(s,
			"SELECT id, kind, agent_id, name, hash, team FROM tokens"
			" WHERE hash = ? AND revoked_at IS NULL",
			&st);
	if (rc == 0) {
		rc = LL_ENOTFOUND;
		db_bind_blob(&st, 1, hash, STORE_TOKEN_HASH_SIZE);
		step = db_step(&st);
		stored = step == DB_ROW ? db_column_blob(&st, 4, &stored_len) : NULL;
		if (step < 0) {
			rc = step;
		} else if (stored && stored_len == STORE_TOKEN_HASH_SIZE && token_hash_equal(stored, hash) &&
			   store_token_kind_parse(db_column_text(&st, 1), &t.kind) == 0) {
			t.id = db_column_int64(&st, 0);
			t.agent_id = db_column_int64(&st, 2);
			snprintf(t.name, sizeof(t.name), "%s", db_column_text(&st, 3));
			if (!db_column_null(&st, 5))
				snprintf(t.team, sizeof(t.team), "%s", db_column_text(&st, 5));
			*ret_token = t;
			rc = 0;
		}
	}
	db_finish(&st);
	db_read_end(s);
	if (rc == 0)
		token_cache_put(cache_of(s), hash, &t, generation);
	return rc;
}

static void add_token(void *context, struct db_stmt *row)
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

	db_add_columns(t, row, 0, columns);
	cJSON_AddItemToArray(context, t);
}

int store_token_list(struct store *s, cJSON **ret_list)
{
	cJSON *out = cJSON_CreateObject();
	int rc = db_read_rows(s,
			      "SELECT id, kind, name, team, created_at, revoked_at FROM tokens"
			      " WHERE kind != 'agent' ORDER BY id",
			      add_token, cJSON_AddArrayToObject(out, "tokens"), "");

	return db_answer(rc, out, ret_list);
}

struct token_revoke_op {
	long long id, now;
};

static int op_token_revoke(struct store *s, void *arg)
{
	struct token_revoke_op *a = arg;
	long long found;
	int rc = db_int(s, &found, 0, "SELECT count(*) FROM tokens WHERE id = ?", "i", a->id);

	if (rc < 0)
		return rc;
	if (!found)
		return err_set(LL_ENOTFOUND, "No token has id %lld.", a->id);
	if ((rc = db_run(s, "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", "ii",
			 a->now, a->id)) < 0)
		return rc;
	return notify_token_written(s);
}

int store_token_revoke(struct store *s, long long id, long long now, cJSON **ret_body)
{
	struct token_revoke_op a = {id, now};
	int rc = db_write(s, op_token_revoke, &a);

	token_cache_forget(cache_of(s));
	if (rc < 0)
		return rc;
	*ret_body = cJSON_CreateObject();
	cJSON_AddNumberToObject(*ret_body, "id", (double)id);
	cJSON_AddBoolToObject(*ret_body, "revoked", true);
	db_log_state("token_state", "token_id", id, "live", "revoked", NULL);
	return 0;
}
