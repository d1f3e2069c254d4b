/*
 * store_build_hold.c - whether a queued shared build has a measurer
 * (store_build_hold.h), over the statement layer (db.h).
 */
#include "db.h"
#include "store_build_hold.h"

#include "store/queue.h"
#include "store/queue_build.h"

#include "loadlab/array.h"
#include "loadlab/err.h"

#include <stdlib.h>

/* The rows read: the agents, and the cells waiting for the build. */
struct hold_rows {
	struct queue_agent *agents;
	size_t agent_count, agent_size;
	const cJSON **cells;
	long long *pinned;
	size_t cell_count, cell_size, pinned_size;
	int rc;
};

static void add_agent(void *context, struct db_stmt *row)
{
	/* columns: id, facts, labels, quarantined */
	struct hold_rows *h = context;
	struct queue_agent *list;

	if (h->rc < 0)
		return;
	if (!(list = array_grow(h->agents, h->agent_count, &h->agent_size, sizeof(*list), 16))) {
		h->rc = LL_ENOMEM;
		return;
	}
	h->agents = list;
	list[h->agent_count++] = (struct queue_agent){
		.id = db_column_int64(row, 0),
		.facts = db_column_json(row, 1),
		.labels = db_column_json(row, 2),
		.quarantined = db_column_int64(row, 3) != 0,
	};
}

static void add_cell(void *context, struct db_stmt *row)
{
	/* columns: cell, pinned_agent */
	struct hold_rows *h = context;
	const cJSON **cells;
	long long *pinned;

	if (h->rc < 0)
		return;
	cells = array_grow(h->cells, h->cell_count, &h->cell_size, sizeof(*cells), 8);
	if (cells)
		h->cells = cells;
	pinned = array_grow(h->pinned, h->cell_count, &h->pinned_size, sizeof(*pinned), 8);
	if (pinned)
		h->pinned = pinned;
	if (!cells || !pinned) {
		h->rc = LL_ENOMEM;
		return;
	}
	h->cells[h->cell_count] = db_column_json(row, 0);
	h->pinned[h->cell_count++] = db_column_null(row, 1) ? 0 : db_column_int64(row, 1);
}

int store_build_wanted(struct store *s, long long build_task, bool *ret_wanted)
{
	struct hold_rows h = {0};
	int rc = db_read_rows(s,
			      "SELECT cell, pinned_agent FROM tasks"
			      " WHERE build_task = ? AND state = 'queued' ORDER BY id",
			      add_cell, &h, "i", build_task);

	if (rc == 0 && (rc = h.rc) == 0 && h.cell_count > 0 &&
	    (rc = db_read_each(s, "SELECT id, facts, labels, quarantined FROM agents ORDER BY id", add_agent,
			       &h)) == 0)
		rc = h.rc;
	if (rc == 0)
		*ret_wanted = queue_build_wanted(h.cells, h.pinned, h.cell_count, h.agents, h.agent_count);
	for (size_t i = 0; i < h.cell_count; i++)
		cJSON_Delete((cJSON *)h.cells[i]);
	for (size_t i = 0; i < h.agent_count; i++) {
		cJSON_Delete((cJSON *)h.agents[i].facts);
		cJSON_Delete((cJSON *)h.agents[i].labels);
	}
	free(h.cells);
	free(h.pinned);
	free(h.agents);
	return rc;
}
