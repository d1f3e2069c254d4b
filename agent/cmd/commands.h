/*
 * commands.h - the subcommands of loadlab-agent, one file each
 * (agent/cmd/cmd_NAME.c, and cli/cmd_pe.c compiled in for `pe`), named by
 * the table agent_commands[] (agent/cmd/commands.c) that agent/main.c
 * dispatches on; a new subcommand is one file here and one table entry.
 * With no subcommand the agent is a fleet member (cmd_member.c).
 *
 * argv[0] is the subcommand's name; the return value is the process exit
 * code (0 success, 1 a task that failed, 2 an
 * error after one line on stderr). Every command answers --help.
 */
#ifndef LOADLAB_AGENT_COMMANDS_H
#define LOADLAB_AGENT_COMMANDS_H

#include <cjson/cJSON.h>
#include <stdbool.h>

struct agent_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;   /* arguments after the name */
	const char *summary; /* what it does */
};

/* Every subcommand, in the order of the help text; ends with a NULL name. */
extern const struct agent_command agent_commands[];

/* The entry named NAME, or NULL. */
const struct agent_command *agent_command_find(const char *name);

/* Prints DOC formatted on stdout and deletes it (cmd_util.c); DOC NULL stands for out
 * of memory. 0, or 2 after one line on stderr ("loadlab-agent WHO: out of
 * memory") when DOC cannot be printed or stdout not flushed. */
int cmd_print_json(const char *who, cJSON *doc);

int cmd_run(int argc, char **argv);

/* Runs the normalized JOB on this machine, with no server (cmd_run.c):
 * in a temporary work folder "loadlab-WHO-...", with this machine's facts
 * and CELL (NULL: an empty one; the cell seeds the timer's shuffles, so
 * two cells give two orders), JOBS parallel compiles (< 1: the facts' cores) and
 * PROGRESS as pipeline.h's task has it. The folder is removed afterwards,
 * unless KEEP (then named on stderr, "loadlab-agent WHO: work folder
 * kept: ..."). *RET_RESULT is pipeline_run()'s result; the caller deletes
 * it. */
int cmd_run_here(const char *who, const cJSON *job, const cJSON *cell, int jobs, bool keep,
		 bool (*progress)(void *context, const char *phase, int percent), void *progress_context,
		 cJSON **ret_result);

/* DOC, formatted, into PATH (created or truncated; NULL: standard output). */
int cmd_write_json(const char *path, const cJSON *doc);
int cmd_calibrate(int argc, char **argv);
int cmd_facts(int argc, char **argv);
int cmd_time(int argc, char **argv);         /* agent/cmd/cmd_time.c: the load timer on any program */
int cmd_churn(int argc, char **argv);        /* also `churn --child`, the Linux analog's child */
int cmd_pe(int argc, char **argv);           /* cli/cmd_pe.c: the PE toolkit's front end */
int cmd_service(int argc, char **argv);      /* install|uninstall|run as a Windows service */
int cmd_update_trial(int argc, char **argv); /* an update's trial run (update/update.h) */
int cmd_release_key(int argc, char **argv);  /* the lab's release key pair (loadlab/release_sig.h) */
int cmd_release_sign(int argc, char **argv); /* FILE.sig for an agent build, or --check */

/* What the fleet member returns for --help: the caller, which knows the
 * table, prints agent_commands_help() and exits 0. */
#define CMD_HELP 3

/* The fleet member (no subcommand): argv[0] is the program's name and the
 * options follow; CMD_HELP for --help. */
int cmd_member(int argc, char **argv);

/* cmd_member() with a choice: CONSOLE_STOP false leaves the OS's stop
 * signals alone (a Windows service is stopped by the Service Control
 * Manager, and must not stop when a user logs off), so only
 * plat_request_stop() stops the agent. */
int cmd_member_start(int argc, char **argv, bool console_stop);

/* The help text of the agent as a whole, the table's commands last
 * (commands.c). */
void agent_commands_help(void);

#endif
