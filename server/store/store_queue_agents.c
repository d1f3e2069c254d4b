/*
 * store_queue_agents.c - the enrolled agents read once for the queue's
 * policy (store_queue_agents.h), over the statement layer (db.h).
 */
#include "db.h"
#include "store_backend.h"
#include "store_queue_agents.h"

#include "loadlab/array.h"
#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rows read by add_agent(). */
struct agents_read {
	struct store *store;
	long long now;
	struct queue_agents agents;
	size_t size;
	int rc;
};

static void add_agent(void *context, struct db_stmt *row)
{
	/* columns: id, name, facts, labels, quarantined, last_seen, builder */
	struct agents_read *r = context;
	struct queue_agent *a, *list;
	bool seen = !db_column_null(row, 5);

	if (r->rc < 0)
		return;
	if (!(list = array_grow(r->agents.list, r->agents.count, &r->size, sizeof(*list), 16))) {
		r->rc = err_set(LL_ENOMEM, "Out of memory.");
		return;
	}
	r->agents.list = list;
	a = &list[r->agents.count++];
	a->id = db_column_int64(row, 0);
	a->name = strdup(db_column_text(row, 1));
	a->facts = db_column_json(row, 2);
	a->labels = db_column_json(row, 3);
	a->quarantined = db_column_int64(row, 4) != 0;
	a->builder = db_column_int64(row, 6) != 0;
	a->last_seen_ms = seen ? db_column_int64(row, 5) : 0;
	a->online = strcmp(queue_agent_state(a->quarantined, seen, a->last_seen_ms, r->now,
					     store_options_of(r->store)->offline_after_ms),
			   "online") == 0;
	if (!a->name)
		r->rc = err_set(LL_ENOMEM, "Out of memory.");
}

int store_queue_agents_read(struct store *s, long long now, struct queue_agents *ret)
{
	struct agents_read r = {s, now, {NULL, 0}, 0, 0};
	int rc = db_read_each(s,
			      "SELECT id, name, facts, labels, quarantined, last_seen, builder"
			      " FROM agents ORDER BY id",
			      add_agent, &r);

	if (rc == 0)
		rc = r.rc;
	if (rc < 0) {
		store_queue_agents_release(&r.agents);
		*ret = (struct queue_agents){NULL, 0};
		return rc;
	}
	*ret = r.agents;
	return 0;
}

void store_queue_agents_release(struct queue_agents *agents)
{
	for (size_t i = 0; i < agents->count; i++) {
		free((char *)agents->list[i].name);
		cJSON_Delete((cJSON *)agents->list[i].facts);
		cJSON_Delete((cJSON *)agents->list[i].labels);
	}
	free(agents->list);
	*agents = (struct queue_agents){NULL, 0};
}

const char *store_queue_agent_name(const struct queue_agents *agents, long long id, char *out, size_t size)
{
	for (size_t i = 0; i < agents->count; i++)
		if (agents->list[i].id == id)
			return agents->list[i].name;
	snprintf(out, size, "%lld", id);
	return out;
}
