/*
 * route_table.c - the route table, beside the handlers it names (one
 * route_*.c per resource): method, path pattern, who may call, body limit,
 * handler; and the routes whose body is streamed. main.c gives it to the
 * HTTP door (server->routes), which matches it (http/http_route.c). A
 * pattern's "{id}" matches a decimal id 1..2^53, "{sha256}" 64 lowercase
 * hex digits; a final "{name}" matches the rest of the path (its handler
 * reads it from req->path), '/' included, as series names have them.
 */
#include "routes.h"

#include "loadlab/job_spec.h"

static const struct route routes[] = {
	{"GET", "/healthz", AUTH_ANYONE, 0, route_health},
	{"GET", "/metrics", AUTH_METRICS, 0, route_metrics},
	{"POST", "/api/v1/jobs", AUTH_USER, JOB_SPEC_MAX_BODY, route_jobs_create},
	{"GET", "/api/v1/jobs", AUTH_READER, 0, route_jobs_list},
	{"GET", "/api/v1/jobs/{id}", AUTH_READER, 0, route_jobs_get},
	{"POST", "/api/v1/jobs/{id}/cancel", AUTH_USER, ROUTE_MAX_BODY, route_jobs_cancel},
	{"GET", "/api/v1/jobs/{id}/report", AUTH_READER, 0, route_reports_job},
	{"GET", "/api/v1/compare", AUTH_READER, 0, route_reports_compare},
	{"POST", "/api/v1/agents/enroll", AUTH_ENROLL, ROUTE_MAX_BODY, route_agents_enroll},
	{"GET", "/api/v1/agents", AUTH_READER, 0, route_agents_list},
	{"GET", "/api/v1/agents/{id}", AUTH_READER, 0, route_agents_get},
	{"PATCH", "/api/v1/agents/{id}", AUTH_ADMIN, ROUTE_MAX_BODY, route_agents_patch},
	{"POST", "/api/v1/agents/{id}/heartbeat", AUTH_AGENT, ROUTE_MAX_BODY, route_agents_heartbeat},
	{"POST", "/api/v1/lease", AUTH_AGENT, ROUTE_MAX_BODY, route_lease},
	{"GET", "/api/v1/agent-builds", AUTH_READER_OR_AGENT, 0, route_agent_builds_list},
	{"PUT", "/api/v1/agent-builds/pin", AUTH_ADMIN, ROUTE_MAX_BODY, route_agent_builds_pin},
	{"DELETE", "/api/v1/agent-builds/pin", AUTH_ADMIN, 0, route_agent_builds_unpin},
	{"POST", "/api/v1/agent-builds/rescan", AUTH_ADMIN, ROUTE_MAX_BODY, route_agent_builds_rescan},
	{"GET", "/api/v1/agent-builds/{name}", AUTH_READER_OR_AGENT, 0, route_agent_builds_get},
	{"POST", "/api/v1/tasks/{id}/progress", AUTH_AGENT, ROUTE_MAX_BODY, route_tasks_progress},
	{"POST", "/api/v1/tasks/{id}/result", AUTH_AGENT, ROUTE_MAX_RESULT_BODY, route_tasks_result},
	{"POST", "/api/v1/tasks/{id}/fail", AUTH_AGENT, ROUTE_MAX_BODY, route_tasks_fail},
	{"POST", "/api/v1/tokens", AUTH_ADMIN, ROUTE_MAX_BODY, route_tokens_create},
	{"GET", "/api/v1/tokens", AUTH_ADMIN, 0, route_tokens_list},
	{"DELETE", "/api/v1/tokens/{id}", AUTH_ADMIN, 0, route_tokens_revoke},
	{"GET", "/api/v1/results/{id}", AUTH_READER, 0, route_results_get},
	{"POST", "/api/v1/admin/compact", AUTH_ADMIN, ROUTE_MAX_BODY, route_admin_compact},
	/* series, schedules, regression alerts */
	{"GET", "/api/v1/series", AUTH_READER, 0, route_series_list},
	/* before the series' own routes: {name} then "/bisect" (http_route.c) */
	{"POST", "/api/v1/series/{name}/bisect", AUTH_USER, ROUTE_MAX_BODY, route_bisect_create},
	{"GET", "/api/v1/bisections/{id}", AUTH_READER, 0, route_bisect_get},
	{"POST", "/api/v1/bisections/{id}/cancel", AUTH_USER, ROUTE_MAX_BODY, route_bisect_cancel},
	{"GET", "/api/v1/series/{name}", AUTH_READER, 0, route_series_get},
	{"PUT", "/api/v1/series/{name}", AUTH_USER, ROUTE_MAX_BODY, route_series_put},
	{"POST", "/api/v1/schedules", AUTH_USER, ROUTE_MAX_BODY, route_schedules_create},
	{"GET", "/api/v1/schedules", AUTH_READER, 0, route_schedules_list},
	{"GET", "/api/v1/schedules/{id}", AUTH_READER, 0, route_schedules_get},
	{"PATCH", "/api/v1/schedules/{id}", AUTH_USER, ROUTE_MAX_BODY, route_schedules_patch},
	{"DELETE", "/api/v1/schedules/{id}", AUTH_USER, 0, route_schedules_delete},
	{"POST", "/api/v1/schedules/{id}/run", AUTH_USER, ROUTE_MAX_BODY, route_schedules_run},
	{"GET", "/api/v1/alerts", AUTH_READER, 0, route_alerts_list},
	{"POST", "/api/v1/alerts/{id}/ack", AUTH_USER, ROUTE_MAX_BODY, route_alerts_ack},
	{"PUT", "/api/v1/blobs/{sha256}", AUTH_USER_OR_AGENT, 0, route_blobs_put},
	{"HEAD", "/api/v1/blobs/{sha256}", AUTH_USER_OR_AGENT, 0, route_blobs_head},
	{"GET", "/api/v1/blobs/{sha256}", AUTH_READER_OR_AGENT, 0, route_blobs_get},
	{"GET", "/", AUTH_ANYONE, 0, route_web},
	{"GET", "/app.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/helpers.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/fleet.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/jobs.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/job.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/submit.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/report.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/compare.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/series.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/program.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/calibration.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/cold.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/notes.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/churn.js", AUTH_ANYONE, 0, route_web},
	{"GET", "/assets/echarts.min.js", AUTH_ANYONE, 0, route_web},
};

/* The routes whose body is streamed to them, by handler. */
static const struct route_streamed streamed[] = {
	{route_blobs_put, &route_blobs_put_stream},
};

const struct route_table rest_route_table = {
	routes,
	(int)(sizeof(routes) / sizeof(routes[0])),
	streamed,
	(int)(sizeof(streamed) / sizeof(streamed[0])),
};

_Static_assert(sizeof(routes) / sizeof(routes[0]) <= METRICS_MAX_ROUTES, "raise METRICS_MAX_ROUTES");
