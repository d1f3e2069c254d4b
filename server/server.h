/*
 * server.h - the daemon's shared context: its configuration, its store,
 * summarizer and blob files, and the HTTP door's state (http/http.h).
 *
 * The frame (this folder: main.c, config.c, worker.c) starts the
 * subsystems, one folder each: store/ (the durable state, one folder per
 * backend), http/ (the door: libmicrohttpd glue, auth, capacity, metrics),
 * rest/ (a handler file per resource and the route table), reports/
 * (summaries, job reports, compare, series, calibration), schedules/
 * (scheduled jobs, cron, the lease-expiry tick). Each folder's header is
 * its manual.
 */
#ifndef LOADLAB_SERVER_SERVER_H
#define LOADLAB_SERVER_SERVER_H

#include "http/auth.h"
#include "http/http.h"
#include "store/blob_files.h"
#include "http/capacity.h"
#include "config.h"
#include "http/metrics.h"
#include "http/storage_full.h"
#include "store/store.h"
#include "store/store_async.h"
#include "reports/report_cache.h"
#include "reports/summarizer.h"

#include "loadlab/buf.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct MHD_Daemon;
struct agent_builds;
struct MHD_Connection;

struct server {
	struct config config;
	struct store *store;
	struct summarizer *summarizer;     /* result summaries, in the background */
	struct report_cache *report_cache; /* reports computed once per job state (reports/report_cache.h) */
	struct blob_store *blobs;          /* uploaded files (store/blob_files.h) */
	struct agent_builds *agent_builds; /* --agent-dir (agent_builds/agent_builds.h) */
	struct metrics metrics;
	const struct route_table *routes; /* what the door answers (rest/route_table.c) */
	struct MHD_Daemon *daemon;
	int port;                         /* the port bound (for --listen :0) */
	char *tls_cert_pem, *tls_key_pem; /* kept for the daemon's lifetime */

	pthread_mutex_t waiters_lock;
	struct http_request *waiters; /* suspended long-polls */
	pthread_t sweeper;
	bool sweeper_running;
	atomic_bool stopping;       /* set once by http_stop(), read by every thread */
	atomic_long inflight;       /* requests between first and completed callback */
	atomic_long writes_pending; /* connections suspended for a store write */
	atomic_llong answer_bytes;  /* built answers not yet sent (http.c, --answer-memory-bytes) */

	struct capacity capacity; /* connection and long-poll limits (capacity.h) */
	atomic_long connections_open;
	atomic_long long_polls; /* long-polls parked, or about to be */
	pthread_mutex_t conns_lock;
	struct http_conn *conns;         /* open connections, for their deadlines (http/conn_deadlines.h) */
	atomic_llong next_warning_ms[4]; /* one warning per limit per 10 s */
	atomic_llong storage_full_free_bytes; /* http/storage_full.h; -1: no write refused */
};

#endif
