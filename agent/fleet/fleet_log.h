/*
 * fleet_log.h - how the fleet's parts (fleet.c, task_watch.c) say what
 * happened: an answer of the server described in one line, and log events
 * of a task or with a number (log.h's key-value lines).
 */
#ifndef LOADLAB_AGENT_FLEET_LOG_H
#define LOADLAB_AGENT_FLEET_LOG_H

#include "loadlab/log.h"
#include "loadlab/rest_client.h"

#include <stddef.h>

/* One printable line into OUT (SIZE bytes) saying what is wrong with
 * answer A to WHAT: PROBLEM ("" for "was not expected") for a 2xx, whose
 * body's start is shown (the server sent no error message), else the
 * server's status and message. */
void fleet_describe_answer(const struct rest_answer *a, const char *what, const char *problem, char *out,
			   size_t size);

/* log_event(LEVEL, EVENT, KEY, VALUE as a decimal, KEY2, VALUE2). */
void fleet_log_number(enum log_level level, const char *event, const char *key, long long value,
		      const char *key2, const char *value2);

/* log_event(LEVEL, EVENT, "task", TASK_ID, "attempt", ATTEMPT, KEY, VALUE);
 * KEY NULL: without it. */
void fleet_log_task(enum log_level level, const char *event, long long task_id, long long attempt,
		    const char *key, const char *value);

#endif
