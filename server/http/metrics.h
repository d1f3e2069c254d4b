/*
 * metrics.h - counters for /metrics (Prometheus text format 0.0.4).
 *
 * Request counts by route and status class, and latency sums by route,
 * are counted in memory since start; queue depths and agent states are
 * read from the store when /metrics is scraped.
 */
#ifndef LOADLAB_SERVER_METRICS_H
#define LOADLAB_SERVER_METRICS_H

#include "loadlab/buf.h"

#define METRICS_MAX_ROUTES 64

/* How a webhook delivery attempt ended (schedules/webhook_delivery.h). */
enum metrics_webhook_outcome {
	METRICS_WEBHOOK_DELIVERED,
	METRICS_WEBHOOK_RETRIED,
	METRICS_WEBHOOK_FAILED,
	METRICS_WEBHOOK_REFUSED,
	METRICS_WEBHOOK_DROPPED,
	METRICS_WEBHOOK_OUTCOMES
};

struct metrics {
	/* [route index + 1][status / 100]; index 0: no route matched */
	long long requests[METRICS_MAX_ROUTES + 1][6];
	long long duration_us[METRICS_MAX_ROUTES + 1];
	long long leases_granted;
	long long leases_expired;
	long long lease_wakes_notify; /* long-polls woken by another replica's write (store_watch_tasks) */
	long long store_watch_reconnects; /* the task watch back after losing the store */
	long long results_ingested;
	long long long_polls_refused;    /* leases answered at once: long-poll cap reached */
	long long connection_limit_hits; /* times every connection was taken */
	long long header_timeouts;       /* connections closed for slow headers */
	long long body_timeouts;         /* connections closed for a body too slow or too long */
	long long answers_refused;       /* large answers refused (503 busy) past --answer-memory-bytes */
	long long bodies_abandoned;      /* connections closed by their client mid-body, cut at once */
	long long query_refused;         /* requests with too many query arguments */
	long long storage_full_refusals; /* writes refused for a full disk (507 storage_full) */
	long long webhook_outcomes[METRICS_WEBHOOK_OUTCOMES];
};

/* Counts one finished request (thread-safe). */
void metrics_count_request(struct metrics *metrics, int route_index, int status, long long duration_us);

/* Adds N to a counter (thread-safe). */
void metrics_add(long long *counter, long long n);

struct server;

/* Renders every metric into OUT. */
int metrics_render(struct server *server, struct buf *out);

#endif
