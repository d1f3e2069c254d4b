/*
 * pg_webhooks.c - the PostgreSQL store's queue of webhook deliveries
 * (store.h, store_webhook_due(), store_alert_webhook_status()): the
 * daemons sharing the database each claim what they hand out, so that no
 * two deliver one alert (store_webhooks.h for what both stores share).
 */
#include "pg_int.h"

#include "store/store_webhooks.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"

/* Forgets the claim of alert ID. */
static void claim_forget(struct store *s, long long id)
{
	pthread_mutex_lock(&s->shared_lock);
	for (int i = 0; i < s->claim_count; i++)
		if (s->claims[i] == id) {
			s->claims[i] = s->claims[--s->claim_count];
			break;
		}
	pthread_mutex_unlock(&s->shared_lock);
}

static int op_claims_release(struct store *s, void *arg)
{
	long long *now = arg;
	int rc = 0;

	for (int i = 0; i < s->claim_count && rc == 0; i++)
		rc = db_run(s, "UPDATE alerts SET webhook_due = ? WHERE id = ? AND webhook_due > ?", "iii",
			    *now, s->claims[i], *now);
	return rc;
}

void pg_webhook_claims_release(struct store *s)
{
	long long now = clock_now_ms();

	if (s->claim_count > 0)
		db_write(s, op_claims_release, &now);
	s->claim_count = 0;
}

int pg_alert_webhook_status(struct store *s, long long id, const char *status, long long retry_at_ms)
{
	int rc = webhook_status_write(s, id, status, retry_at_ms);

	if (rc == 0)
		claim_forget(s, id);
	return rc;
}

/* A delivery handed out by pg_webhook_due() is claimed for this long:
 * no other daemon gets it meanwhile; one that died mid-delivery leaves it
 * to another after that (at least once). */
#define PG_WEBHOOK_CLAIM_MS 120000

struct webhook_due_op {
	long long now;
	int limit;
	cJSON *due;
};

static int op_webhook_due(struct store *s, void *arg)
{
	struct webhook_due_op *a = arg;
	struct db_stmt st;
	int rc;

	if ((rc = db_prepare(s, WEBHOOK_DUE_SQL_LOCKED, &st)) < 0)
		return rc;
	db_bind(&st, "ii", a->now, (long long)a->limit);
	while ((rc = db_step(&st)) == DB_ROW) {
		long long id = db_column_int64(&st, 0);
		bool kept;
		pthread_mutex_lock(&s->shared_lock);
		kept = s->claim_count < PG_WEBHOOK_CLAIMS_MAX;
		if (kept)
			s->claims[s->claim_count++] = id;
		pthread_mutex_unlock(&s->shared_lock);
		if (!kept)
			break;
		webhook_due_add(a->due, &st);
		rc = db_run(s, "UPDATE alerts SET webhook_due = ? WHERE id = ?", "ii",
			    a->now + PG_WEBHOOK_CLAIM_MS, id);
		if (rc < 0)
			break;
	}
	db_finish(&st);
	return rc < 0 ? rc : 0;
}

int pg_webhook_due(struct store *s, long long now, int limit, cJSON **ret_due)
{
	struct webhook_due_op a = {now, limit, cJSON_CreateArray()};
	int rc;

	if (!a.due)
		return err_set(LL_ENOMEM, "Out of memory.");
	if ((rc = db_write(s, op_webhook_due, &a)) < 0) {
		cJSON_Delete(a.due);
		return rc;
	}
	*ret_due = a.due;
	return 0;
}
