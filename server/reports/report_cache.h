/*
 * report_cache.h - heavy answers (a job's report, an A/B job's compare,
 * two jobs compared) computed once per job state, off the HTTP threads
 * (report_cache.c; docs/operations.md, "Reports: cache and limits").
 *
 * A computation runs on one of REPORT_CACHE_WORKERS threads of its own,
 * never on an HTTP thread: the request's connection waits suspended
 * (HTTP_SUSPEND_WRITE, the wake being http_write_committed()), so a reader
 * asking for heavy reports never holds the threads that answer /healthz,
 * agents and everyone else. At most REPORT_CACHE_MAX_QUEUED computations
 * are queued or running; one more is refused at once (the caller answers
 * 503 busy with Retry-After REPORT_CACHE_RETRY_AFTER_SECONDS).
 *
 * Answers are keyed by what they are of (PREFIX: the kind, the job, the
 * query's options) and by the REVISION of the job's state
 * (report_cache_job_revision(): every task's state and latest result, the
 * job's state and spec): a result that arrives, a task that fails, a job
 * cancelled or pruned changes the revision, so the next request computes
 * again, and the answer kept for the old revision is dropped then.
 * Identical requests while one computes wait for that one computation
 * (single flight) instead of each computing. Kept answers are bounded:
 * REPORT_CACHE_MAX_BYTES of text and REPORT_CACHE_MAX_ENTRIES answers,
 * the least recently used dropped first; an answer larger than
 * REPORT_CACHE_MAX_ENTRY_BYTES is given to those waiting for it and not
 * kept.
 */
#ifndef LOADLAB_SERVER_REPORT_CACHE_H
#define LOADLAB_SERVER_REPORT_CACHE_H

#include "store/store.h"

#include <stdbool.h>
#include <stddef.h>

#define REPORT_CACHE_MAX_BYTES ((size_t)64 << 20)
#define REPORT_CACHE_MAX_ENTRY_BYTES ((size_t)16 << 20)
#define REPORT_CACHE_MAX_ENTRIES 256
/* Computations at once (this machine kind has 2 cores; a job's report and
 * a compare use a second thread of their own for part of their work). */
#define REPORT_CACHE_WORKERS 2
#define REPORT_CACHE_MAX_QUEUED 8
#define REPORT_CACHE_RETRY_AFTER_SECONDS 2

/* Longest key: prefix and revision. */
#define REPORT_CACHE_MAX_KEY 256

/* An answer: TEXT (LEN bytes, NUL-ended, owned) of CONTENT_TYPE (static). */
struct report_text {
	char *text;
	size_t len;
	const char *content_type;
};

/* Computes an answer from ARGS (the copy report_cache_get() keeps) into
 * *RET: 0, or a negative LL_E* code with its message (err_set()). Runs on
 * a worker thread. */
typedef int (*report_compute_fn)(struct store *store, const void *args, struct report_text *ret);

struct report_cache;
struct report_ticket;

/* Counters and gauges for /metrics. */
struct report_cache_stats {
	long long hits;      /* answers given from the cache */
	long long computed;  /* computations run (misses) */
	long long joined;    /* requests that waited for an identical computation */
	long long refused;   /* requests refused: REPORT_CACHE_MAX_QUEUED reached */
	long long evicted;   /* answers dropped: least recently used, or of an old revision */
	long long entries;   /* answers kept */
	long long bytes;     /* their bytes */
	long long computing; /* computations queued or running */
};

/* Starts the workers over STORE (borrowed; it outlives the cache). */
int report_cache_new(struct store *store, struct report_cache **ret_cache);

/* Stops the workers (after the running computations end) and frees
 * everything. The HTTP door must be stopped first: no ticket is
 * outstanding then (http_stop() waits for suspended connections). NULL is
 * fine. */
void report_cache_free(struct report_cache *cache);

enum report_cache_outcome {
	REPORT_CACHE_HIT = 0, /* *RET_TEXT holds a copy of the kept answer */
	REPORT_CACHE_PENDING, /* *RET_TICKET: WAKE(WAKE_ARG) comes once, when it is done */
	REPORT_CACHE_BUSY,    /* REPORT_CACHE_MAX_QUEUED computations are queued or running */
};

/* The answer of PREFIX at REVISION (each at most REPORT_CACHE_MAX_KEY / 2
 * bytes): kept, being computed (joined), or to be computed by COMPUTE on
 * ARGS (ARGS_SIZE bytes, copied). KEEP false: the answer is given to those
 * waiting for it, never kept (what it depends on is more than one job's
 * revision). Returns the outcome, or LL_ENOMEM, LL_EINVAL (a key too
 * long). */
int report_cache_get(struct report_cache *cache, const char *prefix, const char *revision, bool keep,
		     report_compute_fn compute, const void *args, size_t args_size, void (*wake)(void *),
		     void *wake_arg, struct report_text *ret_text, struct report_ticket **ret_ticket);

/* Once TICKET's wake came: 0 and a copy of the answer in *RET_TEXT, or the
 * computation's error (its message set again with err_set() on this
 * thread). Releases TICKET. */
int report_ticket_answer(struct report_ticket *ticket, struct report_text *ret_text);

/* Releases TICKET unanswered (its request ended). Only after its wake
 * came; NULL is fine. */
void report_ticket_release(struct report_ticket *ticket);

void report_cache_stats(struct report_cache *cache, struct report_cache_stats *ret);

/* The revision of job JOB_ID's state as reports read it (see above) into
 * OUT (17 bytes at least: 16 hex digits). LL_ENOTFOUND for an unknown
 * job, the store's errors. */
int report_cache_job_revision(struct store *store, long long job_id, char *out, size_t size);

#endif
