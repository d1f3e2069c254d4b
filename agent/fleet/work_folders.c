/* work_folders.c - the budget of failed work folders (work_folders.h). */
#include "work_folders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/log.h"
#include "loadlab/plat.h"

/* Most folders looked at in one prune (more are left for the next). */
#define WORK_SCAN_MAX 4096

struct work_folder {
	long long task, attempt;
};

struct scan {
	struct work_folder folders[WORK_SCAN_MAX];
	size_t count;
};

/* plat_list_dir()'s visitor: keeps the names of the form TASK-ATTEMPT. */
static int visit(void *context, const char *name)
{
	struct scan *scan = context;
	long long task, attempt;
	char tail;

	if (scan->count < WORK_SCAN_MAX && sscanf(name, "%lld-%lld%c", &task, &attempt, &tail) == 2 &&
	    task > 0 && attempt > 0) {
		scan->folders[scan->count].task = task;
		scan->folders[scan->count].attempt = attempt;
		scan->count++;
	}
	return 0;
}

static int oldest_first(const void *a, const void *b)
{
	const struct work_folder *x = a, *y = b;

	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	return (x->attempt > y->attempt) - (x->attempt < y->attempt);
}

static void remove_folder(const char *work_root, const struct work_folder *folder, const char *why)
{
	char path[PLAT_MAX_PATH + 1], name[48];
	int rc;

	snprintf(name, sizeof(name), "%lld-%lld", folder->task, folder->attempt);
	if (plat_path_join(path, sizeof(path), work_root, name) < 0)
		return;
	rc = plat_remove_tree(path);
	log_event(rc < 0 ? LOG_WARN : LOG_INFO, rc < 0 ? "work_not_removed" : "work_removed", "folder", name,
		  "reason", rc < 0 ? err_message(rc) : why, NULL);
	err_clear();
}

int work_folders_prune(const char *work_root, size_t keep, long long min_free, long long *ret_free)
{
	struct scan *scan = calloc(1, sizeof(*scan));
	long long free_bytes = 0;
	size_t next = 0;
	int rc;

	if (!scan)
		return LL_ENOMEM;
	if ((rc = plat_list_dir(work_root, visit, scan)) < 0)
		goto out;
	qsort(scan->folders, scan->count, sizeof(scan->folders[0]), oldest_first);
	for (; next + keep < scan->count; next++)
		remove_folder(work_root, &scan->folders[next], "more failed work folders than the budget");
	if ((rc = plat_free_bytes(work_root, &free_bytes)) < 0)
		goto out;
	for (; min_free > 0 && free_bytes < min_free && next < scan->count; next++) {
		remove_folder(work_root, &scan->folders[next], "the disk needs the space for the next task");
		if ((rc = plat_free_bytes(work_root, &free_bytes)) < 0)
			goto out;
	}
	if (ret_free)
		*ret_free = free_bytes;
out:
	free(scan);
	return rc;
}
