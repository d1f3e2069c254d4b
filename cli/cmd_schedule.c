/* loadlab schedule add|list|pause|resume|rm|run: /api/v1/schedules. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "table.h"

#include "loadlab/json.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: loadlab schedule add SERIES (--cron 'M H DOM MON DOW' | --every SECONDS) JOBFILE\n"
	"       loadlab schedule list\n"
	"       loadlab schedule pause|resume|rm|run ID\n\n"
	"Recurring jobs of a series. Cron expressions are in UTC. A schedule whose\n"
	"last job is still queued or running skips its turn; runs missed while the\n"
	"daemon was down are run once.\n";

#define SCHEDULE_MAX_JOB_FILE (1024 * 1024)

static int add_schedule(struct table *t, const cJSON *s)
{
	const cJSON *cron = cJSON_GetObjectItemCaseSensitive(s, "cron");
	char when[300];
	int rc;

	if (cJSON_IsString(cron))
		snprintf(when, sizeof(when), "cron %s", cron->valuestring);
	else
		snprintf(when, sizeof(when), "every %.0f s",
			 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "interval_s")));
	if ((rc = table_add_fields(t, s, (const char *const[]){"id", "series", NULL})) < 0 ||
	    (rc = table_addf(t, "%s", when)) < 0)
		return rc;
	return table_add_fields(
		t, s, (const char *const[]){"enabled", "next_run_at", "last_job_id", "skipped", NULL});
}

static int print_list(const cJSON *list)
{
	static const char *const headers[] = {"ID",       "SERIES",   "WHEN",    "ENABLED",
					      "NEXT RUN", "LAST JOB", "SKIPPED", NULL};

	return table_list(stdout, list, "schedules", headers, add_schedule);
}

static int read_file(const char *path, cJSON **ret)
{
	FILE *f = fopen(path, "rb");
	char *text;
	size_t n;
	int rc;

	if (!f)
		return args_usage_error("schedule", "cannot open '%s'", path), -1;
	text = malloc(SCHEDULE_MAX_JOB_FILE + 1);
	n = text ? fread(text, 1, SCHEDULE_MAX_JOB_FILE + 1, f) : 0;
	fclose(f);
	if (!text || n > SCHEDULE_MAX_JOB_FILE) {
		free(text);
		return args_usage_error("schedule", "'%s' is too big", path), -1;
	}
	rc = json_parse_object(text, n, 64, ret);
	free(text);
	if (rc < 0)
		return args_usage_error("schedule", "'%s' is not a JSON object", path), -1;
	return 0;
}

static int add(int argc, char **argv)
{
	cJSON *body, *job = NULL, *out = NULL;
	long long every = 0;
	const char *cron = NULL;
	char *text;
	int rc;

	/* add SERIES --cron EXPR|--every N JOBFILE */
	if (argc != 6 || (strcmp(argv[3], "--cron") != 0 && strcmp(argv[3], "--every") != 0))
		return args_usage_error("schedule", "add takes SERIES --cron EXPR|--every SECONDS JOBFILE");
	if (strcmp(argv[3], "--cron") == 0)
		cron = argv[4];
	else if ((rc = args_integer(argv[4], 1, 31622400, "--every", &every)) < 0)
		return client_fail("schedule", rc);
	if (read_file(argv[5], &job) < 0)
		return 2;
	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "series", argv[2]);
	if (cron)
		cJSON_AddStringToObject(body, "cron", cron);
	else
		cJSON_AddNumberToObject(body, "interval_s", (double)every);
	cJSON_AddItemToObject(body, "job", job);
	text = cJSON_PrintUnformatted(body);
	cJSON_Delete(body);
	rc = client_fetch_object("POST", "/api/v1/schedules", text, &out);
	free(text);
	if (rc == 0)
		printf("schedule %.0f: next run %s\n",
		       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(out, "id")),
		       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(out, "next_run_at"))
			       ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(out, "next_run_at"))
			       : "-");
	cJSON_Delete(out);
	return rc < 0 ? client_fail("schedule", rc) : 0;
}

int cmd_schedule(int argc, char **argv)
{
	const char *verb = argc > 1 ? argv[1] : "";
	char path[128];
	cJSON *out = NULL;
	long long id = 0;
	int rc;

	if (strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (strcmp(verb, "add") == 0)
		return add(argc, argv);
	if (strcmp(verb, "list") == 0) {
		if (argc != 2)
			return args_usage_error("schedule", "list takes no arguments");
		rc = client_fetch_object("GET", "/api/v1/schedules", NULL, &out);
		if (rc == 0)
			rc = print_list(out);
		cJSON_Delete(out);
		return rc < 0 ? client_fail("schedule", rc) : 0;
	}
	if (strcmp(verb, "pause") && strcmp(verb, "resume") && strcmp(verb, "rm") && strcmp(verb, "run"))
		return args_usage_error("schedule", "unknown action '%s' (add, list, pause, resume, rm, run)",
					verb);
	if (argc != 3)
		return args_usage_error("schedule", "%s takes one schedule id", verb);
	if ((rc = args_job_id(argv[2], &id)) < 0)
		return client_fail("schedule", rc);
	snprintf(path, sizeof(path), "/api/v1/schedules/%lld%s", id, strcmp(verb, "run") == 0 ? "/run" : "");
	if (strcmp(verb, "pause") == 0 || strcmp(verb, "resume") == 0)
		rc = client_fetch_object(
			"PATCH", path,
			strcmp(verb, "pause") == 0 ? "{\"enabled\":false}" : "{\"enabled\":true}", &out);
	else
		rc = client_fetch_object(strcmp(verb, "rm") == 0 ? "DELETE" : "POST", path,
					 strcmp(verb, "rm") == 0 ? NULL : "{}", &out);
	if (rc == 0 && strcmp(verb, "run") == 0)
		printf("job %.0f\n", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(out, "job_id")));
	else if (rc == 0)
		printf("schedule %lld: %s\n", id,
		       strcmp(verb, "rm") == 0      ? "deleted"
		       : strcmp(verb, "pause") == 0 ? "paused"
						    : "resumed");
	cJSON_Delete(out);
	return rc < 0 ? client_fail("schedule", rc) : 0;
}
