/* work_folders.c - the budget of failed work folders (work_folders.h). */
#include "work_folders.h"
#include "task_attempt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/log.h"
#include "loadlab/plat.h"

/* Most folders looked at in one prune (more are left for the next). */
#define WORK_SCAN_MAX 4096

/* Whether FOLDER went. */
static bool remove_folder(const char *work_root, const struct task_attempt *folder, const char *why)
{
	char path[PLAT_MAX_PATH + 1], name[48];
	int rc;

	snprintf(name, sizeof(name), "%lld-%lld", folder->task_id, folder->attempt);
	if (plat_path_join(path, sizeof(path), work_root, name) < 0)
		return false;
	rc = plat_remove_tree(path);
	log_event(rc < 0 ? LOG_WARN : LOG_INFO, rc < 0 ? "work_not_removed" : "work_removed", "folder", name,
		  "reason", rc < 0 ? err_message(rc) : why, NULL);
	err_clear();
	return rc == 0;
}

int work_folders_prune(const char *work_root, size_t keep, long long min_free, long long *ret_free)
{
	struct task_attempt *folders = NULL;
	long long free_bytes = 0;
	size_t count = 0, next = 0;
	int rc;

	if ((rc = task_attempt_list(work_root, "", WORK_SCAN_MAX, &folders, &count)) < 0)
		return rc;
	for (; next + keep < count; next++)
		remove_folder(work_root, &folders[next], "more failed work folders than the budget");
	if ((rc = plat_free_bytes(work_root, &free_bytes)) < 0)
		goto out;
	for (; min_free > 0 && free_bytes < min_free && next < count; next++) {
		remove_folder(work_root, &folders[next], "the disk needs the space for the next task");
		if ((rc = plat_free_bytes(work_root, &free_bytes)) < 0)
			goto out;
	}
	if (ret_free)
		*ret_free = free_bytes;
out:
	free(folders);
	return rc;
}

bool work_folders_remove_oldest(const char *work_root, const char *except, const char *why)
{
	struct task_attempt *folders = NULL;
	size_t count = 0;
	bool removed = false;

	if (task_attempt_list(work_root, "", WORK_SCAN_MAX, &folders, &count) < 0) {
		err_clear();
		return false;
	}
	for (size_t i = 0; i < count && !removed; i++) {
		char name[48];
		snprintf(name, sizeof(name), "%lld-%lld", folders[i].task_id, folders[i].attempt);
		if (except && strcmp(name, except) == 0)
			continue;
		removed = remove_folder(work_root, &folders[i], why);
	}
	free(folders);
	return removed;
}
