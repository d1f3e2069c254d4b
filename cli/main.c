/* loadlab: the command-line client of loadlabd, and the PE toolkit. */
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const struct cli_command commands[] = {
	{"pe", cmd_pe, "dump|rebase|bind ...", "read, rebase and bind PE images"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: loadlab [--server URL] [--token T] COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %-28s %s\n", commands[i].name, commands[i].usage,
			commands[i].summary);
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "loadlab: unknown command '%s' (see loadlab --help)\n", argv[1]);
	return 2;
}
