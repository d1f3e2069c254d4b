/*
 * routes.h - the REST handlers, one file per resource (route_jobs.c,
 * route_agents.c, ...), and rest_route_table, route_table.c's table that
 * names them all and that main.c gives the HTTP door (http/http.h). What
 * several handlers do alike is route_util.h's.
 */
#ifndef LOADLAB_SERVER_ROUTES_H
#define LOADLAB_SERVER_ROUTES_H

#include "server.h"

/* Body limits (413 beyond): results carry raw samples. */
#define ROUTE_MAX_BODY (64 * 1024)
#define ROUTE_MAX_RESULT_BODY (4 * 1024 * 1024)

/* Every route, for server->routes. */
extern const struct route_table rest_route_table;

int route_health(struct http_request *req, struct http_reply *reply);
int route_metrics(struct http_request *req, struct http_reply *reply);

int route_jobs_create(struct http_request *req, struct http_reply *reply);
int route_jobs_list(struct http_request *req, struct http_reply *reply);
int route_jobs_get(struct http_request *req, struct http_reply *reply);
int route_jobs_cancel(struct http_request *req, struct http_reply *reply);

int route_bisect_create(struct http_request *req, struct http_reply *reply);
int route_bisect_get(struct http_request *req, struct http_reply *reply);
int route_bisect_cancel(struct http_request *req, struct http_reply *reply);

int route_reports_job(struct http_request *req, struct http_reply *reply);
int route_reports_compare(struct http_request *req, struct http_reply *reply);

int route_agents_enroll(struct http_request *req, struct http_reply *reply);
int route_agents_list(struct http_request *req, struct http_reply *reply);
int route_agents_get(struct http_request *req, struct http_reply *reply);
int route_agents_patch(struct http_request *req, struct http_reply *reply);
int route_agents_heartbeat(struct http_request *req, struct http_reply *reply);

int route_lease(struct http_request *req, struct http_reply *reply);

/* /api/v1/agent-builds (route_agent_builds.c) */
int route_agent_builds_list(struct http_request *req, struct http_reply *reply);
int route_agent_builds_get(struct http_request *req, struct http_reply *reply);
int route_agent_builds_pin(struct http_request *req, struct http_reply *reply);
int route_agent_builds_unpin(struct http_request *req, struct http_reply *reply);
int route_agent_builds_rescan(struct http_request *req, struct http_reply *reply);

int route_tasks_progress(struct http_request *req, struct http_reply *reply);
int route_tasks_result(struct http_request *req, struct http_reply *reply);
int route_tasks_fail(struct http_request *req, struct http_reply *reply);

int route_results_get(struct http_request *req, struct http_reply *reply);

int route_tokens_create(struct http_request *req, struct http_reply *reply);
int route_tokens_list(struct http_request *req, struct http_reply *reply);
int route_tokens_revoke(struct http_request *req, struct http_reply *reply);

int route_web(struct http_request *req, struct http_reply *reply);

/* series, schedules, regression alerts */
int route_series_list(struct http_request *req, struct http_reply *reply);
int route_series_get(struct http_request *req, struct http_reply *reply);
int route_series_put(struct http_request *req, struct http_reply *reply);
/* 0 when REQ's caller may ACTION ("bisect", "add revisions to") series
 * NAME: its owner (store_series_settings: who set its settings, else the
 * submitter of its first job), of the owner's team, an admin, or anyone
 * while nobody owns it. Else LL_EFORBIDDEN "Series 'NAME' belongs to
 * OWNER: only its owner or an admin may ACTION it." (docs/series.md,
 * "Owners"). */
int route_series_owner_check(struct http_request *req, const char *name, const char *action);
/* Bounds of a series' retention (route_series.c): 100 years, 10 million jobs. */
#define ROUTE_RETAIN_DAYS_MAX 36500
#define ROUTE_RETAIN_POINTS_MAX 10000000
/* POST /api/v1/admin/compact (route_admin.c): retention, then compaction. */
int route_admin_compact(struct http_request *req, struct http_reply *reply);
int route_schedules_create(struct http_request *req, struct http_reply *reply);
int route_schedules_list(struct http_request *req, struct http_reply *reply);
int route_schedules_get(struct http_request *req, struct http_reply *reply);
int route_schedules_patch(struct http_request *req, struct http_reply *reply);
int route_schedules_delete(struct http_request *req, struct http_reply *reply);
int route_schedules_run(struct http_request *req, struct http_reply *reply);
int route_alerts_list(struct http_request *req, struct http_reply *reply);
int route_alerts_ack(struct http_request *req, struct http_reply *reply);
/* /api/v1/blobs/{sha256} (route_blobs.c). A PUT's body is streamed
 * through route_blobs_put_stream; route_blobs_put() finishes it. */
extern const struct route_stream route_blobs_put_stream;
int route_blobs_put(struct http_request *req, struct http_reply *reply);
int route_blobs_head(struct http_request *req, struct http_reply *reply);
int route_blobs_get(struct http_request *req, struct http_reply *reply);

/* For a program job's SPEC (normalized, or as submitted: the manifest has
 * one form): 0 when every blob of its manifest is stored and they add up
 * to at most --program-max-bytes (once per path); else REPLY is filled
 * (400 missing_blobs, "error.missing" lists them; 413 program_too_large)
 * and a negative code returned. 0 for a job without a program. Hold
 * blobs_refs_lock() from here until the job is stored (route_jobs.c;
 * schedules check without it: the check marks the blobs used now, and the
 * retention sweep keeps what a schedule names). */
int route_blobs_check_spec(struct http_request *req, const cJSON *spec, struct http_reply *reply);

/* Opens server->blobs under the data folder and starts its retention
 * sweeper (main.c). */
int route_blobs_start(struct server *server);

#endif
