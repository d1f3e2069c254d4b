/* loadlab jobs [--state S] [--limit N] [--before ID]: GET /api/v1/jobs. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "table.h"

#include "loadlab/json.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: loadlab jobs [--state S] [--limit N] [--before ID]\n\n"
	"Lists jobs, newest first: id, name, family, state, tasks done of all,\n"
	"priority, creation time.\n\n"
	"  --state S    only jobs in state S (queued, running, done, failed, cancelled)\n"
	"  --limit N    at most N jobs (1..200; the server's default is 50)\n"
	"  --before ID  jobs older than job ID (the next page)\n";

static int add_job(struct table *t, const cJSON *job)
{
	const cJSON *by_state = cJSON_GetObjectItemCaseSensitive(job, "tasks_by_state");
	char done[32], total[32];
	int rc;

	table_json_text(cJSON_GetObjectItemCaseSensitive(by_state, "done"), done, sizeof(done));
	table_json_text(cJSON_GetObjectItemCaseSensitive(job, "task_count"), total, sizeof(total));
	if ((rc = table_add_fields(t, job, (const char *const[]){"id", "name", "family", "state", NULL})) <
		    0 ||
	    (rc = table_addf(t, "%s/%s", done, total)) < 0)
		return rc;
	return table_add_fields(t, job, (const char *const[]){"priority", "created_at", NULL});
}

static int print_jobs(const cJSON *list)
{
	static const char *const headers[] = {"ID",         "NAME",     "FAMILY",  "STATE",
					      "DONE/TASKS", "PRIORITY", "CREATED", NULL};
	const cJSON *next = cJSON_GetObjectItemCaseSensitive(list, "next_before");
	int rc = table_list(stdout, list, "jobs", headers, add_job);

	if (rc == 0 && cJSON_IsNumber(next)) {
		char text[32];
		table_json_text(next, text, sizeof(text));
		printf("(more: loadlab jobs --before %s)\n", text);
	}
	return rc;
}

struct jobs_options {
	const char *state;
	long long limit, before;
};

static int jobs_option(void *context, int option, const char *value)
{
	struct jobs_options *o = context;

	if (option == 's')
		o->state = value;
	else if (option == 'n')
		return args_integer(value, 1, 200, "--limit", &o->limit);
	else if (option == 'b')
		return args_job_id(value, &o->before);
	return 0;
}

int cmd_jobs(int argc, char **argv)
{
	static const struct option options[] = {
		{"state", required_argument, NULL, 's'},
		{"limit", required_argument, NULL, 'n'},
		{"before", required_argument, NULL, 'b'},
		{NULL, 0, NULL, 0},
	};
	struct jobs_options o = {0};
	cJSON *list = NULL;
	char path[256], *escaped = NULL;
	int rc = args_parse(argc, argv, "jobs", usage_text, options, jobs_option, &o);

	if (rc >= 0)
		return rc;
	if (optind != argc)
		return args_usage_error("jobs", "takes no arguments, got '%s'", argv[optind]);

	if (o.state) {
		escaped = rest_escape(o.state);
		if (!escaped || strlen(escaped) > 64) {
			free(escaped);
			return args_usage_error("jobs", "--state '%s' is not a job state", o.state);
		}
	}
	snprintf(path, sizeof(path), "/api/v1/jobs?");
	if (escaped)
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "state=%s&", escaped);
	if (o.limit)
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "limit=%lld&", o.limit);
	if (o.before)
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "before=%lld&", o.before);
	path[strlen(path) - 1] = '\0'; /* the last '&' or '?' */
	free(escaped);

	rc = client_fetch_object("GET", path, NULL, &list);
	if (rc == 0)
		rc = print_jobs(list);
	cJSON_Delete(list);
	return rc < 0 ? client_fail("jobs", rc) : 0;
}
