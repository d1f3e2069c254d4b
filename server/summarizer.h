/*
 * summarizer.h - computes each new result's summary (report.h) in the
 * background, so that a job's report reads cached summaries only.
 *
 * Result ingestion enqueues the result's id and returns at once; one
 * thread takes ids in order, computes and stores their summaries. The
 * queue holds SUMMARIZER_QUEUE_MAX ids; beyond that ids are dropped, and
 * the report computes what is missing when it is asked for. At start the
 * queue is filled with the stored results that have no summary yet.
 */
#ifndef LOADLAB_SERVER_SUMMARIZER_H
#define LOADLAB_SERVER_SUMMARIZER_H

#include "store.h"

#define SUMMARIZER_QUEUE_MAX 65536

struct summarizer;

int summarizer_start(struct store *store, struct summarizer **ret_summarizer);

/* Queues RESULT_ID (thread-safe; never blocks on the computation). */
void summarizer_enqueue(struct summarizer *summarizer, long long result_id);

/* Ids waiting, the one being summarized included. */
long long summarizer_pending(struct summarizer *summarizer);

/* Finishes the summary under way, drops the rest, stops. NULL is fine. */
void summarizer_stop(struct summarizer *summarizer);

#endif
