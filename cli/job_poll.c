/*
 * job_poll.c - job_poll(), job_poll_finished() and job_poll_sleep()
 * (job_poll.h).
 */
#include "job_poll.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "loadlab/err.h"
#include "loadlab/json.h"

int job_poll(struct rest_client *c, long long id, cJSON **ret_job, const char **ret_state)
{
	char path[64];
	int rc;

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld", id);
	for (int tries = 1;; tries++) {
		cJSON *job = NULL;
		const char *state = NULL;
		rc = client_get_object(c, "GET", path, NULL, &job);
		if (rc == LL_EIO && tries < JOB_POLL_UNREACHABLE_TRIES) {
			job_poll_sleep(0);
			continue;
		}
		if (rc == 0)
			rc = json_get_string(job, "state", 64, true, NULL, &state);
		if (rc < 0) {
			cJSON_Delete(job);
			return rc;
		}
		*ret_job = job;
		*ret_state = state;
		return 0;
	}
}

bool job_poll_finished(const char *state)
{
	return strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 || strcmp(state, "cancelled") == 0;
}

void job_poll_sleep(long ms)
{
	struct timespec ts;

	if (!ms)
		ms = JOB_POLL_MS;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
