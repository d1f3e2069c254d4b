/* task_attempt.c - task_attempt_parse() and task_attempt_list() (task_attempt.h). */
#include "task_attempt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/plat.h"

bool task_attempt_parse(const char *name, const char *suffix, struct task_attempt *ret)
{
	long long task_id, attempt;
	int used = 0;

	if (name[0] < '0' || name[0] > '9' ||
	    sscanf(name, "%18lld-%9lld%n", &task_id, &attempt, &used) != 2 || task_id < 1 || attempt < 1 ||
	    strcmp(name + used, suffix) != 0)
		return false;
	ret->task_id = task_id;
	ret->attempt = attempt;
	return true;
}

static int by_task(const void *a, const void *b)
{
	const struct task_attempt *x = a, *y = b;

	if (x->task_id != y->task_id)
		return x->task_id < y->task_id ? -1 : 1;
	return (x->attempt > y->attempt) - (x->attempt < y->attempt);
}

struct listing {
	const char *suffix;
	size_t max, count;
	struct task_attempt *entries;
};

static int collect(void *context, const char *name)
{
	struct listing *list = context;

	if (list->count < list->max && task_attempt_parse(name, list->suffix, &list->entries[list->count]))
		list->count++;
	return 0;
}

int task_attempt_list(const char *folder, const char *suffix, size_t max, struct task_attempt **ret,
		      size_t *ret_count)
{
	struct listing list = {suffix, max, 0, calloc(max ? max : 1, sizeof(struct task_attempt))};
	int rc;

	if (!list.entries)
		return err_set(LL_ENOMEM, "Out of memory.");
	if ((rc = plat_list_dir(folder, collect, &list)) < 0) {
		free(list.entries);
		return rc;
	}
	qsort(list.entries, list.count, sizeof(list.entries[0]), by_task);
	*ret = list.entries;
	*ret_count = list.count;
	return 0;
}
