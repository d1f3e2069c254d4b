/*
 * queue.c - the queue's policy (queue.h). No I/O, no clock: the store
 * passes every fact in.
 */
#include "queue.h"

#include "loadlab/job_spec.h"

#include <string.h>

static const char *const task_state_names[QUEUE_TASK_STATE_COUNT] = {
	"queued", "leased", "done", "dead", "cancelled",
};

const char *queue_task_state_name(enum queue_task_state state)
{
	return task_state_names[state];
}

int queue_task_state_parse(const char *name)
{
	for (int i = 0; i < QUEUE_TASK_STATE_COUNT; i++)
		if (strcmp(name, task_state_names[i]) == 0)
			return i;
	return -1;
}

const char *queue_job_state(const char *current, const struct queue_task_counts *counts)
{
	const long long *n = counts->by_state;
	long long total = 0;

	if (strcmp(current, "cancelled") == 0)
		return "cancelled";
	for (int i = 0; i < QUEUE_TASK_STATE_COUNT; i++)
		total += n[i];
	if (total > 0 && n[QUEUE_TASK_DONE] == total)
		return "done";
	if (total > 0 && n[QUEUE_TASK_DONE] + n[QUEUE_TASK_DEAD] == total)
		return "failed";
	if (n[QUEUE_TASK_LEASED] || n[QUEUE_TASK_DONE] || n[QUEUE_TASK_DEAD] || counts->max_attempt > 0)
		return "running";
	return "queued";
}

bool queue_job_finished(const char *state)
{
	return strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 ||
	       strcmp(state, "cancelled") == 0;
}

long long queue_retry_delay(long long attempt, long long backoff_ms, long long backoff_max_ms)
{
	long long delay = backoff_ms;

	/* Doubling stops at the cap, so the product never overflows. */
	for (long long i = 1; i < attempt && delay > 0 && delay < backoff_max_ms; i++)
		delay *= 2;
	return delay > backoff_max_ms ? backoff_max_ms : delay;
}

bool queue_lease_expired(long long expires_ms, long long now_ms)
{
	return expires_ms < now_ms;
}

enum queue_task_state queue_after_attempt(long long attempt, int max_attempts, bool retryable)
{
	return retryable && attempt < max_attempts ? QUEUE_TASK_QUEUED : QUEUE_TASK_DEAD;
}

const char *queue_agent_state(bool quarantined, bool seen, long long last_seen_ms, long long now_ms,
			      long long offline_after_ms)
{
	if (quarantined)
		return "quarantined";
	if (seen && now_ms - last_seen_ms <= offline_after_ms)
		return "online";
	return "offline";
}

bool queue_task_matches(const cJSON *cell, long long pinned_agent, const struct queue_agent *agent)
{
	if (agent->quarantined)
		return false;
	if (pinned_agent)
		return pinned_agent == agent->id;
	return job_spec_cell_matches(cell, agent->facts, agent->labels);
}

bool queue_agent_selected(const cJSON *selector, const struct queue_agent *agent)
{
	return !agent->quarantined && job_spec_selector_matches(selector, agent->facts, agent->labels);
}

long long queue_lease_seconds(long long lease_ms)
{
	return (lease_ms + 999) / 1000;
}

long long queue_heartbeat_seconds(long long lease_ms)
{
	return lease_ms >= 6000 ? lease_ms / 3000 : 1;
}
