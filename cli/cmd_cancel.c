/* loadlab cancel JOB: POST /api/v1/jobs/{id}/cancel. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "table.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>

static const char usage_text[] =
	"usage: loadlab cancel JOB\n\n"
	"Cancels job JOB: queued tasks are not leased again and agents holding one\n"
	"learn it at their next heartbeat. Prints \"job ID: STATE\". Cancelling a\n"
	"finished job is an error (exit 2).\n";

int cmd_cancel(int argc, char **argv)
{
	struct client c = {0};
	cJSON *job = NULL;
	char path[80], state[64];
	long long id;
	int opt, rc;

	if ((opt = args_help_only(argc, argv, "cancel", usage_text)) >= 0)
		return opt;
	if (argc - optind != 1)
		return args_usage_error("cancel", "expects one JOB id");
	rc = args_job_id(argv[optind], &id);
	if (rc < 0)
		return client_fail("cancel", rc);
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/cancel", id);
	rc = client_open(&c);
	if (rc == 0)
		rc = client_get_object(&c, "POST", path, "{}", &job);
	if (rc == 0) {
		table_json_text(cJSON_GetObjectItemCaseSensitive(job, "state"), state, sizeof(state));
		printf("job %lld: ", id);
		table_print_text(stdout, state);
		fputc('\n', stdout);
	}
	cJSON_Delete(job);
	client_close(&c);
	return rc < 0 ? client_fail("cancel", rc) : 0;
}
