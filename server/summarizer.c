#include "summarizer.h"

#include "report.h"

#include "loadlab/err.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct summarizer {
	struct store *store;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	long long *ids; /* ring of SUMMARIZER_QUEUE_MAX */
	size_t head, count;
	bool busy;
	bool stopping;
};

static void *summarizer_main(void *arg)
{
	struct summarizer *z = arg;

	pthread_mutex_lock(&z->lock);
	for (;;) {
		long long id;
		char *body = NULL, *text;
		cJSON *summary = NULL;

		while (!z->count && !z->stopping)
			pthread_cond_wait(&z->wake, &z->lock);
		if (z->stopping)
			break;
		id = z->ids[z->head];
		z->head = (z->head + 1) % SUMMARIZER_QUEUE_MAX;
		z->count--;
		z->busy = true;
		pthread_mutex_unlock(&z->lock);

		if (store_result_get(z->store, id, &body) == 0 &&
		    report_summarize_result(body, &summary) == 0 &&
		    (text = cJSON_PrintUnformatted(summary))) {
			store_summaries_put(z->store, 1, &id, REPORT_SUMMARY_VERSION, (const char *const[]){text});
			free(text);
		}
		cJSON_Delete(summary);
		free(body);
		pthread_mutex_lock(&z->lock);
		z->busy = false;
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
	if (pthread_create(&z->thread, NULL, summarizer_main, z) != 0) {
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
	n = (long long)z->count + z->busy;
	pthread_mutex_unlock(&z->lock);
	return n;
}

void summarizer_stop(struct summarizer *z)
{
	if (!z)
		return;
	pthread_mutex_lock(&z->lock);
	z->stopping = true;
	pthread_cond_signal(&z->wake);
	pthread_mutex_unlock(&z->lock);
	pthread_join(z->thread, NULL);
	pthread_mutex_destroy(&z->lock);
	pthread_cond_destroy(&z->wake);
	free(z->ids);
	free(z);
}
