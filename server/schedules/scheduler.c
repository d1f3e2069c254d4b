/* Schedules, regression checks and webhooks in the background: see scheduler.h. */
#include "scheduler.h"

#include "cron.h"
#include "reports/report.h"
#include "server.h"
#include "worker.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"
#include "loadlab/log.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* At most this many schedules fired and jobs checked per tick. */
#define SCHEDULER_BATCH 64

struct webhook_item {
	long long alert_id;
	char url[STORE_WEBHOOK_URL_MAX + 1];
};

struct scheduler {
	struct server *server;
	struct scheduler_options options;
	bool recovered;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stopping;
	pthread_t ticker, poster;
	bool ticker_running, poster_running;

	struct webhook_item webhooks[SCHEDULER_WEBHOOK_QUEUE_MAX];
	int webhook_head, webhook_count;
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
	if (rc == 0)
		rc = store_job_create(server->store, spec, who, now, &created);
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

static void webhook_enqueue(struct scheduler *s, long long alert_id, const char *url)
{
	pthread_mutex_lock(&s->lock);
	if (s->webhook_count == SCHEDULER_WEBHOOK_QUEUE_MAX) {
		pthread_mutex_unlock(&s->lock);
		log_event(LOG_WARN, "webhook_dropped", "reason", "queue full", NULL);
		return;
	}
	{
		struct webhook_item *w =
			&s->webhooks[(s->webhook_head + s->webhook_count) % SCHEDULER_WEBHOOK_QUEUE_MAX];
		w->alert_id = alert_id;
		snprintf(w->url, sizeof(w->url), "%s", url);
		s->webhook_count++;
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* The alert body of a comparison's regressing rows: {"threshold_pct",
 * "worst_change_pct","rows":[{"variant","cell","change_pct",...}]}. */
static cJSON *alert_of(const cJSON *comparison, double threshold)
{
	cJSON *alert = cJSON_CreateObject(), *rows = cJSON_CreateArray();
	const cJSON *row;
	double worst = -INFINITY;
	static const char *const keys[] = {"variant",
					   "cell",
					   "change_pct",
					   "baseline_median_us",
					   "candidate_median_us",
					   "p_value",
					   "ratio_ci_low",
					   "ratio_ci_high",
					   NULL};

	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(comparison, "rows")) {
		cJSON *r;
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(row, "regression")))
			continue;
		r = cJSON_CreateObject();
		for (int i = 0; keys[i]; i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, keys[i]);
			if (v)
				cJSON_AddItemToObject(r, keys[i], cJSON_Duplicate(v, true));
		}
		if (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "change_pct")) > worst)
			worst = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "change_pct"));
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

	if (strcmp(state, "done") == 0) {
		if (store_series_previous_done(store, series, job_id, &baseline) < 0) {
			verdict = "first";
		} else if (store_series_settings_get(store, series, &settings) < 0 ||
			   report_compare(store, baseline, job_id, settings.threshold_pct, &comparison) < 0) {
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
	    alert_id && settings.webhook_url[0])
		webhook_enqueue(s, alert_id, settings.webhook_url);
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

static size_t discard(char *data, size_t size, size_t n, void *context)
{
	(void)data;
	(void)context;
	return size * n;
}

/* One POST; 0 on a 2xx answer, else LL_EIO with a message in MESSAGE. */
static int webhook_post(const char *url, const char *body, char *message, size_t size)
{
	CURL *curl = curl_easy_init();
	struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
	long status = 0;
	CURLcode code;

	if (!curl) {
		curl_slist_free_all(headers);
		snprintf(message, size, "out of memory");
		return LL_ENOMEM;
	}
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)SCHEDULER_WEBHOOK_TIMEOUT_S);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
	code = curl_easy_perform(curl);
	if (code == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(curl);
	curl_slist_free_all(headers);
	if (code != CURLE_OK) {
		snprintf(message, size, "%s", curl_easy_strerror(code));
		return LL_EIO;
	}
	if (status < 200 || status > 299) {
		snprintf(message, size, "HTTP %ld", status);
		return LL_EIO;
	}
	return 0;
}

static void deliver(struct scheduler *s, const struct webhook_item *w)
{
	cJSON *alert = NULL, *body;
	char *text, message[200] = "", status[240], id[24];
	int rc = LL_EIO;

	if (store_alert_get(s->server->store, w->alert_id, &alert) < 0)
		return;
	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "event", "regression");
	cJSON_AddItemToObject(body, "alert", alert);
	text = cJSON_PrintUnformatted(body);
	cJSON_Delete(body);
	for (int attempt = 0; text && attempt < SCHEDULER_WEBHOOK_ATTEMPTS; attempt++) {
		if (attempt && wait_or_stop(s, 1000LL << (attempt - 1)))
			break;
		if ((rc = webhook_post(w->url, text, message, sizeof(message))) == 0)
			break;
	}
	free(text);
	snprintf(id, sizeof(id), "%lld", w->alert_id);
	if (rc == 0) {
		log_event(LOG_INFO, "webhook_delivered", "alert_id", id, NULL);
		store_alert_webhook_status(s->server->store, w->alert_id, "delivered");
	} else {
		snprintf(status, sizeof(status), "failed: %s", message[0] ? message : "stopped");
		log_event(LOG_WARN, "webhook_failed", "alert_id", id, "error", message, NULL);
		store_alert_webhook_status(s->server->store, w->alert_id, status);
	}
}

static void *poster_main(void *arg)
{
	struct scheduler *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct webhook_item w;
		while (!s->stopping && s->webhook_count == 0)
			pthread_cond_wait(&s->cond, &s->lock);
		if (s->stopping)
			break;
		w = s->webhooks[s->webhook_head];
		s->webhook_head = (s->webhook_head + 1) % SCHEDULER_WEBHOOK_QUEUE_MAX;
		s->webhook_count--;
		pthread_mutex_unlock(&s->lock);
		deliver(s, &w);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int scheduler_start(struct server *server, const struct scheduler_options *options,
		    struct scheduler **ret_scheduler)
{
	struct scheduler *s = calloc(1, sizeof(*s));

	if (!s)
		return err_set(LL_ENOMEM, "Out of memory.");
	s->server = server;
	s->options = *options;
	if (s->options.tick_ms < 10)
		s->options.tick_ms = 10;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (pthread_create(&s->poster, NULL, poster_main, s) != 0) {
		scheduler_stop(s);
		return err_set(LL_ENOMEM, "Cannot start the webhook thread.");
	}
	s->poster_running = true;
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
	if (s->poster_running)
		pthread_join(s->poster, NULL);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
}
