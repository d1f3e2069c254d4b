/*
 * queue.c - the queue's policy (queue.h). No I/O, no clock: the store
 * passes every fact in.
 */
#include "queue.h"

#include "loadlab/clock.h"
#include "loadlab/job_spec.h"

#include <stdio.h>
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
	return strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 || strcmp(state, "cancelled") == 0;
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
	return !agent->quarantined &&
	       job_spec_agent_selected(selector, agent->name, agent->facts, agent->labels);
}

/* "offline since TIME" or "offline, never seen" into OUT (48 bytes). */
static const char *offline_since(long long last_seen_ms, char *out)
{
	char time[32];

	if (last_seen_ms <= 0)
		snprintf(out, 48, "offline, never seen");
	else
		snprintf(out, 48, "offline since %s", clock_format_rfc3339(last_seen_ms, time));
	return out;
}

static const char *agent_name(const struct queue_agent *agent, char *out, size_t size)
{
	if (agent->name)
		snprintf(out, size, "%s", agent->name);
	else
		snprintf(out, size, "%lld", agent->id);
	return out;
}

/* queue_task_waiting() for a task pinned to agent PINNED. */
static bool pinned_waiting(long long pinned, const struct queue_agent *agents, size_t count, char *reason)
{
	char name[96], since[48];

	for (size_t i = 0; i < count; i++) {
		const struct queue_agent *a = &agents[i];
		if (a->id != pinned)
			continue;
		if (a->quarantined)
			snprintf(reason, QUEUE_WAITING_REASON_SIZE, "agent %s is quarantined",
				 agent_name(a, name, sizeof(name)));
		else if (!a->online)
			snprintf(reason, QUEUE_WAITING_REASON_SIZE, "agent %s is %s",
				 agent_name(a, name, sizeof(name)), offline_since(a->last_seen_ms, since));
		return a->online && !a->quarantined;
	}
	snprintf(reason, QUEUE_WAITING_REASON_SIZE, "agent %lld is not enrolled", pinned);
	return false;
}

/* "no agent has K=V" for the first value of CELL no agent has, else
 * "no agent has K=V, K=V together"; "no agent is enrolled" when CELL asks
 * for nothing (so none of AGENTS is there). */
static void unmatched_reason(const cJSON *cell, const struct queue_agent *agents, size_t count, char *reason)
{
	const cJSON *key;
	size_t used;

	if (!cell || !cell->child) {
		snprintf(reason, QUEUE_WAITING_REASON_SIZE, "no agent is enrolled");
		return;
	}
	cJSON_ArrayForEach(key, cell) {
		cJSON *one = cJSON_CreateObject();
		bool anyone = false;

		if (cJSON_IsString(key))
			cJSON_AddStringToObject(one, key->string, key->valuestring);
		for (size_t i = 0; one && i < count && !anyone; i++)
			anyone = job_spec_cell_matches(one, agents[i].facts, agents[i].labels);
		cJSON_Delete(one);
		if (!anyone) {
			snprintf(reason, QUEUE_WAITING_REASON_SIZE, "no agent has %s=%s", key->string,
				 cJSON_IsString(key) ? key->valuestring : "?");
			return;
		}
	}
	used = (size_t)snprintf(reason, QUEUE_WAITING_REASON_SIZE, "no agent has ");
	cJSON_ArrayForEach(key, cell)
		if (used < QUEUE_WAITING_REASON_SIZE)
			used += (size_t)snprintf(reason + used, QUEUE_WAITING_REASON_SIZE - used, "%s%s=%s",
						 key == cell->child ? "" : ", ", key->string,
						 cJSON_IsString(key) ? key->valuestring : "?");
	if (used < QUEUE_WAITING_REASON_SIZE)
		snprintf(reason + used, QUEUE_WAITING_REASON_SIZE - used, " together");
}

bool queue_task_waiting(const cJSON *cell, long long pinned_agent, const struct queue_agent *agents,
			size_t count, char *reason)
{
	const struct queue_agent *only = NULL;
	size_t matching = 0, quarantined = 0;
	long long latest_seen = 0;
	char name[96], since[48];

	reason[0] = '\0';
	if (pinned_agent)
		return pinned_waiting(pinned_agent, agents, count, reason);
	for (size_t i = 0; i < count; i++) {
		const struct queue_agent *a = &agents[i];
		if (!job_spec_cell_matches(cell, a->facts, a->labels))
			continue;
		if (!a->quarantined && a->online)
			return true;
		matching++;
		only = a;
		if (a->quarantined)
			quarantined++;
		else if (a->last_seen_ms > latest_seen)
			latest_seen = a->last_seen_ms;
	}
	if (matching == 0)
		unmatched_reason(cell, agents, count, reason);
	else if (matching == 1)
		snprintf(reason, QUEUE_WAITING_REASON_SIZE, "the only matching agent (%s) is %s",
			 agent_name(only, name, sizeof(name)),
			 only->quarantined ? "quarantined" : offline_since(only->last_seen_ms, since));
	else if (quarantined == matching)
		snprintf(reason, QUEUE_WAITING_REASON_SIZE, "all %zu matching agents are quarantined",
			 matching);
	else
		snprintf(reason, QUEUE_WAITING_REASON_SIZE, "matching agents are %s%s",
			 offline_since(latest_seen, since), quarantined ? " or quarantined" : "");
	return false;
}

long long queue_lease_seconds(long long lease_ms)
{
	return (lease_ms + 999) / 1000;
}

long long queue_heartbeat_seconds(long long lease_ms)
{
	return lease_ms >= 6000 ? lease_ms / 3000 : 1;
}
