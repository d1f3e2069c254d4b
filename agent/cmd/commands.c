/* commands.c - the subcommands' table (commands.h). */
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
	{NULL, NULL, NULL, NULL},
};

const struct agent_command *agent_command_find(const char *name)
{
	for (const struct agent_command *c = agent_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

int cmd_print_json(const char *who, cJSON *doc)
{
	char *text = doc ? cJSON_Print(doc) : NULL;

	cJSON_Delete(doc);
	if (!text) {
		fprintf(stderr, "loadlab-agent %s: out of memory\n", who);
		return 2;
	}
	puts(text);
	free(text);
	return fflush(stdout) == 0 ? 0 : 2;
}
