#include "summarizer.h"

#include "report.h"
#include "worker.h"

#include "loadlab/err.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

/* Threads summarizing at once: a summary is CPU work on its own result
 * (issue 16: one thread summarized about 900-1,600 8-variant results per
 * CPU second, short of 2,000/s); this machine kind has 2 cores. */
#define SUMMARIZER_THREADS 2

struct summarizer {
	struct store *store;
	pthread_t threads[SUMMARIZER_THREADS];
	int started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	long long *ids; /* ring of SUMMARIZER_QUEUE_MAX */
	size_t head, count;
	size_t busy; /* ids taken from the queue, not yet stored (all threads) */
	bool stopping;
};

/* Ids taken from the queue at once; their summaries are stored in one
 * write, so that the summarizer costs the writer one op per batch, not
 * one per result. */
#define SUMMARIZER_BATCH 64

static void *summarizer_main(void *arg)
{
	struct summarizer *z = arg;
	long long ids[SUMMARIZER_BATCH], done_ids[SUMMARIZER_BATCH];
	char *texts[SUMMARIZER_BATCH];
	void *compare[SUMMARIZER_BATCH];
	size_t compare_len[SUMMARIZER_BATCH];

	pthread_mutex_lock(&z->lock);
	for (;;) {
		size_t n = 0, done = 0;

		while (!z->count && !z->stopping)
			pthread_cond_wait(&z->wake, &z->lock);
		if (z->stopping)
			break;
		while (z->count && n < SUMMARIZER_BATCH) {
			ids[n++] = z->ids[z->head];
			z->head = (z->head + 1) % SUMMARIZER_QUEUE_MAX;
			z->count--;
		}
		z->busy += n;
		pthread_mutex_unlock(&z->lock);

		for (size_t i = 0; i < n; i++) {
			char *body = NULL, *cell = NULL;
			cJSON *summary = NULL;
			compare[done] = NULL;
			if (store_result_with_cell(z->store, ids[i], &body, &cell) == 0 &&
			    report_summarize_cell(body, cell, &summary, &compare[done], &compare_len[done]) ==
				    0 &&
			    (texts[done] = report_print_json(summary)))
				done_ids[done++] = ids[i];
			else
				free(compare[done]);
			cJSON_Delete(summary);
			free(body);
			free(cell);
		}
		store_summaries_put(z->store, done, done_ids, REPORT_SUMMARY_VERSION,
				    (const char *const *)texts, (const void *const *)compare, compare_len);
		for (size_t i = 0; i < done; i++) {
			free(texts[i]);
			free(compare[i]);
		}
		pthread_mutex_lock(&z->lock);
		z->busy -= n;
	}
	pthread_mutex_unlock(&z->lock);
	return NULL;
}

static void enqueue_found(void *context, long long result_id)
{
	summarizer_enqueue(context, result_id);
}

int summarizer_start(struct store *store, struct summarizer **ret)
{
	struct summarizer *z = calloc(1, sizeof(*z));

	if (!z || !(z->ids = malloc(SUMMARIZER_QUEUE_MAX * sizeof(*z->ids)))) {
		free(z);
		return LL_ENOMEM;
	}
	z->store = store;
	pthread_mutex_init(&z->lock, NULL);
	pthread_cond_init(&z->wake, NULL);
	for (; z->started < SUMMARIZER_THREADS; z->started++)
		if (pthread_create(&z->threads[z->started], NULL, summarizer_main, z) != 0)
			break;
	if (!z->started) {
		pthread_mutex_destroy(&z->lock);
		pthread_cond_destroy(&z->wake);
		free(z->ids);
		free(z);
		return LL_ENOMEM;
	}
	/* Results stored before a restart, or dropped from a full queue,
	 * are summarized first. */
	store_results_unsummarized(store, REPORT_SUMMARY_VERSION, SUMMARIZER_QUEUE_MAX, enqueue_found, z);
	*ret = z;
	return 0;
}

void summarizer_enqueue(struct summarizer *z, long long result_id)
{
	if (!z)
		return;
	pthread_mutex_lock(&z->lock);
	if (z->count < SUMMARIZER_QUEUE_MAX) {
		z->ids[(z->head + z->count) % SUMMARIZER_QUEUE_MAX] = result_id;
		z->count++;
		pthread_cond_signal(&z->wake);
	}
	pthread_mutex_unlock(&z->lock);
}

long long summarizer_pending(struct summarizer *z)
{
	long long n;

	if (!z)
		return 0;
	pthread_mutex_lock(&z->lock);
	n = (long long)(z->count + z->busy);
	pthread_mutex_unlock(&z->lock);
	return n;
}

void summarizer_stop(struct summarizer *z)
{
	if (!z)
		return;
	worker_request_stop(&z->lock, &z->wake, &z->stopping);
	for (int i = 0; i < z->started; i++)
		pthread_join(z->threads[i], NULL);
	pthread_mutex_destroy(&z->lock);
	pthread_cond_destroy(&z->wake);
	free(z->ids);
	free(z);
}
