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

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;   /* one line: arguments after the name */
	const char *summary; /* one line: what it does */
};

int cmd_submit(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_agents(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_pe(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);

/* series and schedules */
int cmd_series(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_alerts(int argc, char **argv);

#endif
