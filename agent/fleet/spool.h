/*
 * spool.h - finished results waiting for the server's acknowledgement.
 *
 * A result is written to DATA_DIR/spool/TASK-ATTEMPT.json before it is
 * posted, and removed only after the server answered 2xx (accepted, or the
 * same answer for a replay) or 409 (a stale attempt or a cancelled task:
 * the result will never be taken). On start the agent delivers what is in
 * the spool before it leases anything, so a result survives the agent or
 * the server stopping between the end of a task and its delivery.
 */
#ifndef LOADLAB_AGENT_SPOOL_H
#define LOADLAB_AGENT_SPOOL_H

#include <stddef.h>

/* Largest result body the agent keeps or sends (the server's limit). */
#define SPOOL_RESULT_LIMIT ((size_t)4 << 20)

/* Stores BODY (the JSON text to post) for TASK_ID, ATTEMPT. */
int spool_put(const char *data_dir, long long task_id, long long attempt, const char *body);

/* Forgets the result of TASK_ID, ATTEMPT. */
int spool_remove(const char *data_dir, long long task_id, long long attempt);

/* Calls DELIVER(CONTEXT, TASK_ID, ATTEMPT, BODY) for each spooled result,
 * oldest task first; stops at the first non-zero answer and returns it.
 * Files whose names are not TASK-ATTEMPT.json are left alone; an
 * unreadable or oversized one is reported and skipped. */
int spool_each(const char *data_dir,
	       int (*deliver)(void *context, long long task_id, long long attempt, const char *body),
	       void *context);

#endif
