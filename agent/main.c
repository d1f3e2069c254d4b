/*
 * loadlab-agent: a lab machine's member of the loadlabd fleet, and the
 * same pipeline without a server (docs/agent.md).
 *
 * With no subcommand it runs as a fleet member (cmd/cmd_member.c); the
 * subcommands of cmd/commands.c's table run on their own.
 */
#include "cmd/commands.h"

#include <stdio.h>

int main(int argc, char **argv)
{
	setvbuf(stderr, NULL, _IONBF, 0);
	if (argc >= 2 && argv[1][0] != '-') {
		const struct agent_command *c = agent_command_find(argv[1]);
		if (c)
			return c->run(argc - 1, argv + 1);
		fprintf(stderr, "loadlab-agent: unknown command '%s' (see loadlab-agent --help)\n", argv[1]);
		return 2;
	}
	if (argc < 2) {
		agent_commands_help();
		return 2;
	}
	int rc = cmd_member(argc, argv);
	if (rc == CMD_HELP) {
		agent_commands_help();
		return 0;
	}
	return rc;
}
