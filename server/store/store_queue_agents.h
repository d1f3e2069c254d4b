/*
 * store_queue_agents.h - the enrolled agents as the queue's policy
 * (queue.h, queue_build.h) sees them, read once for the several decisions
 * of one call: a lease's held builds (store_lease.c), a job's waiting
 * reasons (store_jobs.c), both through store_build_wanted()
 * (store_build_hold.h).
 */
#ifndef LOADLAB_SERVER_STORE_QUEUE_AGENTS_H
#define LOADLAB_SERVER_STORE_QUEUE_AGENTS_H

#include "store/queue.h"

#include <stddef.h>

struct store;

/* The agents read, in id order; LIST[i]'s members are owned by the list. */
struct queue_agents {
	struct queue_agent *list;
	size_t count;
};

/* Reads every enrolled agent into *RET (empty when there is none; ONLINE
 * as queue_agent_state() says at NOW), in the caller's read or write, or
 * a read of its own. 0 or a negative LL_E* code, *RET empty on failure. */
int store_queue_agents_read(struct store *s, long long now, struct queue_agents *ret);

/* Frees what AGENTS holds and empties it. */
void store_queue_agents_release(struct queue_agents *agents);

/* The name of agent ID among AGENTS, or its number written to OUT (SIZE
 * bytes). */
const char *store_queue_agent_name(const struct queue_agents *agents, long long id, char *out, size_t size);

#endif
