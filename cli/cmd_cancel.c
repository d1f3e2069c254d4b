/* loadlab cancel JOB: POST /api/v1/jobs/{id}/cancel. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "table.h"

#include <cjson/cJSON.h>
#include <stdio.h>

static const char usage_text[] = "usage: loadlab cancel JOB\n\n"
				 "Cancels job JOB: queued tasks are not leased again and agents holding one\n"
				 "learn it at their next heartbeat. Prints \"job ID: STATE\". Cancelling a\n"
				 "finished job is an error (exit 2).\n";

int cmd_cancel(int argc, char **argv)
{
	cJSON *job = NULL;
	char path[80], state[64];
	long long id;
	int rc;

	if ((rc = args_job_only(argc, argv, "cancel", usage_text, &id)) >= 0)
		return rc;
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/cancel", id);
	rc = client_fetch_object("POST", path, "{}", &job);
	if (rc == 0) {
		table_json_text(cJSON_GetObjectItemCaseSensitive(job, "state"), state, sizeof(state));
		printf("job %lld: ", id);
		table_print_text(stdout, state);
		fputc('\n', stdout);
	}
	cJSON_Delete(job);
	return rc < 0 ? client_fail("cancel", rc) : 0;
}
