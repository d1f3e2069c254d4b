/*
 * waiting.h - why a job's queued tasks wait, as `loadlab status` and
 * `loadlab submit --wait` show it: the "waiting" member the daemon adds to
 * each task of GET /api/v1/jobs/{id} (docs/rest-bodies.md, TASK).
 */
#ifndef LOADLAB_CLI_WAITING_H
#define LOADLAB_CLI_WAITING_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

/* Writes one line to OUT for every reason why some queued tasks of JOB
 * cannot run, with the tasks it holds back:
 *   "waiting: tasks 3, 4: no agent has os=winxp"
 * Nothing when every queued task can run. Text from the server is printed
 * through table_print_text(). */
void waiting_print(FILE *out, const cJSON *job);

/* The first reason why a queued task of JOB cannot run, or NULL (borrowed
 * from JOB); *RET_OTHERS is the number of other, different reasons. */
const char *waiting_first_reason(const cJSON *job, size_t *ret_others);

#endif
