/* Schedules, regression checks and webhooks in the background: see scheduler.h. */
#include "scheduler.h"

#include "bisect.h"
#include "cron.h"
#include "maintenance.h"
#include "webhook_delivery.h"
#include "reports/report.h"
#include "server.h"
#include "worker.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"
#include "loadlab/log.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* At most this many schedules fired and jobs checked per tick. */
#define SCHEDULER_BATCH 64

struct scheduler {
	struct server *server;
	struct scheduler_options options;
	bool recovered;
	long long next_maintenance_ms; /* maintenance.h */

	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stopping;
	pthread_t ticker;
	bool ticker_running;
	struct webhook_pool *webhooks;
};

static long long scheduler_now(struct scheduler *s)
{
	return s->options.clock ? s->options.clock(s->options.clock_context) : clock_now_ms();
}

int schedule_next_due(const char *cron, long long interval_s, long long previous_due_ms, long long now_ms,
		      long long *ret_next_ms)
{
	long long from = previous_due_ms > now_ms ? previous_due_ms : now_ms;

	if (cron) {
		struct cron_expr e;
		long long next_s;
		int rc;
		if ((rc = cron_parse(cron, &e)) < 0)
			return rc;
		/* whole seconds: a due time is a whole minute */
		if ((rc = cron_next(&e, from >= 0 ? from / 1000 : -((-from + 999) / 1000), &next_s)) < 0)
			return rc;
		*ret_next_ms = next_s * 1000;
		return 0;
	}
	if (interval_s < 1)
		return err_set(LL_EINVAL, "An interval is at least 1 second.");
	if (from < previous_due_ms)
		from = previous_due_ms;
	{
		long long step = interval_s * 1000;
		long long k = (from - previous_due_ms) / step + 1;
		*ret_next_ms = previous_due_ms + k * step;
	}
	return 0;
}

static int next_due_adapter(const char *cron, long long interval_s, long long previous_due_ms,
			    long long now_ms, long long *ret_next_ms)
{
	return schedule_next_due(cron, interval_s, previous_due_ms, now_ms, ret_next_ms);
}

/* LL_ESTATE when a file of SPEC's program (any build) is no longer
 * stored: a job naming it could never run (an agent's download would
 * get 404). 0 for a job without a program, or all its files there. */
static int check_program_blobs(struct server *server, const cJSON *spec)
{
	const cJSON *program = cJSON_GetObjectItemCaseSensitive(spec, "program"), *build, *file;
	cJSON *hexes, *missing = NULL;
	char hex[65];
	int rc, count;

	if (!program || !server->blobs)
		return 0;
	if (!(hexes = cJSON_CreateArray()))
		return LL_ENOMEM;
	for (int b = 0; (build = job_spec_program_build(program, b, NULL)); b++)
		cJSON_ArrayForEach(file, cJSON_GetObjectItemCaseSensitive(build, "files"))
			if (cJSON_IsString(file) && job_spec_blob_ref_valid(file->valuestring, hex))
				cJSON_AddItemToArray(hexes, cJSON_CreateString(hex));
	rc = blobs_missing(server->blobs, hexes, &missing, NULL);
	cJSON_Delete(hexes);
	if (rc == 0 && (count = cJSON_GetArraySize(missing)) > 0)
		rc = err_set(LL_ESTATE,
			     "No job made: %d of its program's files %s no longer stored (sha256 "
			     "%.12s...); upload them again, or change the schedule's job.",
			     count, count == 1 ? "is" : "are",
			     cJSON_GetStringValue(cJSON_GetArrayItem(missing, 0)));
	cJSON_Delete(missing);
	return rc;
}

int schedule_fire(struct server *server, struct store_schedule_claim *claim, long long now,
		  long long *ret_job_id)
{
	cJSON *submitted = NULL, *spec = NULL, *created = NULL;
	char who[48];
	int rc;

	snprintf(who, sizeof(who), "schedule:%lld", claim->schedule_id);
	rc = json_parse_object(claim->job_text, strlen(claim->job_text), 64, &submitted);
	if (rc == 0)
		rc = job_spec_normalize(submitted, &spec);
	if (rc == 0 && server->blobs) {
		/* the files checked and the job stored with no sweep between (route_jobs.c) */
		blobs_refs_lock(server->blobs);
		if ((rc = check_program_blobs(server, spec)) == 0)
			rc = store_job_create(server->store, spec, who, now, &created);
		blobs_refs_unlock(server->blobs);
	} else if (rc == 0) {
		rc = store_job_create(server->store, spec, who, now, &created);
	}
	if (rc == 0) {
		long long job_id =
			(long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(created, "id"));
		rc = store_schedule_run_finish(server->store, claim->run_id, job_id, NULL, now);
		char job[24];
		snprintf(job, sizeof(job), "%lld", job_id);
		log_event(LOG_INFO, "schedule_fired", "schedule", who, "job_id", job, NULL);
		*ret_job_id = job_id;
		http_waiters_wake_all(server);
	} else {
		char message[200];
		snprintf(message, sizeof(message), "%s", err_message(rc));
		log_event(LOG_WARN, "schedule_failed", "schedule", who, "error", message, NULL);
		store_schedule_run_finish(server->store, claim->run_id, 0, message, now);
		err_set(rc, "%s", message);
	}
	cJSON_Delete(submitted);
	cJSON_Delete(spec);
	cJSON_Delete(created);
	free(claim->job_text);
	claim->job_text = NULL;
	return rc;
}

static void recover(struct scheduler *s)
{
	cJSON *runs = NULL, *run;

	if (store_schedule_pending(s->server->store, &runs) < 0)
		return;
	cJSON_ArrayForEach(run, runs) {
		struct store_schedule_claim claim = {0};
		long long job_id;
		claim.run_id =
			(long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(run, "run_id"));
		claim.schedule_id =
			(long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(run, "schedule_id"));
		claim.due_ms = (long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(run, "due"));
		claim.job_text = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(run, "job"));
		if (claim.job_text)
			schedule_fire(s->server, &claim, scheduler_now(s), &job_id);
	}
	cJSON_Delete(runs);
	s->recovered = true;
}

static void fire_due(struct scheduler *s)
{
	long long ids[SCHEDULER_BATCH], now = scheduler_now(s), job_id;
	int n = 0;

	if (store_schedules_due(s->server->store, now, ids, SCHEDULER_BATCH, &n) < 0)
		return;
	for (int i = 0; i < n; i++) {
		struct store_schedule_claim claim = {0};
		if (store_schedule_claim(s->server->store, ids[i], false, now, next_due_adapter, &claim) < 0)
			continue;
		if (claim.skipped) {
			char id[24];
			snprintf(id, sizeof(id), "%lld", ids[i]);
			log_event(LOG_INFO, "schedule_skipped", "schedule_id", id, "reason", claim.reason,
				  NULL);
			continue;
		}
		schedule_fire(s->server, &claim, now, &job_id);
	}
}

/* The alert body of a comparison's regressing rows: {"threshold_pct",
 * "worst_change_pct","rows":[report_alert_row()...]}, the judged change. */
static cJSON *alert_of(const cJSON *comparison, double threshold)
{
	cJSON *alert = cJSON_CreateObject(), *rows = cJSON_CreateArray();
	const cJSON *row;
	double worst = -INFINITY;

	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(comparison, "rows")) {
		cJSON *r;
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(row, "regression")) ||
		    !(r = report_alert_row(row)))
			continue;
		if (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "change_pct")) > worst)
			worst = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "change_pct"));
		cJSON_AddItemToArray(rows, r);
	}
	cJSON_AddNumberToObject(alert, "threshold_pct", threshold);
	cJSON_AddNumberToObject(alert, "worst_change_pct", isfinite(worst) ? worst : 0);
	cJSON_AddItemToObject(alert, "rows", rows);
	return alert;
}

static void check_one(struct scheduler *s, long long job_id, const char *series, const char *state)
{
	struct store *store = s->server->store;
	struct store_series_settings settings = {0};
	long long baseline = 0, alert_id = 0;
	cJSON *comparison = NULL, *alert = NULL;
	const char *verdict = state;
	bool short_history = true;

	if (strcmp(state, "done") == 0) {
		if (store_series_previous_done(store, series, job_id, &baseline) < 0) {
			verdict = "first";
		} else if (store_series_settings_get(store, series, &settings) < 0 ||
			   report_change_point_alert(store, series, job_id, settings.threshold_pct, &alert,
						     &short_history) < 0) {
			return; /* tried again at the next tick */
		} else if (!short_history) {
			/* a long enough history: alerts come from its change points */
			verdict = alert ? "regression" : "ok";
		} else if (report_compare(store, baseline, job_id, settings.threshold_pct, &comparison) < 0) {
			return; /* tried again at the next tick */
		} else {
			verdict =
				cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(comparison, "verdict"));
			if (verdict && strcmp(verdict, "regression") == 0)
				alert = alert_of(comparison, settings.threshold_pct);
		}
	}
	if (store_series_check_record(store, job_id, series, baseline, verdict ? verdict : "unknown", alert,
				      scheduler_now(s), &alert_id) == 0 &&
	    alert_id)
		webhook_pool_alert_opened(s->webhooks, alert_id);
	cJSON_Delete(comparison);
	cJSON_Delete(alert);
}

static void check_finished(struct scheduler *s)
{
	cJSON *jobs = NULL, *job;

	if (store_series_unchecked(s->server->store, SCHEDULER_BATCH, &jobs) < 0)
		return;
	cJSON_ArrayForEach(job, jobs)
		check_one(s, (long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(job, "id")),
			  cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(job, "series")),
			  cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(job, "state")));
	cJSON_Delete(jobs);
}

void scheduler_tick(struct scheduler *s)
{
	if (!s->recovered)
		recover(s);
	fire_due(s);
	check_finished(s);
	if (scheduler_now(s) >= s->next_maintenance_ms) {
		struct maintenance_outcome outcome;
		int rc = maintenance_run(s->server->store, scheduler_now(s), false, &outcome);
		if (rc < 0)
			log_event(LOG_WARN, "store_maintenance_failed", "reason", err_message(rc), NULL);
		s->next_maintenance_ms = scheduler_now(s) + MAINTENANCE_PERIOD_MS;
	}
	bisect_tick(s->server);
}

/* Waits up to MS or until stopping; true when stopping. */
static bool wait_or_stop(struct scheduler *s, long long ms)
{
	return worker_wait_or_stop(&s->lock, &s->cond, &s->stopping, ms);
}

static void *ticker_main(void *arg)
{
	struct scheduler *s = arg;

	while (!wait_or_stop(s, s->options.tick_ms))
		scheduler_tick(s);
	return NULL;
}

int scheduler_start(struct server *server, const struct scheduler_options *options,
		    struct scheduler **ret_scheduler)
{
	struct scheduler *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return err_set(LL_ENOMEM, "Out of memory.");
	s->server = server;
	s->options = *options;
	if (s->options.tick_ms < 10)
		s->options.tick_ms = 10;
	s->next_maintenance_ms = scheduler_now(s) + MAINTENANCE_PERIOD_MS;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if ((rc = webhook_pool_start(server, &s->webhooks)) < 0) {
		scheduler_stop(s);
		return rc;
	}
	if (pthread_create(&s->ticker, NULL, ticker_main, s) != 0) {
		scheduler_stop(s);
		return err_set(LL_ENOMEM, "Cannot start the scheduler thread.");
	}
	s->ticker_running = true;
	*ret_scheduler = s;
	return 0;
}

void scheduler_stop(struct scheduler *s)
{
	if (!s)
		return;
	worker_request_stop(&s->lock, &s->cond, &s->stopping);
	if (s->ticker_running)
		pthread_join(s->ticker, NULL);
	webhook_pool_stop(s->webhooks);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
}
