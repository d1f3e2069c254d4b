/* loadlab: the command-line client of loadlabd, and the PE toolkit. */
#include "client.h"
#include "commands.h"

#include "loadlab/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SERVER "http://127.0.0.1:8080"

static int cmd_help(int argc, char **argv);

static const struct cli_command commands[] = {
	{"help", cmd_help, "[COMMAND]", "this list, or COMMAND's own help"},
	{"submit", cmd_submit, "FILE [--wait] [--program-dir DIR [--program-dir CAND]]",
	 "submit a job file; --wait follows it to the end"},
	{"status", cmd_status, "JOB", "a job and its tasks"},
	{"jobs", cmd_jobs, "[--state S] [--limit N]", "the jobs, newest first"},
	{"cancel", cmd_cancel, "JOB", "cancel a job"},
	{"agents", cmd_agents, "[--wide] | --builder AGENT", "the fleet: agents, their state and every fact"},
	{"calibrate", cmd_calibrate, "[--agent NAME|ID] [--family elf|pe] [--delay-us X] [--wait]",
	 "the known-effect self-test of an agent, or of every agent"},
	{"report", cmd_report, "JOB [--format table|md|csv|json]", "a job's comparison tables"},
	{"compare", cmd_compare,
	 "BASE CAND | --series NAME [--against REV] | --job ID [--max-regression PCT] [--format F]",
	 "baseline vs candidate; exit 1 on a regression"},
	/* series and schedules */
	{"series", cmd_series, "NAME [--variant V] [--cell C] [--metric median|min | --change-points]",
	 "a series' history, per variant and cell, or its change points"},
	{"schedule", cmd_schedule, "add|list|pause|resume|rm|run ...", "recurring jobs of a series"},
	{"alerts", cmd_alerts, "[--open] | ack ID", "regressions found in a series; ack one"},
	{"bisect", cmd_bisect,
	 "SERIES --good REV --bad REV [--variant V] [--cell C] [--wait] | status ID | cancel ID",
	 "find the revision that made a program series slower"},
	{"pe", cmd_pe, "dump|rebase|bind ...", "read, rebase and bind PE images"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: loadlab [--server URL] [--token T] COMMAND [ARGS...]\n"
		     "       loadlab COMMAND --help | --help | --version\n\n"
		     "options:\n"
		     "  --server URL  loadlabd's URL (env LOADLAB_SERVER; default " DEFAULT_SERVER ")\n"
		     "  --token T     a user or admin token (env LOADLAB_TOKEN)\n\n"
		     "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strlen(commands[i].name) > 8 || strlen(commands[i].usage) > 45)
			/* Too long for the columns: the summary on a line of its own. */
			fprintf(out, "  %s %s\n  %-8s %-45s %s\n", commands[i].name, commands[i].usage, "",
				"", commands[i].summary);
		else
			fprintf(out, "  %-8s %-45s %s\n", commands[i].name, commands[i].usage,
				commands[i].summary);
	fprintf(out, "\nexit status: 0 success, 1 a regression (compare), a failed or cancelled job\n"
		     "(submit --wait) or an open alert (alerts), 2 an error\n"
		     "`loadlab help COMMAND` (or `loadlab COMMAND --help`) says more about one.\n");
}

#define COMMAND_COUNT (sizeof(commands) / sizeof(commands[0]))

static const struct cli_command *find_command(const char *name)
{
	for (size_t c = 0; c < COMMAND_COUNT; c++)
		if (strcmp(name, commands[c].name) == 0)
			return &commands[c];
	return NULL;
}

/* "loadlab: unknown command 'staus' (did you mean 'status'? see loadlab
 * help)" on stderr; returns 2. */
static int unknown_command(const char *name)
{
	const char *near = names_nearest(name, &commands[0].name, COMMAND_COUNT, sizeof(commands[0]));

	fprintf(stderr, "loadlab: unknown command '%.64s' (%s%s%ssee loadlab help)\n", name,
		near ? "did you mean '" : "", near ? near : "", near ? "'? " : "");
	return 2;
}

/* loadlab help [COMMAND]: the list of commands, or COMMAND's --help. */
static int cmd_help(int argc, char **argv)
{
	const struct cli_command *command;
	char *help_argv[] = {NULL, "--help", NULL};

	if (argc == 1 || (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))) {
		usage(stdout);
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "loadlab help: takes at most one COMMAND (see loadlab help)\n");
		return 2;
	}
	if (!(command = find_command(argv[1])))
		return unknown_command(argv[1]);
	if (command->run == cmd_help) {
		usage(stdout);
		return 0;
	}
	help_argv[0] = (char *)command->name;
	return command->run(2, help_argv);
}

/* Reads "--NAME VALUE" or "--NAME=VALUE" at argv[*i]; 1 when it matched,
 * 0 when it is another argument, -1 when the value is missing. */
static int global_option(int argc, char **argv, int *i, const char *name, const char **value)
{
	size_t len = strlen(name);
	const char *arg = argv[*i];

	if (strncmp(arg, name, len) != 0)
		return 0;
	if (arg[len] == '=') {
		*value = arg + len + 1;
		return 1;
	}
	if (arg[len] != '\0')
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*value = argv[++*i];
	return 1;
}

int main(int argc, char **argv)
{
	const char *server = getenv("LOADLAB_SERVER");
	const char *token = getenv("LOADLAB_TOKEN");
	const struct cli_command *command;
	int i, found, code;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
			printf("loadlab %s\n", LOADLAB_VERSION);
			return 0;
		}
		found = global_option(argc, argv, &i, "--server", &server);
		if (found == 0)
			found = global_option(argc, argv, &i, "--token", &token);
		if (found < 0) {
			fprintf(stderr, "loadlab: option '%s' needs a value (see loadlab --help)\n", argv[i]);
			return 2;
		}
		if (found == 0) {
			fprintf(stderr, "loadlab: unknown option '%s' (see loadlab --help)\n", argv[i]);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (!server || !*server)
		server = DEFAULT_SERVER;
	if (!(command = find_command(argv[i])))
		return unknown_command(argv[i]);
	if (rest_client_global_init("loadlab/" LOADLAB_VERSION) < 0) {
		fprintf(stderr, "loadlab: libcurl failed to start\n");
		return 2;
	}
	client_configure(server, token);
	code = command->run(argc - i, argv + i);
	rest_client_global_cleanup();
	return code;
}
