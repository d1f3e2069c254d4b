/* Why a job's queued tasks wait (waiting.h). */
#include "waiting.h"

#include "table.h"

#include <stdbool.h>
#include <string.h>

/* TASK's reason for waiting, or NULL when it is not held back. */
static const char *task_reason(const cJSON *task)
{
	const cJSON *waiting = cJSON_GetObjectItemCaseSensitive(task, "waiting");
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(waiting, "reason");

	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(waiting, "could_run")) || !cJSON_IsString(reason) ||
	    !*reason->valuestring)
		return NULL;
	return reason->valuestring;
}

/* True when a task before TASK in TASKS has the reason REASON. */
static bool seen_before(const cJSON *tasks, const cJSON *task, const char *reason)
{
	const cJSON *earlier;

	for (earlier = tasks->child; earlier && earlier != task; earlier = earlier->next) {
		const char *other = task_reason(earlier);
		if (other && strcmp(other, reason) == 0)
			return true;
	}
	return false;
}

void waiting_print(FILE *out, const cJSON *job)
{
	const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(job, "tasks"), *task, *same;

	if (!cJSON_IsArray(tasks))
		return;
	cJSON_ArrayForEach(task, tasks) {
		const char *reason = task_reason(task);
		size_t count = 0;
		char id[32];

		if (!reason || seen_before(tasks, task, reason))
			continue;
		cJSON_ArrayForEach(same, tasks) {
			const char *other = task_reason(same);
			if (other && strcmp(other, reason) == 0)
				count++;
		}
		fprintf(out, "waiting: task%s ", count == 1 ? "" : "s");
		count = 0;
		cJSON_ArrayForEach(same, tasks) {
			const char *other = task_reason(same);
			if (!other || strcmp(other, reason) != 0)
				continue;
			table_json_text(cJSON_GetObjectItemCaseSensitive(same, "id"), id, sizeof(id));
			fprintf(out, "%s%s", count++ ? ", " : "", id);
		}
		fputs(": ", out);
		table_print_text(out, reason);
		fputc('\n', out);
	}
}

const char *waiting_first_reason(const cJSON *job, size_t *ret_others)
{
	const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(job, "tasks"), *task;
	const char *first = NULL;
	size_t others = 0;

	*ret_others = 0;
	if (!cJSON_IsArray(tasks))
		return NULL;
	cJSON_ArrayForEach(task, tasks) {
		const char *reason = task_reason(task);
		if (!reason || seen_before(tasks, task, reason))
			continue;
		if (first)
			others++;
		else
			first = reason;
	}
	*ret_others = others;
	return first;
}
