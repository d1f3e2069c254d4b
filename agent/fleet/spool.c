#include "spool.h"
#include "task_attempt.h"
#include "loadlab/plat.h"

#include "loadlab/err.h"
#include "loadlab/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPOOL_MAX_ENTRIES 4096

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

int spool_each(const char *data_dir,
	       int (*deliver)(void *context, long long task_id, long long attempt, const char *body),
	       void *context)
{
	struct task_attempt *entries = NULL; /* "<digits>-<digits>.json", by task and attempt */
	size_t count = 0;
	char path[4096], *text;
	size_t len;
	int rc;

	spool_dir(data_dir, path, sizeof(path));
	if ((rc = task_attempt_list(path, ".json", SPOOL_MAX_ENTRIES, &entries, &count)) < 0)
		return rc;
	for (size_t i = 0; i < count && rc == 0; i++) {
		spool_file(data_dir, entries[i].task_id, entries[i].attempt, path, sizeof(path));
		if (plat_read_file(path, SPOOL_RESULT_LIMIT, &text, &len) < 0) {
			log_event(LOG_WARN, "spool_skipped", "file", path, "reason", err_message(LL_EIO),
				  NULL);
			continue;
		}
		rc = deliver(context, entries[i].task_id, entries[i].attempt, text);
		free(text);
	}
	free(entries);
	return rc;
}
