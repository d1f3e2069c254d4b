/*
 * task_room.h - the free disk a task has on the agent (docs/agent.md,
 * "Disk"): before it starts, --min-free-bytes free on the data folder's
 * disk, and while it fetches its files the same kept free below them.
 * What gives way, in this order: the failed work folders beyond the
 * WORK_FAILED_KEPT newest; then, while the disk has too little free, the
 * failed work folders, oldest first (never the task's own), then the
 * cached blobs the task does not use, least recently used first
 * (blob_cache.h). Then a task is refused before it starts (retryable: the
 * disk is full of something else), or fails while it fetches because its
 * own files do not fit (LL_ENOSPACE, not retryable).
 */
#ifndef LOADLAB_AGENT_TASK_ROOM_H
#define LOADLAB_AGENT_TASK_ROOM_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "blobs/blob_cache.h"

struct task_room {
	char work_root[4096]; /* DATA_DIR/work */
	char blob_dir[4096];  /* DATA_DIR/blobs */
	long long min_free;   /* bytes kept free (--min-free-bytes) */
	char own_folder[48];  /* the task's work folder, "TASK-ATTEMPT" */
	/* For the pipeline (pipeline.h): keeps MIN_FREE free, reclaiming
	 * failed work folders. Points into this struct: do not copy it. */
	struct blob_cache_room blob_room;
};

/* Prepares ROOM for the task TASK_ID's ATTEMPT of the agent whose data
 * folder is DATA_DIR, keeping MIN_FREE bytes free. */
void task_room_init(struct task_room *room, const char *data_dir, long long min_free, long long task_id,
		    long long attempt);

/* Makes room for the task before it starts, the blobs LEASE names (its
 * job's files, a shared build's) kept. 0 when the disk then has MIN_FREE
 * bytes free; otherwise a code with a message that says why (the free
 * bytes, --min-free-bytes; the task is left for another agent) in REASON
 * (SIZE bytes). */
int task_room_before_start(struct task_room *room, const cJSON *lease, char *reason, size_t size);

#endif
