/*
 * job_poll.h - following a job until it ends, as `loadlab submit --wait`
 * and `loadlab calibrate --wait` do: GET /api/v1/jobs/{id} once a second,
 * riding out a daemon that is briefly unreachable (a restart).
 */
#ifndef LOADLAB_CLI_JOB_POLL_H
#define LOADLAB_CLI_JOB_POLL_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "client.h"

/* Between two polls of a job. */
#define JOB_POLL_MS 1000
/* Polls in a row that may fail to reach the daemon before giving up. */
#define JOB_POLL_UNREACHABLE_TRIES 15

/* Job ID as the daemon has it now, in *RET_JOB (the caller deletes it), and
 * its state, borrowed from it, in *RET_STATE. While the daemon cannot be
 * reached it tries again JOB_POLL_MS later, JOB_POLL_UNREACHABLE_TRIES times
 * in all. 0, or the error (nothing to delete then). */
int job_poll(struct rest_client *c, long long id, cJSON **ret_job, const char **ret_state);

/* Whether STATE is one a job ends in: done, failed or cancelled. */
bool job_poll_finished(const char *state);

/* Waits JOB_POLL_MS, or MS when it is not 0. */
void job_poll_sleep(long ms);

#endif
