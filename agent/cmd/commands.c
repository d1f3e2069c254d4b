/* commands.c - the subcommands' table and the agent's help text, which
 * lists it (commands.h). */
#include "cmd/commands.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct agent_command agent_commands[] = {
	{"run", cmd_run, "JOB.json [--out RESULT.json] [--keep]",
	 "run a job here, without a server, and print the result"},
	{"facts", cmd_facts, "[--work-dir DIR]", "print the facts this agent reports"},
	{"time", cmd_time, "[--runs N] [--cold] [--json] -- PROGRAM", "time a program as the pipeline does"},
	{"calibrate", cmd_calibrate, "[--family pe|elf] [--delay-us X] [--runs N] [--rounds R] [--out FILE]",
	 "the known-effect self-test: recover an injected cost"},
	{"churn", cmd_churn, "[--processes N] [--dll-set S] [--wine] [--json]",
	 "time the creation and destruction of N processes"},
	{"service", cmd_service, "install|uninstall|run [OPTIONS]",
	 "run as a Windows service (loadlab-agent service --help)"},
	{"pe", cmd_pe, "dump|rebase|bind ...", "the PE image toolkit (loadlab-agent pe --help)"},
	{"update-trial", cmd_update_trial, "--server URL --data-dir DIR",
	 "what an update runs first: authenticate as this agent, say ready"},
	{"release-key", cmd_release_key, "new --out DIR | public KEY",
	 "the lab's release key pair, which signs agent builds"},
	{"release-sign", cmd_release_sign, "KEY FILE... | --check KEYS FILE...",
	 "sign agent builds (FILE.sig) or check their signatures"},
	{NULL, NULL, NULL, NULL},
};

void agent_commands_help(void)
{
	printf("usage: loadlab-agent --server URL [--enroll-token T | --enroll-token-file F]\n"
	       "                     [--data-dir DIR] [--name NAME] [--labels k=v,...] [--once]\n"
	       "                     [--min-free-bytes N] [--log-format text|json]\n"
	       "       loadlab-agent COMMAND [ARGS...]\n"
	       "\n"
	       "As a fleet member: enrolls with the enrollment token the first time and\n"
	       "keeps its own token in DATA_DIR/agent.json (mode 0600); reports its facts\n"
	       "and --labels; leases tasks (long poll), runs them, sends heartbeats and\n"
	       "progress, and posts each result, which is kept in DATA_DIR/spool until\n"
	       "the server has it. Retries an unreachable server with backoff (0.5 s\n"
	       "doubling to 30 s). Stops cleanly on SIGTERM or Ctrl-C.\n"
	       "\n"
	       "options:\n"
	       "  --server URL             loadlabd's URL (LOADLAB_SERVER)\n"
	       "  --enroll-token T         enrollment token (LOADLAB_ENROLL_TOKEN); only\n"
	       "                           needed before the first enrollment\n"
	       "  --enroll-token-file F    read the enrollment token from F\n"
	       "  --data-dir DIR           identity, spool and work folders\n"
	       "                           (LOADLAB_AGENT_DATA_DIR; default ./loadlab-agent)\n"
	       "  --name NAME              name to enroll with (default: the host name)\n"
	       "  --labels k=v,...         labels to enroll with\n"
	       "  --once                   take one task, report it, exit\n"
	       "  --min-free-bytes N       free bytes kept on the data folder's disk\n"
	       "                           (default 268435456: 256 MiB): before a task and\n"
	       "                           while it fetches its files, failed work folders\n"
	       "                           and then cached blobs it does not use give way,\n"
	       "                           least recently used first; else a task is left\n"
	       "                           for another agent, or one whose own files do\n"
	       "                           not fit fails (docs/agent.md, Disk)\n"
	       "  --log-format text|json   log lines on stderr (default text)\n"
	       "  --update-check-seconds N between checks for a new agent build (default\n"
	       "                           300; 0: never update; docs/agent.md, Updates;\n"
	       "                           under 20, idle lease polls wait N s);\n"
	       "                           only builds signed by a key of\n"
	       "                           DATA_DIR/release-keys.pub: none, no updates\n"
	       "  --update-confirm-seconds N  a new build must reach the server within N s\n"
	       "                           of its start, else the previous copy is put\n"
	       "                           back (default 120)\n"
	       "\n"
	       "exit: 0 the --once task succeeded, or stopped by a signal; 1 the --once task\n"
	       "failed, was refused, cancelled, or the agent stopped before finishing it;\n"
	       "2 usage, enrollment or token errors; 4 (a Windows service only) updated,\n"
	       "to be started again.\n"
	       "\n"
	       "commands:\n");
	for (const struct agent_command *c = agent_commands; c->name; c++)
		printf("  %-6s %-40s %s\n", c->name, c->usage, c->summary);
}

const struct agent_command *agent_command_find(const char *name)
{
	for (const struct agent_command *c = agent_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}
