/*
 * store_build_hold.c - whether a queued shared build has a measurer
 * (store_build_hold.h), over the statement layer (db.h).
 */
#include "db.h"
#include "store_build_hold.h"

#include "store/queue_build.h"

#include "loadlab/array.h"
#include "loadlab/err.h"

#include <stdlib.h>

/* The cells waiting for the build, read by add_cell(). */
struct hold_cells {
	const cJSON **cells;
	long long *pinned;
	size_t count, cell_size, pinned_size;
	int rc;
};

static void add_cell(void *context, struct db_stmt *row)
{
	/* columns: cell, pinned_agent */
	struct hold_cells *h = context;
	const cJSON **cells;
	long long *pinned;

	if (h->rc < 0)
		return;
	cells = array_grow(h->cells, h->count, &h->cell_size, sizeof(*cells), 8);
	if (cells)
		h->cells = cells;
	pinned = array_grow(h->pinned, h->count, &h->pinned_size, sizeof(*pinned), 8);
	if (pinned)
		h->pinned = pinned;
	if (!cells || !pinned) {
		h->rc = err_set(LL_ENOMEM, "Out of memory.");
		return;
	}
	h->cells[h->count] = db_column_json(row, 0);
	h->pinned[h->count++] = db_column_null(row, 1) ? 0 : db_column_int64(row, 1);
}

int store_build_wanted(struct store *s, long long build_task, const struct queue_agents *agents,
		       bool *ret_wanted)
{
	struct hold_cells h = {0};
	int rc = db_read_rows(s,
			      "SELECT cell, pinned_agent FROM tasks"
			      " WHERE build_task = ? AND state = 'queued' ORDER BY id",
			      add_cell, &h, "i", build_task);

	if (rc == 0)
		rc = h.rc;
	if (rc == 0)
		*ret_wanted = queue_build_wanted(h.cells, h.pinned, h.count, agents->list, agents->count);
	for (size_t i = 0; i < h.count; i++)
		cJSON_Delete((cJSON *)h.cells[i]);
	free(h.cells);
	free(h.pinned);
	return rc;
}
