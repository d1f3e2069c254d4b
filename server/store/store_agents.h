/*
 * store_agents.h - what the agents (store_agents.c) give the tasks: an
 * agent marked seen, and the object that begins an answer about one
 * attempt of a task.
 */
#ifndef LOADLAB_SERVER_STORE_AGENTS_H
#define LOADLAB_SERVER_STORE_AGENTS_H

#include <cjson/cJSON.h>

struct store;

/* Marks agent AGENT_ID seen at NOW, inside a write. last_seen is written
 * at most once per AGENT_TOUCH_MAX_MS (1 s; or an eighth of
 * offline_after_ms, if less) an agent, through the writers' cache
 * (store_cache.h): a touch sooner after the last one written changes
 * nothing, so last_seen may be that much older than the agent's last
 * request. */
int store_agent_touch(struct store *store, long long agent_id, long long now);

/* A new object {"task_id", "attempt", "state"} that begins the answers
 * about one attempt of a task (heartbeats and leases). */
cJSON *task_attempt_json(long long task_id, long long attempt, const char *state);

#endif
