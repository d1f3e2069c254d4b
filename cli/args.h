/*
 * args.h - argument checks shared by the CLI's commands.
 *
 * The commands parse their options with getopt_long() (opterr = 0, an
 * optstring starting with ':') and report mistakes through
 * args_option_error() or args_usage_error(), which print one line on
 * stderr and return 2, the exit code for errors.
 */
#ifndef LOADLAB_CLI_ARGS_H
#define LOADLAB_CLI_ARGS_H

/* A decimal integer within [MIN, MAX], the whole of TEXT. LL_EINVAL or
 * LL_ERANGE with a message naming WHAT; *RET_VALUE untouched then. */
int args_integer(const char *text, long long min, long long max, const char *what, long long *ret_value);

/* A job id (1 .. 2^53). */
int args_job_id(const char *text, long long *ret_id);

/* A --format value of report and compare: "table" (the default, which the
 * server renders as Markdown), "md", "csv" or "json". Stores the value to
 * send as ?format= (borrowed, static). LL_EINVAL for anything else. */
int args_format(const char *text, const char **ret_query_format);

/* For getopt_long()'s '?' (unknown option) and ':' (missing argument)
 * answers: prints the offending option of ARGV and returns 2. */
int args_option_error(const char *command, char **argv, int answer);

/* Prints "loadlab COMMAND: MESSAGE (see loadlab COMMAND --help)" and
 * returns 2. */
int args_usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct option;

/* What a command does with one of its options: OPTION is the option's val
 * in the getopt_long() table, VALUE its argument (NULL for a flag).
 * Returns 0, or a negative LL_E* code to stop with that error. */
typedef int args_option_fn(void *context, int option, const char *value);

/* At most this many options per command, --help not counted. */
#define ARGS_OPTIONS_MAX 8

/* The option loop of COMMAND. OPTIONS is its getopt_long() table (at most
 * ARGS_OPTIONS_MAX entries, ended by an all-zero one), without --help,
 * which every command has; the short options are the entries' vals ('h'
 * is --help's). --help prints USAGE; every other option goes to ON_OPTION
 * (NULL when there is none but --help). Returns -1 to go on, with optind
 * at the first operand; otherwise the exit code to return: 0 after --help,
 * 2 after a bad option or an error of ON_OPTION (printed by
 * client_fail()). */
int args_parse(int argc, char **argv, const char *command, const char *usage, const struct option *options,
	       args_option_fn *on_option, void *context);

/* An option callback for a command whose one option (besides --help) is a
 * flag: sets the bool CONTEXT points to. */
int args_set_flag(void *context, int option, const char *value);

/* Option parsing for a command whose only option is --help. Returns -1 to
 * go on, with optind at the first operand; otherwise the exit code to
 * return: 0 after printing USAGE for --help, 2 after a bad option. */
int args_help_only(int argc, char **argv, const char *command, const char *usage);

/* Option parsing for a command whose only option is --help and whose one
 * operand is a job id. Returns -1 to go on, with the id in *RET_ID;
 * otherwise the exit code to return: 0 after printing USAGE for --help, 2
 * after a bad option, a wrong operand count or an invalid id. */
int args_job_only(int argc, char **argv, const char *command, const char *usage, long long *ret_id);

#endif
