#include "metrics.h"

#include "server.h"

#include "loadlab/clock.h"

#include <stdio.h>
#include <string.h>

void metrics_add(long long *counter, long long n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

void metrics_count_request(struct metrics *m, int route_index, int status, long long duration_us)
{
	int slot = route_index + 1, class = status / 100;

	if (slot < 0 || slot > METRICS_MAX_ROUTES || class < 1 || class > 5)
		return;
	metrics_add(&m->requests[slot][class], 1);
	metrics_add(&m->duration_us[slot], duration_us);
}

static long long load(const long long *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

/* One metric without labels: its HELP and TYPE lines and its value. */
static void metric(struct buf *out, const char *name, const char *type, const char *help, long long value)
{
	buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n%s %lld\n", name, help, name, type, name, value);
}

struct state_count {
	const char *state;
	long long count;
};

/* A gauge by state: its HELP and TYPE lines and one line per state. */
static void gauge_by_state(struct buf *out, const char *name, const char *help,
			   const struct state_count *states, size_t count)
{
	buf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (size_t i = 0; i < count; i++)
		buf_printf(out, "%s{state=\"%s\"} %lld\n", name, states[i].state, states[i].count);
}

/* The route label of route R of TABLE, or of no route when R < 0. */
static void route_label(const struct route_table *table, int r, char *route, size_t size)
{
	if (r < 0)
		snprintf(route, size, "unmatched");
	else
		snprintf(route, size, "%s %s", table->routes[r].method, table->routes[r].pattern);
}

#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

/* Versions loadlab_agents_by_version tells apart; the rest are "other". */
#define METRICS_AGENT_VERSIONS 32

/* loadlab_agents_by_version: the agents counted by the version they report
 * ("agent_version" of GET /api/v1/agents; "unknown" when none). A version
 * comes from an agent: only [A-Za-z0-9._+-] of its first 64 characters
 * are kept (others become '_'), so the label needs no escaping. */
static void agents_by_version(struct server *server, struct buf *out)
{
	char names[METRICS_AGENT_VERSIONS][65];
	long long counts[METRICS_AGENT_VERSIONS] = {0}, other = 0;
	int used = 0;
	cJSON *list = NULL, *agent;

	if (store_agent_list(server->store, clock_now_ms(), &list) < 0)
		return;
	cJSON_ArrayForEach(agent, cJSON_GetObjectItemCaseSensitive(list, "agents")) {
		const char *v =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(agent, "agent_version"));
		char name[65];
		int i;
		snprintf(name, sizeof(name), "%s", v && v[0] ? v : "unknown");
		for (char *c = name; *c; c++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-", *c))
				*c = '_';
		for (i = 0; i < used && strcmp(names[i], name) != 0; i++)
			;
		if (i == used && used < METRICS_AGENT_VERSIONS)
			snprintf(names[used++], sizeof(names[0]), "%s", name);
		if (i < used)
			counts[i]++;
		else
			other++;
	}
	cJSON_Delete(list);
	buf_printf(out, "# HELP loadlab_agents_by_version Enrolled agents by the version they report.\n"
			"# TYPE loadlab_agents_by_version gauge\n");
	for (int i = 0; i < used; i++)
		buf_printf(out, "loadlab_agents_by_version{version=\"%s\"} %lld\n", names[i], counts[i]);
	if (other)
		buf_printf(out, "loadlab_agents_by_version{version=\"other\"} %lld\n", other);
}

int metrics_render(struct server *server, struct buf *out)
{
	struct metrics *m = &server->metrics;
	struct store_stats st;
	struct blob_usage blobs = {0};
	struct report_cache_stats reports = {0};
	long long catchups = 0;
	bool leader = summarizer_leader(server->summarizer, &catchups);
	int rc = store_stats(server->store, clock_now_ms(), &st);

	if (rc < 0)
		return rc;
	if (server->blobs)
		blobs_usage(server->blobs, &blobs);
	if (server->report_cache)
		report_cache_stats(server->report_cache, &reports);
	const struct state_count tasks[] = {
		{"queued", st.tasks_queued}, {"leased", st.tasks_leased},       {"done", st.tasks_done},
		{"dead", st.tasks_dead},     {"cancelled", st.tasks_cancelled},
	};
	const struct state_count jobs[] = {
		{"queued", st.jobs_queued}, {"running", st.jobs_running},     {"done", st.jobs_done},
		{"failed", st.jobs_failed}, {"cancelled", st.jobs_cancelled},
	};
	const struct state_count agents[] = {
		{"online", st.agents_online},
		{"offline", st.agents_offline},
		{"quarantined", st.agents_quarantined},
	};
	const struct {
		const char *name, *type, *help;
		long long value;
	} plain[] = {
		{"loadlab_leases_granted_total", "counter", "Leases granted since start.",
		 load(&m->leases_granted)},
		{"loadlab_leases_expired_total", "counter", "Leases expired since start.",
		 load(&m->leases_expired)},
		{"loadlab_lease_wakes_notify_total", "counter",
		 "Times the parked long-polls were woken by another replica's write on the shared store"
		 " (PostgreSQL LISTEN/NOTIFY; always 0 on SQLite).",
		 load(&m->lease_wakes_notify)},
		{"loadlab_store_watch_reconnects_total", "counter",
		 "Times the task watch connected again after losing the store (the long-polls then look "
		 "again).",
		 load(&m->store_watch_reconnects)},
		{"loadlab_results_ingested_total", "counter", "Results stored since start.",
		 load(&m->results_ingested)},
		{"loadlab_results_stored", "gauge", "Results in the store.", st.results},
		{"loadlab_summaries_pending", "gauge", "Results waiting for their report summary.",
		 summarizer_pending(server->summarizer)},
		{"loadlab_summarizer_leader", "gauge",
		 "1 when this replica holds the summarizer's role (its catch-up scans; always 1 on SQLite).",
		 leader ? 1 : 0},
		{"loadlab_summarizer_catchups_total", "counter",
		 "Scans of the store for results without a summary this replica ran (at start, or on taking "
		 "the role over).",
		 catchups},
		{"loadlab_store_commits_total", "counter", "Store transactions committed (group commit).",
		 st.commits},
		{"loadlab_store_writes_total", "counter", "Store writes committed.", st.committed_ops},
		{"loadlab_store_syncs_total", "counter",
		 "Fsyncs of the store's log, each making the commits before it durable.", st.syncs},
		{"loadlab_http_connections", "gauge", "Open HTTP connections.",
		 atomic_load(&server->connections_open)},
		{"loadlab_http_connections_limit", "gauge",
		 "Connections held at most (--max-connections, open-files limit).",
		 server->capacity.connections},
		{"loadlab_http_connection_limit_hits_total", "counter",
		 "Times every connection was taken (new ones wait or are refused).",
		 load(&m->connection_limit_hits)},
		{"loadlab_http_header_timeouts_total", "counter",
		 "Connections closed for not sending their headers in time.", load(&m->header_timeouts)},
		{"loadlab_http_body_timeouts_total", "counter",
		 "Connections closed for a body slower than --body-min-rate or longer than --body-timeout.",
		 load(&m->body_timeouts)},
		{"loadlab_http_bodies_abandoned_total", "counter",
		 "Connections their client closed mid-body, released at once.", load(&m->bodies_abandoned)},
		{"loadlab_http_requests_in_flight", "gauge",
		 "Requests between their first byte and their end (answered or cut).",
		 atomic_load(&server->inflight)},
		{"loadlab_http_answer_bytes", "gauge",
		 "Bytes of built answers not yet sent (slow readers hold theirs).",
		 atomic_load(&server->answer_bytes)},
		{"loadlab_http_answers_refused_total", "counter",
		 "Large answers refused (503 busy) as answers held passed --answer-memory-bytes.",
		 load(&m->answers_refused)},
		{"loadlab_blob_stored_bytes", "gauge", "Bytes of stored blobs.", blobs.used_bytes},
		{"loadlab_blob_reserved_bytes", "gauge",
		 "Bytes received by blob uploads in flight (counted against --blob-quota-bytes).",
		 blobs.reserved_bytes},
		{"loadlab_blob_uploads_open", "gauge", "Blob uploads begun and not yet ended.",
		 blobs.uploads_open},
		{"loadlab_storage_full_refusals_total", "counter",
		 "Writes refused (507 storage_full) because the data folder's disk was full.",
		 load(&m->storage_full_refusals)},
		{"loadlab_store_bytes", "gauge",
		 "Bytes of the store's file (its pages; SQLite: the WAL not included).", st.store_bytes},
		{"loadlab_store_free_bytes", "gauge",
		 "Bytes of the store's file that hold nothing (what a compaction returns).",
		 st.store_free_bytes},
		{"loadlab_http_query_refused_total", "counter",
		 "Requests refused for too many query arguments.", load(&m->query_refused)},
		{"loadlab_report_cache_hits_total", "counter",
		 "Reports and A/B compares answered from the report cache (reports/report_cache.h).",
		 reports.hits},
		{"loadlab_report_cache_misses_total", "counter",
		 "Reports and compares computed (none kept for the job's state, none computing).",
		 reports.computed},
		{"loadlab_report_cache_joins_total", "counter",
		 "Requests that waited for an identical report already computing instead of computing it.",
		 reports.joined},
		{"loadlab_report_cache_evictions_total", "counter",
		 "Kept reports dropped: least recently used past the cache's cap, or of a job's older state.",
		 reports.evicted},
		{"loadlab_report_cache_entries", "gauge", "Reports kept in the report cache.",
		 reports.entries},
		{"loadlab_report_cache_bytes", "gauge", "Bytes of the reports kept in the report cache.",
		 reports.bytes},
		{"loadlab_reports_computing", "gauge", "Report computations queued or running.",
		 reports.computing},
		{"loadlab_reports_refused_total", "counter",
		 "Report requests refused (503 busy) as the most computations at once were queued or "
		 "running.",
		 reports.refused},
		{"loadlab_long_polls", "gauge", "Lease long-polls parked.", atomic_load(&server->long_polls)},
		{"loadlab_long_polls_limit", "gauge", "Lease long-polls parked at most (--max-long-polls).",
		 server->capacity.long_polls},
		{"loadlab_long_polls_refused_total", "counter",
		 "Leases answered at once (204, Retry-After) as every long-poll place was taken.",
		 load(&m->long_polls_refused)},
	};

	buf_printf(out,
		   "# HELP loadlab_build_info The daemon's version (agents': GET /api/v1/agents).\n"
		   "# TYPE loadlab_build_info gauge\nloadlab_build_info{version=\"%s\"} 1\n",
		   LOADLAB_VERSION);
	agents_by_version(server, out);
	gauge_by_state(out, "loadlab_tasks",
		       "Tasks by state (queued counts those waiting for a retry time too).", tasks,
		       COUNT_OF(tasks));
	metric(out, "loadlab_queue_ready", "gauge", "Queued tasks whose retry time has come.",
	       st.tasks_ready);
	gauge_by_state(out, "loadlab_jobs", "Jobs by state.", jobs, COUNT_OF(jobs));
	gauge_by_state(out, "loadlab_agents", "Agents by state.", agents, COUNT_OF(agents));
	for (size_t i = 0; i < COUNT_OF(plain); i++)
		metric(out, plain[i].name, plain[i].type, plain[i].help, plain[i].value);
	{
		static const char *const outcomes[] = {"delivered", "retried", "failed", "refused",
						       "dropped"};
		_Static_assert(COUNT_OF(outcomes) == METRICS_WEBHOOK_OUTCOMES, "one name per outcome");
		buf_printf(out,
			   "# HELP loadlab_webhook_deliveries_total Webhook delivery attempts by outcome.\n"
			   "# TYPE loadlab_webhook_deliveries_total counter\n");
		for (int i = 0; i < METRICS_WEBHOOK_OUTCOMES; i++)
			buf_printf(out, "loadlab_webhook_deliveries_total{outcome=\"%s\"} %lld\n",
				   outcomes[i], load(&m->webhook_outcomes[i]));
		metric(out, "loadlab_webhook_queue", "gauge",
		       "Alerts waiting for their webhook (in the store).", st.webhooks_pending);
	}

	buf_printf(out, "# HELP loadlab_http_requests_total HTTP requests by route and status class.\n"
			"# TYPE loadlab_http_requests_total counter\n");
	for (int r = -1; r < server->routes->count; r++) {
		char route[128];
		route_label(server->routes, r, route, sizeof(route));
		for (int c = 1; c <= 5; c++) {
			long long n = load(&m->requests[r + 1][c]);
			if (n)
				buf_printf(out,
					   "loadlab_http_requests_total{route=\"%s\",code=\"%dxx\"} %lld\n",
					   route, c, n);
		}
	}
	buf_printf(
		out,
		"# HELP loadlab_http_request_duration_seconds Time from first byte to response, by route.\n"
		"# TYPE loadlab_http_request_duration_seconds summary\n");
	for (int r = -1; r < server->routes->count; r++) {
		char route[128];
		long long count = 0;
		for (int c = 1; c <= 5; c++)
			count += load(&m->requests[r + 1][c]);
		if (!count)
			continue;
		route_label(server->routes, r, route, sizeof(route));
		buf_printf(out, "loadlab_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n", route,
			   load(&m->duration_us[r + 1]) / 1e6);
		buf_printf(out, "loadlab_http_request_duration_seconds_count{route=\"%s\"} %lld\n", route,
			   count);
	}
	return 0;
}
