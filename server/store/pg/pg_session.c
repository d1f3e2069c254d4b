/*
 * pg_session.c - the prepared statements of the PostgreSQL backend's pool
 * connections (pg_int.h, "sessions"), SQLite's parameters turned
 * into PostgreSQL's, and which texts return no rows (queued in a
 * pipelined write).
 */
#include "pg_int.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The prepared statements of one connection of the pool (a session):
 * each SQL text given to pq_cached() or pq_prepare() is turned into $N
 * parameters once, and PREPAREd on the connection once per set of
 * parameter types it is bound with (named "llN"); the later runs send
 * only Bind and Execute (PQexecPrepared). A statement survives its
 * transaction's rollback (the protocol's Parse is not transactional) and
 * goes with its connection (pq_session_close()). A session keeps at most
 * PQ_SESSION_TEXTS texts; beyond them a text runs unnamed, as before. */
#define PQ_SESSION_BUCKETS 256
#define PQ_SESSION_TEXTS 1024

struct pq_session {
	struct pq_session *next; /* in sessions */
	PGconn *conn;
	int text_count, prepared_count;
	struct pq_text *buckets[PQ_SESSION_BUCKETS];
};

/* The sessions of the pools' connections (a daemon may open several
 * stores: tests), under sessions_lock. */
static pthread_mutex_t sessions_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pq_session *sessions;

/* SQL with SQLite's parameters ('?', '?N') as PostgreSQL's ($N), outside
 * quotes; *RET_COUNT the highest number. */
char *pq_convert_params(const char *sql, int *ret_count, unsigned *ret_used)
{
	char *out = malloc(strlen(sql) * 8 + 1), *o = out;
	bool quoted = false;
	int highest = 0;

	if (!out)
		return NULL;
	for (const char *p = sql; *p; p++) {
		if (*p == '\'')
			quoted = !quoted;
		if (*p != '?' || quoted) {
			*o++ = *p;
			continue;
		}
		int n = 0;
		while (p[1] >= '0' && p[1] <= '9')
			n = n * 10 + (*++p - '0');
		if (n == 0)
			n = highest + 1;
		if (n > highest)
			highest = n;
		if (n <= PGQ_PARAMS_MAX)
			*ret_used |= 1u << (n - 1);
		o += snprintf(o, 8, "$%d", n);
	}
	*o = '\0';
	*ret_count = highest;
	return out;
}

bool pq_sql_rowless(const char *sql)
{
	static const char *const verbs[] = {"UPDATE ", "INSERT ", "DELETE ", "NOTIFY "};

	while (*sql == ' ' || *sql == '\n' || *sql == '\t')
		sql++;
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strncasecmp(sql, verbs[i], strlen(verbs[i])) == 0)
			return !strcasestr(sql, "RETURNING");
	return false;
}

/* ------------------------------------------------ prepared statements */

void pq_session_open(PGconn *conn)
{
	struct pq_session *session = calloc(1, sizeof(*session));

	if (!session)
		return; /* its statements run unnamed */
	session->conn = conn;
	pthread_mutex_lock(&sessions_lock);
	session->next = sessions;
	sessions = session;
	pthread_mutex_unlock(&sessions_lock);
}

void pq_session_close(PGconn *conn)
{
	struct pq_session **p, *session = NULL;

	pthread_mutex_lock(&sessions_lock);
	for (p = &sessions; *p; p = &(*p)->next)
		if ((*p)->conn == conn) {
			session = *p;
			*p = session->next;
			break;
		}
	pthread_mutex_unlock(&sessions_lock);
	if (!session)
		return;
	for (int i = 0; i < PQ_SESSION_BUCKETS; i++)
		for (struct pq_text *t = session->buckets[i], *next; t; t = next) {
			next = t->next;
			free(t->given);
			free(t->sql);
			free(t);
		}
	free(session);
}

/* CONN's session, NULL when it has none (not the pool's). */
struct pq_session *pq_session_of(PGconn *conn)
{
	struct pq_session *session;

	pthread_mutex_lock(&sessions_lock);
	for (session = sessions; session && session->conn != conn; session = session->next)
		;
	pthread_mutex_unlock(&sessions_lock);
	return session;
}

static unsigned long text_hash(const char *text)
{
	unsigned long h = 5381;

	while (*text)
		h = h * 33 + (unsigned char)*text++;
	return h;
}

/* SESSION's entry of SQL, made when new; NULL when SESSION is full or out
 * of memory (the statement then runs unnamed). Only the thread that holds
 * SESSION's connection touches it. */
struct pq_text *pq_session_text(struct pq_session *session, const char *sql)
{
	unsigned long hash = text_hash(sql);
	struct pq_text **bucket = &session->buckets[hash % PQ_SESSION_BUCKETS], *t;

	for (t = *bucket; t; t = t->next)
		if (t->hash == hash && strcmp(t->given, sql) == 0)
			return t;
	if (session->text_count >= PQ_SESSION_TEXTS || !(t = calloc(1, sizeof(*t))))
		return NULL;
	t->hash = hash;
	if (!(t->given = strdup(sql)) || !(t->sql = pq_convert_params(sql, &t->nparams, &t->used)) ||
	    t->nparams > PGQ_PARAMS_MAX) {
		free(t->given);
		free(t->sql);
		free(t);
		return NULL;
	}
	t->rowless = pq_sql_rowless(sql);
	t->next = *bucket;
	*bucket = t;
	session->text_count++;
	return t;
}

const char *pq_session_find(const struct pq_text *t, const Oid *types)
{
	for (int i = 0; i < t->variant_count; i++)
		if (memcmp(t->variants[i].types, types, sizeof(t->variants[i].types)) == 0)
			return t->variants[i].name;
	return NULL;
}

const char *pq_session_prepared(struct pq_session *session, struct pq_text *t, PGconn *conn, const Oid *types,
				PGresult **ret_failed)
{
	struct pq_variant *v;
	PGresult *res;

	const char *name = pq_session_find(t, types);

	*ret_failed = NULL;
	if (name)
		return name;
	if (t->variant_count >= PQ_TEXT_VARIANTS)
		return NULL;
	v = &t->variants[t->variant_count];
	memcpy(v->types, types, sizeof(v->types));
	snprintf(v->name, sizeof(v->name), "ll%d", session->prepared_count);
	res = PQprepare(conn, v->name, t->sql, t->nparams, v->types);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		*ret_failed = res;
		return NULL;
	}
	PQclear(res);
	session->prepared_count++;
	t->variant_count++;
	return v->name;
}
