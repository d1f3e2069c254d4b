/*
 * worker.h - what the server's background threads share (the store's
 * writer, the summarizer, the scheduler's ticker, the blob
 * sweeper): each waits on a condition variable, under a mutex, until it
 * has work or a flag tells it to stop.
 */
#ifndef LOADLAB_SERVER_WORKER_H
#define LOADLAB_SERVER_WORKER_H

#include <pthread.h>
#include <stdbool.h>

/* Sets *STOPPING under LOCK and wakes every thread waiting on WAKE, which
 * then sees the flag and ends its loop. The caller joins the threads. */
void worker_request_stop(pthread_mutex_t *lock, pthread_cond_t *wake, bool *stopping);

/* worker_request_stop(), then waits for THREAD to end. */
void worker_stop(pthread_mutex_t *lock, pthread_cond_t *wake, bool *stopping, pthread_t thread);

/* Waits on WAKE, under LOCK (not held by the caller), up to MS
 * milliseconds or until *STOPPING is set. True when stopping. */
bool worker_wait_or_stop(pthread_mutex_t *lock, pthread_cond_t *wake, const bool *stopping, long long ms);

#endif
