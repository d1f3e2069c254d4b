#include "spool.h"
#include "loadlab/plat.h"

#include "loadlab/err.h"
#include "loadlab/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPOOL_MAX_ENTRIES 4096

struct spool_entry {
	long long task_id;
	long long attempt;
};

static void spool_dir(const char *data_dir, char *out, size_t size)
{
	snprintf(out, size, "%s%cspool", data_dir, plat_path_separator);
}

static void spool_file(const char *data_dir, long long task_id, long long attempt, char *out, size_t size)
{
	snprintf(out, size, "%s%cspool%c%lld-%lld.json", data_dir, plat_path_separator, plat_path_separator,
		 task_id, attempt);
}

int spool_put(const char *data_dir, long long task_id, long long attempt, const char *body)
{
	char path[4096];
	int rc;

	spool_dir(data_dir, path, sizeof(path));
	if ((rc = plat_mkdirs_private(path)) < 0)
		return rc;
	spool_file(data_dir, task_id, attempt, path, sizeof(path));
	return plat_write_file_atomic(path, body, strlen(body), true);
}

int spool_remove(const char *data_dir, long long task_id, long long attempt)
{
	char path[4096];

	spool_file(data_dir, task_id, attempt, path, sizeof(path));
	return plat_remove_file(path);
}

struct listing {
	struct spool_entry *entries;
	size_t count;
};

/* Accepts exactly "<digits>-<digits>.json". */
static int collect(void *context, const char *name)
{
	struct listing *list = context;
	long long task_id, attempt;
	int used = 0;

	if (name[0] < '0' || name[0] > '9' ||
	    sscanf(name, "%18lld-%9lld%n", &task_id, &attempt, &used) != 2 || task_id < 1 || attempt < 1 ||
	    strcmp(name + used, ".json") != 0)
		return 0;
	if (list->count == SPOOL_MAX_ENTRIES)
		return 0;
	list->entries[list->count].task_id = task_id;
	list->entries[list->count].attempt = attempt;
	list->count++;
	return 0;
}

static int by_task(const void *a, const void *b)
{
	const struct spool_entry *x = a, *y = b;

	if (x->task_id != y->task_id)
		return x->task_id < y->task_id ? -1 : 1;
	return x->attempt < y->attempt ? -1 : x->attempt > y->attempt;
}

int spool_each(const char *data_dir,
	       int (*deliver)(void *context, long long task_id, long long attempt, const char *body),
	       void *context)
{
	struct listing list = {calloc(SPOOL_MAX_ENTRIES, sizeof(struct spool_entry)), 0};
	char path[4096], *text;
	size_t len;
	int rc;

	if (!list.entries)
		return err_set(LL_ENOMEM, "Out of memory.");
	spool_dir(data_dir, path, sizeof(path));
	rc = plat_list_dir(path, collect, &list);
	if (rc < 0)
		goto out;
	qsort(list.entries, list.count, sizeof(list.entries[0]), by_task);
	for (size_t i = 0; i < list.count && rc == 0; i++) {
		spool_file(data_dir, list.entries[i].task_id, list.entries[i].attempt, path, sizeof(path));
		if (plat_read_file(path, SPOOL_RESULT_LIMIT, &text, &len) < 0) {
			log_event(LOG_WARN, "spool_skipped", "file", path, "reason", err_message(LL_EIO),
				  NULL);
			continue;
		}
		rc = deliver(context, list.entries[i].task_id, list.entries[i].attempt, text);
		free(text);
	}
out:
	free(list.entries);
	return rc;
}
