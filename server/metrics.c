#include "metrics.h"

#include "server.h"

#include "loadlab/clock.h"

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

int metrics_render(struct server *server, struct buf *out)
{
	struct metrics *m = &server->metrics;
	struct store_stats st;
	int rc = store_stats(server->store, clock_now_ms(), &st);

	if (rc < 0)
		return rc;
	buf_printf(out, "# HELP loadlab_tasks Tasks by state (queued counts those waiting for a retry time too).\n"
			"# TYPE loadlab_tasks gauge\n");
	buf_printf(out, "loadlab_tasks{state=\"queued\"} %lld\n", st.tasks_queued);
	buf_printf(out, "loadlab_tasks{state=\"leased\"} %lld\n", st.tasks_leased);
	buf_printf(out, "loadlab_tasks{state=\"done\"} %lld\n", st.tasks_done);
	buf_printf(out, "loadlab_tasks{state=\"dead\"} %lld\n", st.tasks_dead);
	buf_printf(out, "loadlab_tasks{state=\"cancelled\"} %lld\n", st.tasks_cancelled);
	buf_printf(out, "# HELP loadlab_queue_ready Queued tasks whose retry time has come.\n"
			"# TYPE loadlab_queue_ready gauge\nloadlab_queue_ready %lld\n", st.tasks_ready);
	buf_printf(out, "# HELP loadlab_jobs Jobs by state.\n# TYPE loadlab_jobs gauge\n");
	buf_printf(out, "loadlab_jobs{state=\"queued\"} %lld\n", st.jobs_queued);
	buf_printf(out, "loadlab_jobs{state=\"running\"} %lld\n", st.jobs_running);
	buf_printf(out, "loadlab_jobs{state=\"done\"} %lld\n", st.jobs_done);
	buf_printf(out, "loadlab_jobs{state=\"failed\"} %lld\n", st.jobs_failed);
	buf_printf(out, "loadlab_jobs{state=\"cancelled\"} %lld\n", st.jobs_cancelled);
	buf_printf(out, "# HELP loadlab_agents Agents by state.\n# TYPE loadlab_agents gauge\n");
	buf_printf(out, "loadlab_agents{state=\"online\"} %lld\n", st.agents_online);
	buf_printf(out, "loadlab_agents{state=\"offline\"} %lld\n", st.agents_offline);
	buf_printf(out, "loadlab_agents{state=\"quarantined\"} %lld\n", st.agents_quarantined);
	buf_printf(out, "# HELP loadlab_leases_granted_total Leases granted since start.\n"
			"# TYPE loadlab_leases_granted_total counter\nloadlab_leases_granted_total %lld\n",
		   load(&m->leases_granted));
	buf_printf(out, "# HELP loadlab_leases_expired_total Leases expired since start.\n"
			"# TYPE loadlab_leases_expired_total counter\nloadlab_leases_expired_total %lld\n",
		   load(&m->leases_expired));
	buf_printf(out, "# HELP loadlab_results_ingested_total Results stored since start.\n"
			"# TYPE loadlab_results_ingested_total counter\nloadlab_results_ingested_total %lld\n",
		   load(&m->results_ingested));
	buf_printf(out, "# HELP loadlab_results_stored Results in the store.\n"
			"# TYPE loadlab_results_stored gauge\nloadlab_results_stored %lld\n", st.results);
	buf_printf(out, "# HELP loadlab_summaries_pending Results waiting for their report summary.\n"
			"# TYPE loadlab_summaries_pending gauge\nloadlab_summaries_pending %lld\n",
		   summarizer_pending(server->summarizer));
	buf_printf(out, "# HELP loadlab_store_commits_total Store transactions committed (group commit).\n"
			"# TYPE loadlab_store_commits_total counter\nloadlab_store_commits_total %lld\n",
		   st.commits);
	buf_printf(out, "# HELP loadlab_store_writes_total Store writes committed.\n"
			"# TYPE loadlab_store_writes_total counter\nloadlab_store_writes_total %lld\n",
		   st.committed_ops);

	buf_printf(out, "# HELP loadlab_http_connections Open HTTP connections.\n"
			"# TYPE loadlab_http_connections gauge\nloadlab_http_connections %ld\n",
		   atomic_load(&server->connections_open));
	buf_printf(out, "# HELP loadlab_http_connections_limit Connections held at most (--max-connections, open-files limit).\n"
			"# TYPE loadlab_http_connections_limit gauge\nloadlab_http_connections_limit %d\n",
		   server->capacity.connections);
	buf_printf(out, "# HELP loadlab_http_connection_limit_hits_total Times every connection was taken (new ones wait or are refused).\n"
			"# TYPE loadlab_http_connection_limit_hits_total counter\nloadlab_http_connection_limit_hits_total %lld\n",
		   load(&m->connection_limit_hits));
	buf_printf(out, "# HELP loadlab_http_header_timeouts_total Connections closed for not sending their headers in time.\n"
			"# TYPE loadlab_http_header_timeouts_total counter\nloadlab_http_header_timeouts_total %lld\n",
		   load(&m->header_timeouts));
	buf_printf(out, "# HELP loadlab_http_query_refused_total Requests refused for too many query arguments.\n"
			"# TYPE loadlab_http_query_refused_total counter\nloadlab_http_query_refused_total %lld\n",
		   load(&m->query_refused));
	buf_printf(out, "# HELP loadlab_long_polls Lease long-polls parked.\n"
			"# TYPE loadlab_long_polls gauge\nloadlab_long_polls %ld\n",
		   atomic_load(&server->long_polls));
	buf_printf(out, "# HELP loadlab_long_polls_limit Lease long-polls parked at most (--max-long-polls).\n"
			"# TYPE loadlab_long_polls_limit gauge\nloadlab_long_polls_limit %d\n",
		   server->capacity.long_polls);
	buf_printf(out, "# HELP loadlab_long_polls_refused_total Leases answered at once (204, Retry-After) as every long-poll place was taken.\n"
			"# TYPE loadlab_long_polls_refused_total counter\nloadlab_long_polls_refused_total %lld\n",
		   load(&m->long_polls_refused));

	buf_printf(out, "# HELP loadlab_http_requests_total HTTP requests by route and status class.\n"
			"# TYPE loadlab_http_requests_total counter\n");
	for (int r = -1; r < router_route_count; r++) {
		char route[128];
		if (r < 0)
			snprintf(route, sizeof(route), "unmatched");
		else
			snprintf(route, sizeof(route), "%s %s", router_routes[r].method, router_routes[r].pattern);
		for (int c = 1; c <= 5; c++) {
			long long n = load(&m->requests[r + 1][c]);
			if (n)
				buf_printf(out, "loadlab_http_requests_total{route=\"%s\",code=\"%dxx\"} %lld\n",
					   route, c, n);
		}
	}
	buf_printf(out, "# HELP loadlab_http_request_duration_seconds Time from first byte to response, by route.\n"
			"# TYPE loadlab_http_request_duration_seconds summary\n");
	for (int r = -1; r < router_route_count; r++) {
		char route[128];
		long long count = 0;
		for (int c = 1; c <= 5; c++)
			count += load(&m->requests[r + 1][c]);
		if (!count)
			continue;
		if (r < 0)
			snprintf(route, sizeof(route), "unmatched");
		else
			snprintf(route, sizeof(route), "%s %s", router_routes[r].method, router_routes[r].pattern);
		buf_printf(out, "loadlab_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n", route,
			   load(&m->duration_us[r + 1]) / 1e6);
		buf_printf(out, "loadlab_http_request_duration_seconds_count{route=\"%s\"} %lld\n", route,
			   count);
	}
	return 0;
}
