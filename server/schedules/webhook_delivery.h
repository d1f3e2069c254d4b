/*
 * webhook_delivery.h - posting alerts to their series' webhook, from a
 * small pool of threads that one hanging hook cannot stall.
 *
 * The queue is the store: an alert opened on a series with a webhook is
 * "pending" with a due time (store_series_check_record()), so a restart
 * loses nothing; at most STORE_WEBHOOK_PENDING_MAX wait, an alert beyond
 * that is marked failed at once and counted (outcome "dropped").
 *
 * WEBHOOK_THREADS threads take due deliveries (store_webhook_due()): at
 * most one at a time per series, in the order its alerts were opened, so
 * a slow or hanging hook delays only its own series' alerts. A delivery
 * reads the series' webhook URL as it is then, checks it again
 * (webhook_target_check()), and POSTs {"event":"regression","alert":ALERT}
 * (Content-Type application/json) with libcurl: no proxy, no redirects,
 * http and https only, --webhook-timeout seconds for the whole request,
 * and every address libcurl is about to connect to checked against the
 * allow list (webhook_address_allowed()) before the socket is opened, so
 * the address checked is the address reached.
 *
 * Outcomes, stored on the alert ("webhook") and counted in /metrics
 * (loadlab_webhook_deliveries_total{outcome}):
 *   "delivered"            a 2xx answer;
 *   "pending: attempt N of WEBHOOK_ATTEMPTS failed: ..." (outcome
 *                          "retried") tried again after 1, 2, 4, 8 s;
 *   "failed: ..."          the last attempt failed ("failed"), or the
 *                          target is not allowed ("refused": never retried),
 *                          or the series has no webhook any more.
 * A delivery under way when the daemon stops is abandoned and stays
 * pending, to be made after the restart.
 */
#ifndef LOADLAB_SERVER_WEBHOOK_DELIVERY_H
#define LOADLAB_SERVER_WEBHOOK_DELIVERY_H

struct server;
struct webhook_pool;

#define WEBHOOK_THREADS 4
#define WEBHOOK_ATTEMPTS 5
#define WEBHOOK_RETRY_FIRST_MS 1000

/* Starts the pool for SERVER (its store, config.webhook_allow and
 * config.webhook_timeout_s, metrics). */
int webhook_pool_start(struct server *server, struct webhook_pool **ret_pool);

/* Tells the pool that alert ALERT_ID was just opened: wakes a thread when
 * its delivery is pending, counts it as dropped when the queue was full. */
void webhook_pool_alert_opened(struct webhook_pool *pool, long long alert_id);

/* Stops the threads (deliveries under way are abandoned, still pending).
 * NULL is fine. */
void webhook_pool_stop(struct webhook_pool *pool);

#endif
