/*
 * summarizer.h - computes each new result's summary (report.h) in the
 * background, so that a job's report reads cached summaries only.
 *
 * Result ingestion enqueues the result's id and returns at once; two
 * threads take ids in order, in batches of up to 64 (a thread woken by a
 * result waits up to 20 ms for more), compute and store their summaries,
 * then queue them again for compare's data (summary.h), which they make
 * only while no summary waits. Each queue holds SUMMARIZER_QUEUE_MAX ids;
 * beyond that ids are dropped: the report computes the summaries that are
 * missing when it is asked for, and compare the compare data. At start the
 * queues are filled with the stored results that have no summary yet, and
 * those whose summary has no compare data (the catch-up).
 *
 * Daemons sharing one store (PostgreSQL replicas) each summarize the
 * results they store; the catch-up, a scan of the whole store, runs on
 * one of them only: the holder of the role "summarizer"
 * (store_role_take()), asked for every 2 s by those without it, so that
 * a replica taking over from one that stopped or died catches up once.
 */
#ifndef LOADLAB_SERVER_SUMMARIZER_H
#define LOADLAB_SERVER_SUMMARIZER_H

#include "store/store.h"

#include <stdbool.h>

#define SUMMARIZER_QUEUE_MAX 65536

struct summarizer;

int summarizer_start(struct store *store, struct summarizer **ret_summarizer);

/* Queues RESULT_ID (thread-safe; never blocks on the computation). */
void summarizer_enqueue(struct summarizer *summarizer, long long result_id);

/* Ids waiting for their summary, those being summarized included. */
long long summarizer_pending(struct summarizer *summarizer);

/* Ids waiting for their compare data, those under way included. */
long long summarizer_compare_pending(struct summarizer *summarizer);

/* Whether this daemon holds the summarizer's role (always on a store of
 * one daemon); *RET_CATCHUPS the catch-ups it ran. */
bool summarizer_leader(struct summarizer *summarizer, long long *ret_catchups);

/* Finishes the summary under way, drops the rest, stops. NULL is fine. */
void summarizer_stop(struct summarizer *summarizer);

#endif
