/*
 * task_attempt.h - a task's attempt as the agent names what it keeps of
 * it on disk: "TASK-ATTEMPT" and a suffix (a spooled result's ".json"
 * (spool.c), none for a work folder (work_folders.c)).
 */
#ifndef LOADLAB_AGENT_TASK_ATTEMPT_H
#define LOADLAB_AGENT_TASK_ATTEMPT_H

#include <stdbool.h>
#include <stddef.h>

struct task_attempt {
	long long task_id, attempt;
};

/* Whether NAME is "TASK-ATTEMPT" (both at least 1, digits only) followed by
 * exactly SUFFIX; then *RET holds them. */
bool task_attempt_parse(const char *name, const char *suffix, struct task_attempt *ret);

/* The names in FOLDER that task_attempt_parse() with SUFFIX takes, at most
 * MAX of them (the rest are left for a later look), into a new array
 * *RET (the caller frees it) of *RET_COUNT, by task, then by attempt. A
 * missing folder has none. */
int task_attempt_list(const char *folder, const char *suffix, size_t max, struct task_attempt **ret,
		      size_t *ret_count);

#endif
