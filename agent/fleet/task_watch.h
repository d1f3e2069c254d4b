/*
 * task_watch.h - a running task's link to the daemon (fleet.h): a thread
 * that renews the lease with heartbeats and posts the pipeline's progress,
 * and what their answers said (cancelled, lease lost, token refused),
 * which the pipeline's progress callback turns into a stop.
 */
#ifndef LOADLAB_AGENT_TASK_WATCH_H
#define LOADLAB_AGENT_TASK_WATCH_H

#include <stdatomic.h>
#include <stdbool.h>

/* Shared by the main thread (pipeline progress) and the heartbeat thread:
 * the caller zeroes it, sets the first six fields, atomic_init()s the
 * rest (PHASE to -1), starts task_watch_heartbeat_main() on a thread, and
 * sets DONE then joins it when the pipeline returned. */
struct task_watch {
	const char *server; /* borrowed: the daemon's URL */
	const char *token;  /* borrowed: the agent's token */
	long long agent_id;
	long long task_id;
	long long attempt;
	long long heartbeat_ms;
	atomic_int phase; /* index into phase_names, -1 before the first */
	atomic_int percent;
	atomic_int progress_seq; /* bumped by every new phase or percent */
	atomic_int cancelled;    /* the server said the task was cancelled */
	atomic_int lost;         /* the server no longer lists the lease */
	atomic_int auth_failed;  /* the server refused the token */
	atomic_int done;         /* the pipeline returned: the thread ends */
};

/* The heartbeat thread (ARG: the struct task_watch): renews the lease
 * every heartbeat_ms, posts progress when it changed, and notes
 * cancellation, until DONE. */
void task_watch_heartbeat_main(void *arg);

/* pipeline.h's progress() (CONTEXT: the struct task_watch): records the
 * phase for the heartbeat thread and answers whether the pipeline must
 * stop (cancelled, lost, token refused, or the agent stopping). */
bool task_watch_progress(void *context, const char *phase, int percent);

#endif
