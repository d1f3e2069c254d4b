/*
 * sqlite_webhooks.c - the SQLite store's queue of webhook deliveries
 * (store.h, store_webhook_due()): its one daemon hands out what is due
 * without claiming it (store_webhooks.h).
 */
#include "sqlite_int.h"

#include "store/store_webhooks.h"

#include "loadlab/err.h"

int sqlite_webhook_due(struct store *s, long long now, int limit, cJSON **ret_due)
{
	cJSON *due = cJSON_CreateArray();
	int rc;

	if (!due)
		return err_set(LL_ENOMEM, "Out of memory.");
	rc = db_read_rows(s, WEBHOOK_DUE_SQL, webhook_due_add, due, "ii", now, (long long)limit);
	return db_answer(rc, due, ret_due);
}
