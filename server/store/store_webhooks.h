/*
 * store_webhooks.h - what both drivers' queues of webhook deliveries
 * (store_webhook_due(), store_alert_webhook_status(): a backend's, since
 * PostgreSQL's daemons claim deliveries and SQLite's one daemon need not)
 * share, written once over db.h (store_series.c).
 */
#ifndef LOADLAB_SERVER_STORE_WEBHOOKS_H
#define LOADLAB_SERVER_STORE_WEBHOOKS_H

#include "db.h"

/* The due deliveries' query: a series' first pending alert (by id), when
 * its time has come (?1 now, ?2 the limit); columns as webhook_due_add()
 * reads them. PostgreSQL's locks the rows it hands out
 * (WEBHOOK_DUE_SQL_LOCKED). */
#define WEBHOOK_DUE_SQL                                                                            \
	"SELECT a.id, a.series, a.webhook_attempts FROM alerts a"                                  \
	" JOIN (SELECT min(id) AS id FROM alerts WHERE webhook_due IS NOT NULL GROUP BY series) f" \
	" ON a.id = f.id WHERE a.webhook_due <= ? ORDER BY a.webhook_due, a.id LIMIT ?"
#define WEBHOOK_DUE_SQL_LOCKED WEBHOOK_DUE_SQL " FOR UPDATE OF a SKIP LOCKED"

/* Adds the delivery of ROW ({"alert_id", "series", "attempts"}) to the
 * array DUE. */
void webhook_due_add(void *due, struct db_stmt *row);

/* Stores the outcome STATUS of alert ID's delivery, and RETRY_AT_MS, when
 * not 0, as when to try again (one attempt more); its own write. */
int webhook_status_write(struct store *s, long long id, const char *status, long long retry_at_ms);

#endif
