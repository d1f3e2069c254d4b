/* loadlab status JOB: GET /api/v1/jobs/{id}, the job and a table of its tasks. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "table.h"
#include "waiting.h"

#include "loadlab/err.h"

#include <cjson/cJSON.h>
#include <stdio.h>

static const char usage_text[] =
	"usage: loadlab status JOB\n\n"
	"Prints job JOB (name, family, state, who submitted it, task counts) and a\n"
	"table of its tasks: cell, state, attempt, phase, percent, agent; then, for\n"
	"queued tasks that no enrolled agent can take now, why:\n"
	"  waiting: tasks 3, 4: no agent has os=winxp\n";

static void print_field(const char *label, const cJSON *job, const char *key)
{
	char text[256];

	table_json_text(cJSON_GetObjectItemCaseSensitive(job, key), text, sizeof(text));
	printf("%s", label);
	table_print_text(stdout, text);
}

static int add_task(struct table *t, const cJSON *task)
{
	char cell[256];
	int rc;

	table_map_text(cJSON_GetObjectItemCaseSensitive(task, "cell"), ",", cell, sizeof(cell));
	if ((rc = table_add_json(t, cJSON_GetObjectItemCaseSensitive(task, "id"))) < 0 ||
	    (rc = table_add(t, *cell ? cell : "-")) < 0)
		return rc;
	return table_add_fields(t, task,
				(const char *const[]){"state", "attempt", "phase", "percent", "agent_id",
						      "last_error", NULL});
}

static int print_job(const cJSON *job, long long id)
{
	static const char *const headers[] = {"TASK",    "CELL",  "STATE",      "ATTEMPT", "PHASE",
					      "PERCENT", "AGENT", "LAST ERROR", NULL};
	static const char *const states[] = {"queued", "leased", "done", "dead", "cancelled"};
	const cJSON *by_state = cJSON_GetObjectItemCaseSensitive(job, "tasks_by_state");
	int rc;

	printf("job %lld", id);
	print_field(" ", job, "name");
	print_field(" (", job, "family");
	print_field("): ", job, "state");
	print_field(", priority ", job, "priority");
	print_field("\nsubmitted by ", job, "submitted_by");
	print_field(" at ", job, "created_at");
	print_field(", updated ", job, "updated_at");
	print_field("\ntasks: ", job, "task_count");
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		printf("%s%s ", i ? ", " : " (", states[i]);
		print_field("", by_state, states[i]);
	}
	printf(")\n\n");

	rc = table_list(stdout, job, "tasks", headers, add_task);
	if (rc == 0)
		waiting_print(stdout, job);
	return rc;
}

int cmd_status(int argc, char **argv)
{
	cJSON *job = NULL;
	char path[64];
	long long id;
	int rc;

	if ((rc = args_job_only(argc, argv, "status", usage_text, &id)) >= 0)
		return rc;
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld", id);
	rc = client_fetch_object("GET", path, NULL, &job);
	if (rc == 0 && (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(job, "id")) ||
			!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(job, "tasks"))))
		rc = err_set(LL_EFORMAT, "The server's answer to GET %s is not a job.", path);
	if (rc == 0)
		rc = print_job(job, id);
	cJSON_Delete(job);
	return rc < 0 ? client_fail("status", rc) : 0;
}
