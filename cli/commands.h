/*
 * commands.h - the subcommands of the `loadlab` CLI.
 *
 * One file per subcommand (cli/cmd_NAME.c), each exporting
 * `int cmd_NAME(int argc, char **argv)` where argv[0] is the subcommand's
 * own name. The table in cli/main.c names them all. A command returns the
 * process exit code: 0 success, 1 a negative verdict (compare found a
 * regression, submit --wait saw the job fail or be cancelled), 2 an error,
 * after printing one clear line on stderr. Every command answers --help.
 * The commands that talk to loadlabd use client.h; main() has configured
 * the server URL and token before they run.
 */
#ifndef LOADLAB_CLI_COMMANDS_H
#define LOADLAB_CLI_COMMANDS_H

/* A command's entry point, cli/cmd_NAME.c. */
typedef int cli_command_fn(int argc, char **argv);

struct cli_command {
	const char *name;
	cli_command_fn *run;
	const char *usage;   /* one line: arguments after the name */
	const char *summary; /* one line: what it does */
};

/* jobs, agents, reports; pe is cli/cmd_pe.c, the agent's too */
cli_command_fn cmd_submit, cmd_status, cmd_jobs, cmd_cancel, cmd_agents, cmd_report, cmd_compare, cmd_pe,
	cmd_calibrate;

/* series and schedules */
cli_command_fn cmd_series, cmd_schedule, cmd_alerts, cmd_bisect;

#endif
