/*
 * cmd_update_trial.c - loadlab-agent update-trial --server URL --data-dir
 * DIR: what an update runs of a new build before it installs it
 * (update/update.h): authenticates with agent.json's token (GET
 * /api/v1/agent-builds) and prints UPDATE_TRIAL_OK. Exit 0 ready, 1 not,
 * 2 usage.
 */
#include "cmd/commands.h"
#include "fleet/identity.h"
#include "update/update.h"

#include "loadlab/err.h"
#include "loadlab/rest_client.h"

#include <stdio.h>
#include <string.h>

/* The value of option NAME of ARGV ("--x V" or "--x=V"), or NULL. */
static const char *option_of(int argc, char **argv, const char *name)
{
	size_t n = strlen(name);

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], name) == 0 && i + 1 < argc)
			return argv[i + 1];
		if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
			return argv[i] + n + 1;
	}
	return NULL;
}

int cmd_update_trial(int argc, char **argv)
{
	const char *server = option_of(argc, argv, "--server"),
		   *data_dir = option_of(argc, argv, "--data-dir");
	struct rest_request r = {"GET", "/api/v1/agent-builds", NULL, 0, 30};
	struct identity identity;
	struct rest_client c;
	struct rest_answer a;
	int rc;

	if (!server || !data_dir) {
		fprintf(stderr, "loadlab-agent update-trial: needs --server URL and --data-dir DIR\n");
		return 2;
	}
	if ((rc = identity_load(data_dir, &identity)) < 0 ||
	    (rc = rest_client_global_init("loadlab-agent/" LOADLAB_VERSION)) < 0 ||
	    (rc = rest_client_open(&c, server, identity.token)) < 0) {
		fprintf(stderr, "loadlab-agent update-trial: %s\n", err_message(rc));
		return 1;
	}
	if ((rc = rest_client_send(&c, &r, &a)) == 0) {
		rc = rest_answer_error(&a, "GET", r.path);
		rest_answer_release(&a);
	}
	rest_client_close(&c);
	if (rc < 0) {
		fprintf(stderr, "loadlab-agent update-trial: %s\n", err_message(rc));
		return 1;
	}
	printf("%s %s\n", UPDATE_TRIAL_OK, LOADLAB_VERSION);
	return 0;
}
