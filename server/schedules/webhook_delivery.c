/* The webhook delivery pool: see webhook_delivery.h. */
#include "webhook_delivery.h"

#include "webhook_target.h"

#include "server.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/log.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* Due deliveries held in memory at most (one per series); the rest wait
 * in the store. */
#define READY_MAX 64
/* The store is asked for due deliveries at least this often. */
#define REFILL_MS 500

struct delivery {
	long long alert_id; /* 0: none */
	long long attempts; /* made before this one */
	char series[JOB_SPEC_MAX_SERIES + 1];
};

struct webhook_pool {
	struct server *server;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stopping;
	atomic_bool abandon; /* set with stopping, read by libcurl's progress callback */
	pthread_t threads[WEBHOOK_THREADS];
	int started;

	struct delivery busy[WEBHOOK_THREADS]; /* under way, by thread */
	struct delivery ready[READY_MAX];
	int ready_count;
	bool dirty; /* something changed since the last look at the store */
	long long refilled_ms;
};

struct worker_arg {
	struct webhook_pool *pool;
	int index;
};

static void count(struct webhook_pool *pool, enum metrics_webhook_outcome outcome)
{
	metrics_add(&pool->server->metrics.webhook_outcomes[outcome], 1);
}

/* Whether a delivery of SERIES, or alert ALERT_ID, is under way (lock held). */
static bool is_busy(const struct webhook_pool *pool, const char *series, long long alert_id)
{
	for (int i = 0; i < WEBHOOK_THREADS; i++)
		if (pool->busy[i].alert_id &&
		    (pool->busy[i].alert_id == alert_id || strcmp(pool->busy[i].series, series) == 0))
			return true;
	return false;
}

/* Reads the due deliveries again (lock held, so that a delivery that
 * ends meanwhile cannot be read as still due and taken twice). */
static void refill(struct webhook_pool *pool)
{
	long long now = clock_now_ms();
	cJSON *due = NULL, *row;

	if (!pool->dirty && now - pool->refilled_ms < REFILL_MS)
		return;
	pool->dirty = false;
	pool->refilled_ms = now;
	if (store_webhook_due(pool->server->store, now, READY_MAX, &due) < 0)
		return;
	pool->ready_count = 0;
	cJSON_ArrayForEach(row, due) {
		struct delivery d = {0};
		const char *series = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "series"));
		d.alert_id =
			(long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "alert_id"));
		d.attempts =
			(long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "attempts"));
		snprintf(d.series, sizeof(d.series), "%s", series ? series : "");
		if (!is_busy(pool, d.series, d.alert_id) && pool->ready_count < READY_MAX)
			pool->ready[pool->ready_count++] = d;
	}
	cJSON_Delete(due);
}

/* Takes a ready delivery whose series is idle (lock held). */
static bool take(struct webhook_pool *pool, struct delivery *ret)
{
	for (int i = 0; i < pool->ready_count; i++) {
		if (is_busy(pool, pool->ready[i].series, pool->ready[i].alert_id))
			continue;
		*ret = pool->ready[i];
		memmove(&pool->ready[i], &pool->ready[i + 1],
			(size_t)(pool->ready_count - i - 1) * sizeof(pool->ready[0]));
		pool->ready_count--;
		return true;
	}
	return false;
}

/* One POST's state for libcurl's callbacks. */
struct post {
	struct webhook_pool *pool;
	const char *host;
	bool refused;
	char why[200];
};

/* Opens the socket only to an allowed address (webhook_delivery.h). */
static curl_socket_t open_checked(void *context, curlsocktype purpose, struct curl_sockaddr *address)
{
	struct post *p = context;

	if (purpose != CURLSOCKTYPE_IPCXN ||
	    !webhook_address_allowed(&address->addr, p->host, p->pool->server->config.webhook_allow, p->why,
				     sizeof(p->why))) {
		p->refused = true;
		return CURL_SOCKET_BAD;
	}
	return socket(address->family, address->socktype, address->protocol);
}

static int abandon_on_stop(void *context, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct post *p = context;

	(void)a, (void)b, (void)c, (void)d;
	return atomic_load(&p->pool->abandon) ? 1 : 0;
}

static size_t discard(char *data, size_t size, size_t n, void *context)
{
	(void)data;
	(void)context;
	return size * n;
}

enum post_result { POSTED, POST_FAILED, POST_REFUSED, POST_ABANDONED };

/* One POST of BODY to URL (whose host is HOST); MESSAGE says why not. */
static enum post_result post(struct webhook_pool *pool, const char *url, const char *host, const char *body,
			     char *message, size_t size)
{
	struct post p = {pool, host, false, ""};
	struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
	CURL *curl = curl_easy_init();
	long status = 0;
	CURLcode code;

	if (!curl || !headers) {
		curl_easy_cleanup(curl);
		curl_slist_free_all(headers);
		snprintf(message, size, "out of memory");
		return POST_FAILED;
	}
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)pool->server->config.webhook_timeout_s);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(curl, CURLOPT_PROXY, "");
	curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_checked);
	curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, &p);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, abandon_on_stop);
	curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &p);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
	code = curl_easy_perform(curl);
	if (code == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(curl);
	curl_slist_free_all(headers);
	if (code == CURLE_ABORTED_BY_CALLBACK)
		return POST_ABANDONED;
	if (code != CURLE_OK && p.refused) {
		snprintf(message, size, "refused: %s", p.why);
		return POST_REFUSED;
	}
	if (code != CURLE_OK) {
		snprintf(message, size, "%s", curl_easy_strerror(code));
		return POST_FAILED;
	}
	if (status < 200 || status > 299) {
		snprintf(message, size, "HTTP %ld", status);
		return POST_FAILED;
	}
	return POSTED;
}

/* The alert as posted: {"event":"regression","alert":ALERT}; NULL when it
 * cannot be read now. */
static char *body_of(struct webhook_pool *pool, long long alert_id)
{
	cJSON *alert = NULL, *body;
	char *text;

	if (store_alert_get(pool->server->store, alert_id, &alert) < 0)
		return NULL;
	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "event", "regression");
	cJSON_AddItemToObject(body, "alert", alert);
	text = cJSON_PrintUnformatted(body);
	cJSON_Delete(body);
	return text;
}

static void finish(struct webhook_pool *pool, const struct delivery *d, const char *status,
		   long long retry_at, enum metrics_webhook_outcome outcome)
{
	char id[24];

	snprintf(id, sizeof(id), "%lld", d->alert_id);
	count(pool, outcome); /* first: whoever reads the status finds it counted */
	store_alert_webhook_status(pool->server->store, d->alert_id, status, retry_at);
	log_event(outcome == METRICS_WEBHOOK_DELIVERED ? LOG_INFO : LOG_WARN, "webhook", "alert_id", id,
		  "series", d->series, "status", status, NULL);
}

static void deliver(struct webhook_pool *pool, const struct delivery *d)
{
	struct store_series_settings settings;
	char host[WEBHOOK_HOST_MAX + 1], message[260], status[320], *body;
	enum post_result result;
	int rc;

	if (store_series_settings_get(pool->server->store, d->series, &settings) < 0)
		return; /* tried again at the next look */
	if (!settings.webhook_url[0]) {
		finish(pool, d, "failed: the series has no webhook any more", 0, METRICS_WEBHOOK_FAILED);
		return;
	}
	if ((rc = webhook_target_check(settings.webhook_url, pool->server->config.webhook_allow)) < 0 ||
	    (rc = webhook_url_host(settings.webhook_url, host)) < 0) {
		snprintf(status, sizeof(status), "failed: refused: %s", err_message(rc));
		finish(pool, d, status, 0, METRICS_WEBHOOK_REFUSED);
		return;
	}
	if (!(body = body_of(pool, d->alert_id)))
		return;
	result = post(pool, settings.webhook_url, host, body, message, sizeof(message));
	free(body);
	if (result == POSTED) {
		finish(pool, d, "delivered", 0, METRICS_WEBHOOK_DELIVERED);
	} else if (result == POST_REFUSED) {
		snprintf(status, sizeof(status), "failed: %s", message);
		finish(pool, d, status, 0, METRICS_WEBHOOK_REFUSED);
	} else if (result == POST_FAILED && d->attempts + 1 < WEBHOOK_ATTEMPTS) {
		snprintf(status, sizeof(status), "pending: attempt %lld of %d failed: %s", d->attempts + 1,
			 WEBHOOK_ATTEMPTS, message);
		finish(pool, d, status, clock_now_ms() + ((long long)WEBHOOK_RETRY_FIRST_MS << d->attempts),
		       METRICS_WEBHOOK_RETRIED);
	} else if (result == POST_FAILED) {
		snprintf(status, sizeof(status), "failed: %s", message);
		finish(pool, d, status, 0, METRICS_WEBHOOK_FAILED);
	} /* POST_ABANDONED: still pending, for after the restart */
}

/* Waits on the pool's condition up to MS (lock held). */
static void wait_ms(struct webhook_pool *pool, long long ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&pool->cond, &pool->lock, &until);
}

static void *worker_main(void *arg)
{
	struct worker_arg *w = arg;
	struct webhook_pool *pool = w->pool;
	int me = w->index;

	free(w);
	pthread_mutex_lock(&pool->lock);
	while (!pool->stopping) {
		struct delivery d;
		if (!take(pool, &d)) {
			refill(pool);
			if (!take(pool, &d)) {
				wait_ms(pool, REFILL_MS);
				continue;
			}
		}
		pool->busy[me] = d;
		pthread_mutex_unlock(&pool->lock);
		deliver(pool, &d);
		pthread_mutex_lock(&pool->lock);
		pool->busy[me].alert_id = 0;
		pool->dirty = true; /* the series' next alert may go now */
		pthread_cond_broadcast(&pool->cond);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

int webhook_pool_start(struct server *server, struct webhook_pool **ret_pool)
{
	struct webhook_pool *pool = calloc(1, sizeof(*pool));

	if (!pool)
		return err_set(LL_ENOMEM, "Out of memory.");
	pool->server = server;
	pool->dirty = true;
	curl_global_init(CURL_GLOBAL_DEFAULT); /* before the threads: not thread-safe everywhere */
	atomic_init(&pool->abandon, false);
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->cond, NULL);
	for (int i = 0; i < WEBHOOK_THREADS; i++) {
		struct worker_arg *w = malloc(sizeof(*w));
		if (!w ||
		    (w->pool = pool, w->index = i, pthread_create(&pool->threads[i], NULL, worker_main, w))) {
			free(w);
			webhook_pool_stop(pool);
			return err_set(LL_ENOMEM, "Cannot start the webhook threads.");
		}
		pool->started++;
	}
	*ret_pool = pool;
	return 0;
}

void webhook_pool_alert_opened(struct webhook_pool *pool, long long alert_id)
{
	cJSON *alert = NULL;
	const char *status;

	if (!pool || store_alert_get(pool->server->store, alert_id, &alert) < 0)
		return;
	status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(alert, "webhook"));
	if (status && strncmp(status, "failed", 6) == 0) {
		char id[24];
		snprintf(id, sizeof(id), "%lld", alert_id);
		count(pool, METRICS_WEBHOOK_DROPPED);
		log_event(LOG_WARN, "webhook", "alert_id", id, "status", status, NULL);
	} else if (status) {
		pthread_mutex_lock(&pool->lock);
		pool->dirty = true;
		pthread_cond_broadcast(&pool->cond);
		pthread_mutex_unlock(&pool->lock);
	}
	cJSON_Delete(alert);
}

void webhook_pool_stop(struct webhook_pool *pool)
{
	if (!pool)
		return;
	pthread_mutex_lock(&pool->lock);
	pool->stopping = true;
	atomic_store(&pool->abandon, true);
	pthread_cond_broadcast(&pool->cond);
	pthread_mutex_unlock(&pool->lock);
	for (int i = 0; i < pool->started; i++)
		pthread_join(pool->threads[i], NULL);
	pthread_mutex_destroy(&pool->lock);
	pthread_cond_destroy(&pool->cond);
	free(pool);
	curl_global_cleanup();
}
