/* task_room.c - the free disk a task has on the agent (task_room.h). */
#include "task_room.h"
#include "work_folders.h"

#include <stdio.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/plat.h"

/* The blob cache's reclaim(): the oldest failed work folder goes. */
static bool reclaim_failed_folder(void *context)
{
	struct task_room *room = context;

	return work_folders_remove_oldest(room->work_root, room->own_folder,
					  "the disk needs the space for a task");
}

void task_room_init(struct task_room *room, const char *data_dir, long long min_free, long long task_id,
		    long long attempt)
{
	memset(room, 0, sizeof(*room));
	snprintf(room->work_root, sizeof(room->work_root), "%s%cwork", data_dir, plat_path_separator);
	snprintf(room->blob_dir, sizeof(room->blob_dir), "%s%cblobs", data_dir, plat_path_separator);
	snprintf(room->own_folder, sizeof(room->own_folder), "%lld-%lld", task_id, attempt);
	room->min_free = min_free;
	room->blob_room.keep_free_bytes = min_free;
	room->blob_room.reclaim = reclaim_failed_folder;
	room->blob_room.reclaim_context = room;
}

int task_room_before_start(struct task_room *room, const cJSON *lease, char *reason, size_t size)
{
	struct blob_cache cache;
	long long free_bytes = 0;
	int rc;

	if ((rc = work_folders_prune(room->work_root, WORK_FAILED_KEPT, 0, NULL)) < 0 ||
	    (rc = blob_cache_open(&cache, room->blob_dir, 0)) < 0) {
		snprintf(reason, size, "The agent cannot make room for the task: %s", err_message(rc));
		return rc;
	}
	blob_cache_set_room(&cache, &room->blob_room);
	blob_cache_pin_named(&cache, lease);
	rc = blob_cache_make_room(&cache, 0, &free_bytes);
	if (rc == LL_ENOSPACE) {
		snprintf(reason, size,
			 "This agent has %lld bytes free for its work folder, fewer than the %lld a task "
			 "needs to start (--min-free-bytes), with no failed work folder and no cached file "
			 "the task does not use left (%lld bytes of cached files it uses kept): the task is "
			 "left for another agent.",
			 free_bytes, room->min_free, blob_cache_pinned_bytes(&cache));
	} else if (rc < 0)
		snprintf(reason, size, "The agent cannot tell the free space of its work folder: %s",
			 err_message(rc));
	blob_cache_close(&cache);
	return rc;
}
