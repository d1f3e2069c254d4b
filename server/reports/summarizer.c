#include "summarizer.h"

#include "report.h"
#include "summary.h"
#include "worker.h"

#include "loadlab/err.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

/* Threads summarizing at once: a summary is CPU work on its own result
 * (issue 16); this machine kind has 2 cores. */
#define SUMMARIZER_THREADS 2

/* A queue of result ids (SUMMARIZER_QUEUE_MAX). */
struct ring {
	long long *ids;
	size_t head, count;
};

/* Two queues: results to summarize, then results whose summary is stored
 * and whose compare data (summary.h) is not. Summaries come first: a
 * thread takes compare work only when no summary waits. */
struct summarizer {
	struct store *store;
	pthread_t threads[SUMMARIZER_THREADS];
	int started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct ring summaries, compare;
	size_t busy;         /* summary ids taken from the queue, not yet stored (all threads) */
	size_t compare_busy; /* the same for compare data */
	bool stopping;

	/* The catch-up (below) runs on one daemon of those sharing the
	 * store: the holder of the role "summarizer" (store_role_take()). */
	pthread_t elect_thread;
	pthread_cond_t elect_wake; /* its own: a signal for the workers is never its */
	bool elect_running;
	bool leader;        /* holds the role */
	long long catchups; /* catch-ups run */
};

/* How often a daemon that shares its store asks for the role. */
#define SUMMARIZER_ELECT_MS 2000

/* Ids taken from a queue at once; their summaries (or compare data) are
 * stored in one write, so that the summarizer costs the writer one op per
 * batch, not one per result. */
#define SUMMARIZER_BATCH 64

/* How long a thread woken by a first result waits for more before it
 * summarizes what it has (unless SUMMARIZER_BATCH are queued first). When
 * results arrive by thousands a second, taking each as it came meant a
 * wake-up, a store read and a writer op for one or two results; a summary
 * is now at most this much later. */
#define SUMMARIZER_GATHER_MS 20

static bool ring_put(struct ring *q, long long id)
{
	if (q->count == SUMMARIZER_QUEUE_MAX)
		return false;
	q->ids[(q->head + q->count) % SUMMARIZER_QUEUE_MAX] = id;
	q->count++;
	return true;
}

static size_t ring_take(struct ring *q, long long *ids, size_t max)
{
	size_t n = 0;

	while (q->count && n < max) {
		ids[n++] = q->ids[q->head];
		q->head = (q->head + 1) % SUMMARIZER_QUEUE_MAX;
		q->count--;
	}
	return n;
}

/* Summaries of the N results IDS, stored; the stored ones' ids into
 * DONE_IDS, their count returned. */
static size_t summarize_batch(struct summarizer *z, const long long *ids, size_t n, long long *done_ids)
{
	char *texts[SUMMARIZER_BATCH];
	size_t done = 0;

	for (size_t i = 0; i < n; i++) {
		char *body = NULL;
		cJSON *summary = NULL;
		if (store_result_get(z->store, ids[i], &body) == 0 &&
		    report_summarize_result(body, &summary) == 0 &&
		    (texts[done] = report_print_json(summary)))
			done_ids[done++] = ids[i];
		cJSON_Delete(summary);
		free(body);
	}
	int rc = summary_cache_put(z->store, done, done_ids, (const char *const *)texts, NULL, NULL);
	for (size_t i = 0; i < done; i++)
		free(texts[i]);
	return rc < 0 ? 0 : done;
}

/* Compare data of the N results IDS, stored beside their summaries. */
static void compare_batch(struct summarizer *z, const long long *ids, size_t n)
{
	long long done_ids[SUMMARIZER_BATCH];
	void *data[SUMMARIZER_BATCH];
	size_t len[SUMMARIZER_BATCH], done = 0;

	for (size_t i = 0; i < n; i++) {
		char *body = NULL, *cell = NULL;
		if (store_result_with_cell(z->store, ids[i], &body, &cell) == 0 &&
		    report_compare_data_of(body, cell, &data[done], &len[done]) == 0)
			done_ids[done++] = ids[i];
		free(body);
		free(cell);
	}
	summary_cache_put(z->store, done, done_ids, NULL, (const void *const *)data, len);
	for (size_t i = 0; i < done; i++)
		free(data[i]);
}

/* Waits, under Z's lock, until SUMMARIZER_BATCH summaries are queued,
 * SUMMARIZER_GATHER_MS have passed or the summarizer stops. */
static void gather(struct summarizer *z)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += SUMMARIZER_GATHER_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (z->summaries.count < SUMMARIZER_BATCH && !z->stopping)
		if (pthread_cond_timedwait(&z->wake, &z->lock, &until) != 0)
			break;
}

static void *summarizer_main(void *arg)
{
	struct summarizer *z = arg;
	long long ids[SUMMARIZER_BATCH], done_ids[SUMMARIZER_BATCH];

	pthread_mutex_lock(&z->lock);
	for (;;) {
		size_t n, done;

		while (!z->summaries.count && !z->compare.count && !z->stopping)
			pthread_cond_wait(&z->wake, &z->lock);
		if (z->stopping)
			break;
		if (!z->summaries.count) {
			n = ring_take(&z->compare, ids, SUMMARIZER_BATCH);
			z->compare_busy += n;
			pthread_mutex_unlock(&z->lock);
			compare_batch(z, ids, n);
			pthread_mutex_lock(&z->lock);
			z->compare_busy -= n;
			continue;
		}
		gather(z);
		if (z->stopping)
			break;
		n = ring_take(&z->summaries, ids, SUMMARIZER_BATCH);
		z->busy += n;
		pthread_mutex_unlock(&z->lock);
		done = summarize_batch(z, ids, n, done_ids);
		pthread_mutex_lock(&z->lock);
		z->busy -= n;
		/* Dropped when the queue is full: made at the next start, or
		 * by the compare that needs it. */
		for (size_t i = 0; i < done; i++)
			ring_put(&z->compare, done_ids[i]);
		if (done)
			pthread_cond_signal(&z->wake);
	}
	pthread_mutex_unlock(&z->lock);
	return NULL;
}

static void enqueue_found(void *context, long long result_id)
{
	summarizer_enqueue(context, result_id);
}

static void enqueue_compare(void *context, long long result_id)
{
	struct summarizer *z = context;

	pthread_mutex_lock(&z->lock);
	if (ring_put(&z->compare, result_id))
		pthread_cond_signal(&z->wake);
	pthread_mutex_unlock(&z->lock);
}

static void summarizer_free(struct summarizer *z)
{
	pthread_mutex_destroy(&z->lock);
	pthread_cond_destroy(&z->wake);
	pthread_cond_destroy(&z->elect_wake);
	free(z->summaries.ids);
	free(z->compare.ids);
	free(z);
}

/* The catch-up: results stored before a restart (or by a daemon that
 * died), or dropped from a full queue, are summarized first; summaries
 * cached without compare data get it after them. Every daemon summarizes
 * the results it stores itself; the catch-up, a scan of the whole store,
 * is the role holder's alone. */
static void catch_up(struct summarizer *z)
{
	store_results_unsummarized(z->store, REPORT_SUMMARY_VERSION, SUMMARIZER_QUEUE_MAX, enqueue_found, z);
	store_results_without_compare(z->store, REPORT_SUMMARY_VERSION, SUMMARIZER_QUEUE_MAX, enqueue_compare,
				      z);
	pthread_mutex_lock(&z->lock);
	z->catchups++;
	pthread_mutex_unlock(&z->lock);
}

/* Asks for the role now and then; catches up when it is taken. */
static void *elect_main(void *arg)
{
	struct summarizer *z = arg;

	while (!worker_wait_or_stop(&z->lock, &z->elect_wake, &z->stopping, SUMMARIZER_ELECT_MS)) {
		bool held = false, was;
		store_role_take(z->store, "summarizer", &held);
		pthread_mutex_lock(&z->lock);
		was = z->leader;
		z->leader = held;
		pthread_mutex_unlock(&z->lock);
		if (held && !was)
			catch_up(z);
	}
	return NULL;
}

int summarizer_start(struct store *store, struct summarizer **ret)
{
	struct summarizer *z = calloc(1, sizeof(*z));

	if (!z)
		return LL_ENOMEM;
	pthread_mutex_init(&z->lock, NULL);
	pthread_cond_init(&z->wake, NULL);
	pthread_cond_init(&z->elect_wake, NULL);
	z->summaries.ids = malloc(SUMMARIZER_QUEUE_MAX * sizeof(*z->summaries.ids));
	z->compare.ids = malloc(SUMMARIZER_QUEUE_MAX * sizeof(*z->compare.ids));
	if (!z->summaries.ids || !z->compare.ids) {
		summarizer_free(z);
		return LL_ENOMEM;
	}
	z->store = store;
	for (; z->started < SUMMARIZER_THREADS; z->started++)
		if (pthread_create(&z->threads[z->started], NULL, summarizer_main, z) != 0)
			break;
	if (!z->started) {
		summarizer_free(z);
		return LL_ENOMEM;
	}
	bool held = false;
	int rc = store_role_take(store, "summarizer", &held);
	z->leader = held;
	if (held)
		catch_up(z);
	/* A store shared with other daemons: the role may be taken over. */
	if (rc != 1 && pthread_create(&z->elect_thread, NULL, elect_main, z) == 0)
		z->elect_running = true;
	*ret = z;
	return 0;
}

void summarizer_enqueue(struct summarizer *z, long long result_id)
{
	if (!z)
		return;
	/* A thread is woken by the first result of a batch (it then gathers
	 * more) and by the one that fills a batch; others wait their turn. */
	pthread_mutex_lock(&z->lock);
	if (ring_put(&z->summaries, result_id) &&
	    (z->summaries.count == 1 || z->summaries.count == SUMMARIZER_BATCH))
		pthread_cond_signal(&z->wake);
	pthread_mutex_unlock(&z->lock);
}

/* What Z still has to do of one kind: queued (*COUNT) and in hand (*BUSY). */
static long long pending(struct summarizer *z, const size_t *count, const size_t *busy)
{
	long long n;

	pthread_mutex_lock(&z->lock);
	n = (long long)(*count + *busy);
	pthread_mutex_unlock(&z->lock);
	return n;
}

long long summarizer_pending(struct summarizer *z)
{
	return z ? pending(z, &z->summaries.count, &z->busy) : 0;
}

long long summarizer_compare_pending(struct summarizer *z)
{
	return z ? pending(z, &z->compare.count, &z->compare_busy) : 0;
}

bool summarizer_leader(struct summarizer *z, long long *ret_catchups)
{
	bool leader;

	*ret_catchups = 0;
	if (!z)
		return false;
	pthread_mutex_lock(&z->lock);
	leader = z->leader;
	*ret_catchups = z->catchups;
	pthread_mutex_unlock(&z->lock);
	return leader;
}

void summarizer_stop(struct summarizer *z)
{
	if (!z)
		return;
	worker_request_stop(&z->lock, &z->wake, &z->stopping);
	pthread_mutex_lock(&z->lock);
	pthread_cond_broadcast(&z->elect_wake);
	pthread_mutex_unlock(&z->lock);
	for (int i = 0; i < z->started; i++)
		pthread_join(z->threads[i], NULL);
	if (z->elect_running)
		pthread_join(z->elect_thread, NULL);
	summarizer_free(z);
}
