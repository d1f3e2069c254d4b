/*
 * report_sides.h - the two sides of a comparison (report_compare.c): each
 * job's tasks in task order with what compare needs of their results
 * (report_compare_data.c), read from the store's cache or computed from
 * the results' texts (report_sides.c). Only the report's files include it.
 */
#ifndef LOADLAB_SERVER_REPORT_SIDES_H
#define LOADLAB_SERVER_REPORT_SIDES_H

#include "report_int.h"
#include "store/store.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* A side's tasks in task order, a later task of a cell replacing the
 * earlier one at the end, with a hash index over the cells' keys (open
 * addressing, never full). Each task holds what compare needs of its
 * result (report_compare_data.c), cached or computed here. */
struct side_task {
	char *key, *state, *last_error;
	bool replaced;
	long long result_id;
	bool has_result; /* the result could be read */
	void *data;      /* compare data computed here (else READ points into the side's blocks) */
	struct report_compare_data read;
	struct report_sample floor; /* the floor sorted, when it has samples */
};

/* Memory the store's cached compare data is copied into, 8-byte aligned:
 * mappings of at least BLOCK_SIZE bytes, huge pages asked for (copied blob
 * by blob into the heap, 2,000 blobs of 25 KB cost a page fault per 4 KiB
 * and the heap's growth). */
#define BLOCK_SIZE (32u << 20)

struct block {
	struct block *next;
	size_t size, used;
};

struct compare_side {
	struct side_task *tasks;
	size_t count, room;
	size_t capacity; /* of the index: a power of two, over twice the count */
	size_t *index;   /* task number + 1; 0: empty */
	struct block *blocks;
};

/* The context of report_side_collect(): a side, its role, bodies to summarize. */
struct collect {
	struct compare_side *side;
	bool candidate;
	cJSON *bodies; /* {"<task number>": result text, or null: read it} */
};

/* The task of SIDE in the cell KEY (the last of that key), or NULL. */
struct side_task *report_side_find(struct compare_side *side, const char *key);

/* store_job_compare_rows()'s FN: the row's task added to CONTEXT (a struct
 * collect), its compare data read when cached, its text noted in BODIES
 * otherwise; LL_ENOMEM. */
int report_side_collect(void *context, const struct store_report_row *row);

/* Compare's data of the results whose data was not cached (BODIES of
 * report_side_collect()), from their texts, and cached for the next
 * compares (summary.h). */
void report_side_summarize(struct store *store, struct compare_side *side, bool candidate,
			   const cJSON *bodies);

/* Every task's floor sorted once (each serves the task's every row). */
void report_side_sort_floors(struct compare_side *side);

void report_side_release(struct compare_side *side);

#endif
