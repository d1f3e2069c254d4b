/*
 * cmd_service.c - loadlab-agent service install|uninstall|run: the agent
 * as a Windows service (service/service.h, docs/agent.md "Windows
 * service"). On other systems it says so and names the systemd unit.
 */
#include "cmd/commands.h"
#include "service/service.h"

#include "loadlab/err.h"
#include "loadlab/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
	printf("usage: loadlab-agent service install [--service-name NAME] --server URL\n"
	       "                                     --data-dir DIR [OPTIONS...]\n"
	       "       loadlab-agent service uninstall [--service-name NAME]\n"
	       "       loadlab-agent service run [--service-name NAME] OPTIONS...\n"
	       "\n"
	       "Windows only. install registers this program with the Service Control\n"
	       "Manager as the service NAME (default " SERVICE_DEFAULT_NAME "), started at boot\n"
	       "as LocalSystem, with the fleet member's OPTIONS (loadlab-agent --help:\n"
	       "--server, --data-dir, --enroll-token-file, --name, --labels, --log-format;\n"
	       "--data-dir and --enroll-token-file are made absolute). Start it with\n"
	       "'sc start NAME' or 'net start NAME'. The service logs to DATA_DIR\\" SERVICE_LOG_FILE ";\n"
	       "a stop or shutdown lets the task in hand finish or be given back.\n"
	       "uninstall stops the service if it runs and removes it. run is what the\n"
	       "Service Control Manager starts, not a command to type.\n"
	       "On Linux, use the systemd unit packaging/systemd/loadlab-agent.service.\n"
	       "\n"
	       "exit: 0 done; 2 usage or a refusal of the Service Control Manager.\n");
}

/* True when ARGV holds OPTION, as "--x V" or "--x=V". */
static bool has_option(int argc, char **argv, const char *option)
{
	size_t n = strlen(option);

	for (int i = 0; i < argc; i++)
		if ((strcmp(argv[i], option) == 0 && i + 1 < argc) ||
		    (strncmp(argv[i], option, n) == 0 && argv[i][n] == '='))
			return true;
	return false;
}

int cmd_service(int argc, char **argv)
{
	const char *action, *name = SERVICE_DEFAULT_NAME;
	int first = 2, rc;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		help();
		return argc < 2 ? 2 : 0;
	}
	action = argv[1];
	if (first < argc && strcmp(argv[first], "--service-name") == 0 && first + 1 < argc) {
		name = argv[first + 1];
		first += 2;
	} else if (first < argc && strncmp(argv[first], "--service-name=", 15) == 0) {
		name = argv[first] + 15;
		first++;
	}
	if (!*name || strlen(name) > 200 || strpbrk(name, "/\\"))
		return err_exit_usage("loadlab-agent service",
				      "--service-name must be 1..200 characters without / or \\");
	if (strcmp(action, "install") == 0) {
		if (!has_option(argc - first, argv + first, "--server") ||
		    !has_option(argc - first, argv + first, "--data-dir"))
			return err_exit_usage("loadlab-agent service",
					      "service install needs --server URL and --data-dir DIR");
		if ((rc = service_install(name, argc - first, argv + first)) < 0)
			return err_exit("loadlab-agent service", rc);
		printf("installed the service %s; start it with: sc start %s\n", name, name);
		return 0;
	}
	if (strcmp(action, "uninstall") == 0) {
		if (first != argc)
			return err_exit_usage("loadlab-agent service",
					      "service uninstall takes only --service-name");
		if ((rc = service_uninstall(name)) < 0)
			return err_exit("loadlab-agent service", rc);
		printf("removed the service %s\n", name);
		return 0;
	}
	if (strcmp(action, "update-watch") == 0) {
		/* What a service that updated itself starts (update/update.h). */
		const char *dir = NULL, *seconds = "120";
		enum log_format format;
		for (int i = first; i + 1 < argc; i += 2) {
			if (strcmp(argv[i], "--data-dir") == 0)
				dir = argv[i + 1];
			else if (strcmp(argv[i], "--update-confirm-seconds") == 0)
				seconds = argv[i + 1];
			else if (strcmp(argv[i], "--log-format") == 0 &&
				 log_format_parse(argv[i + 1], &format) == 0)
				log_set_format(format);
		}
		if (!dir || atoll(seconds) < 1)
			return err_exit_usage("loadlab-agent service",
					      "service update-watch needs --data-dir DIR");
		if ((rc = service_update_watch(name, dir, atoll(seconds))) < 0)
			return err_exit("loadlab-agent service", rc);
		return 0;
	}
	if (strcmp(action, "run") == 0) {
		/* argv[first - 1] stands for the program name of the member's argv. */
		rc = service_run(name, cmd_member_start, argc - first + 1, argv + first - 1);
		return rc < 0 ? err_exit("loadlab-agent service", rc) : rc;
	}
	return err_exit_usage("loadlab-agent service", "service takes install, uninstall or run");
}
