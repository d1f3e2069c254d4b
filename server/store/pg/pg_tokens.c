/*
 * pg_tokens.c - the PostgreSQL store's tokens (store.h, "tokens"): kept by their
 * SHA-256 only, found in constant time, revoked but never deleted.
 */
#include "pg_int.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pg_token_count(struct store *s, enum store_token_kind kind, long long *ret_count)
{
	int rc;

	pq_read_begin(s);
	rc = pq_int(pq_reader(), ret_count, 0,
		    "SELECT count(*) FROM tokens WHERE kind = ? AND revoked_at IS NULL", "t",
		    store_token_kind_name(kind));
	pq_read_end(s);
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

	rc = pq_run(
		pq_writer(),
		"INSERT INTO tokens (kind, name, hash, created_at, team) VALUES (?, ?, ?, ?, nullif(?, ''))"
		" ON CONFLICT (hash) DO UPDATE SET revoked_at = NULL, kind = excluded.kind,"
		" team = excluded.team",
		"ttbit", store_token_kind_name(a->kind), a->name, a->hash, a->now, a->team ? a->team : "");
	if (rc < 0)
		return rc;
	if ((rc = pq_int(pq_writer(), &id, 0, "SELECT id FROM tokens WHERE hash = ?", "b", a->hash)) < 0)
		return rc;
	a->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(a->out, "id", (double)id);
	cJSON_AddStringToObject(a->out, "kind", store_token_kind_name(a->kind));
	cJSON_AddStringToObject(a->out, "name", a->name);
	if (a->team && a->team[0])
		cJSON_AddStringToObject(a->out, "team", a->team);
	pq_add_time_value(a->out, "created_at", a->now);
	return 0;
}

int pg_token_create(struct store *s, enum store_token_kind kind, const char *name, const char *team,
		    const unsigned char hash[STORE_TOKEN_HASH_SIZE], long long now, cJSON **ret_token)
{
	struct token_create_op a = {kind, name, team, hash, now, NULL};
	cJSON *answer = NULL;
	int rc = pq_write_answer(s, op_token_create, &a, &a.out, &answer);

	if (rc == 0 && ret_token)
		*ret_token = answer;
	else
		cJSON_Delete(answer);
	return rc;
}

/* No token is remembered, unlike SQLite's: another daemon may revoke it. */
int pg_token_find(struct store *s, const unsigned char hash[STORE_TOKEN_HASH_SIZE],
		  struct store_token *ret_token)
{
	struct pgq *stmt;
	struct store_token t = {0};
	int rc = LL_ENOTFOUND;

	pq_read_begin(s);
	stmt = pq_cached(pq_reader(), "SELECT id, kind, agent_id, name, hash, team FROM tokens"
				      " WHERE hash = ? AND revoked_at IS NULL");
	if (!stmt) {
		pq_read_end(s);
		return LL_ESTORE;
	}
	pgq_bind_blob(stmt, 1, hash, STORE_TOKEN_HASH_SIZE, PGQ_TRANSIENT);
	int step = pgq_step(stmt);
	if (step < 0)
		rc = step;
	else if (step == PGQ_ROW && pgq_column_bytes(stmt, 4) == STORE_TOKEN_HASH_SIZE &&
		 hash_equal(pgq_column_blob(stmt, 4), hash) &&
		 store_token_kind_parse((const char *)pgq_column_text(stmt, 1), &t.kind) == 0) {
		t.id = pgq_column_int64(stmt, 0);
		t.agent_id = pgq_column_int64(stmt, 2);
		snprintf(t.name, sizeof(t.name), "%s", (const char *)pgq_column_text(stmt, 3));
		if (pgq_column_type(stmt, 5) != PGQ_NULL)
			snprintf(t.team, sizeof(t.team), "%s", (const char *)pgq_column_text(stmt, 5));
		*ret_token = t;
		rc = 0;
	}
	pq_release(pq_reader(), stmt);
	pq_read_end(s);
	return rc;
}

static void add_token(void *context, struct pgq *row)
{
	static const struct pq_column columns[] = {
		{"id", PQ_COLUMN_INT},
		{"kind", PQ_COLUMN_TEXT},
		{"name", PQ_COLUMN_TEXT},
		{"team", PQ_COLUMN_TEXT_OR_NULL},
		{"created_at", PQ_COLUMN_TIME},
		{"revoked_at", PQ_COLUMN_TIME},
		{NULL, 0},
	};
	cJSON *t = cJSON_CreateObject();

	pq_add_columns(t, row, 0, columns);
	cJSON_AddItemToArray(context, t);
}

int pg_token_list(struct store *s, cJSON **ret_list)
{
	cJSON *out = cJSON_CreateObject();
	int rc = pq_reader_each(s,
				"SELECT id, kind, name, team, created_at, revoked_at FROM tokens"
				" WHERE kind != 'agent' ORDER BY id",
				add_token, cJSON_AddArrayToObject(out, "tokens"));

	return pq_answer(rc, out, ret_list);
}

struct token_revoke_op {
	long long id, now;
};

static int op_token_revoke(struct store *s, void *arg)
{
	struct token_revoke_op *a = arg;
	long long found;
	int rc = pq_int(pq_writer(), &found, 0, "SELECT count(*) FROM tokens WHERE id = ?", "i", a->id);

	if (rc < 0)
		return rc;
	if (!found)
		return err_set(LL_ENOTFOUND, "No token has id %lld.", a->id);
	return pq_run(pq_writer(), "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
		      "ii", a->now, a->id);
}

int pg_token_revoke(struct store *s, long long id, long long now, cJSON **ret_body)
{
	struct token_revoke_op a = {id, now};
	int rc = pq_write(s, op_token_revoke, &a);

	if (rc < 0)
		return rc;
	*ret_body = cJSON_CreateObject();
	cJSON_AddNumberToObject(*ret_body, "id", (double)id);
	cJSON_AddBoolToObject(*ret_body, "revoked", true);
	pq_log_state("token_state", "token_id", id, "live", "revoked", NULL);
	return 0;
}
