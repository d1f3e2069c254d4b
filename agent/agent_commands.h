/*
 * agent_commands.h - the subcommands of loadlab-agent, one file each
 * (agent/cmd_NAME.c, and cli/cmd_pe.c compiled in for `pe`), named by the
 * table in agent/main.c. argv[0] is the subcommand's name; the return
 * value is the process exit code (0 success, 1 a task that failed, 2 an
 * error after one line on stderr). Every command answers --help.
 */
#ifndef LOADLAB_AGENT_COMMANDS_H
#define LOADLAB_AGENT_COMMANDS_H

struct agent_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;   /* arguments after the name */
	const char *summary; /* what it does */
};

int cmd_run(int argc, char **argv);
int cmd_facts(int argc, char **argv);
int cmd_time(int argc, char **argv); /* agent/cmd_time.c: the load timer on any program */
int cmd_churn(int argc, char **argv); /* also `churn --child`, the Linux analog's child */
int cmd_pe(int argc, char **argv); /* cli/cmd_pe.c: the PE toolkit's front end */

#endif
