/*
 * work_folders.h - the failed tasks' work folders the agent keeps under
 * DATA_DIR/work (docs/agent.md, "Disk"): a task's folder is
 * work/TASK-ATTEMPT; a task that succeeded, was cancelled or whose lease
 * was lost has its folder removed, a failed one keeps it for a look, but
 * only within a budget: the WORK_FAILED_KEPT newest, and none that stands
 * between the disk and the free space the next task needs (oldest first
 * out: the lowest task id, then attempt).
 */
#ifndef LOADLAB_AGENT_WORK_FOLDERS_H
#define LOADLAB_AGENT_WORK_FOLDERS_H

#include <stdbool.h>
#include <stddef.h>

/* Failed work folders kept at most. */
#define WORK_FAILED_KEPT 3
/* Free bytes a task needs on the work folder's disk to start, unless
 * --min-free-bytes says otherwise. */
#define WORK_MIN_FREE_DEFAULT (256ll * 1024 * 1024)

/* Removes the oldest work folders of WORK_ROOT beyond the KEEP newest, and
 * then the oldest ones left while the disk has fewer than MIN_FREE bytes
 * free (MIN_FREE 0: no such check). *RET_FREE (may be NULL) gets the free
 * bytes after. A folder that cannot be removed is skipped (logged). */
int work_folders_prune(const char *work_root, size_t keep, long long min_free, long long *ret_free);

/* Removes the oldest work folder of WORK_ROOT other than EXCEPT (its name,
 * "TASK-ATTEMPT"; NULL: none), logged with WHY. False when there was none
 * to remove (or it could not be listed). */
bool work_folders_remove_oldest(const char *work_root, const char *except, const char *why);

#endif
