#include "args.h"
#include "client.h"

#include "loadlab/err.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int args_integer(const char *text, long long min, long long max, const char *what, long long *ret_value)
{
	char *end = NULL;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (!*text || *end || errno == EINVAL)
		return err_set(LL_EINVAL, "%s '%s' is not a whole number.", what, text);
	if (errno == ERANGE || v < min || v > max)
		return err_set(LL_ERANGE, "%s must be between %lld and %lld, not '%s'.", what, min, max,
			       text);
	*ret_value = v;
	return 0;
}

int args_job_id(const char *text, long long *ret_id)
{
	return args_integer(text, 1, 9007199254740992LL, "The job id", ret_id);
}

int args_format(const char *text, const char **ret_query_format)
{
	static const char *const formats[] = {"md", "csv", "json"};

	if (strcmp(text, "table") == 0 || strcmp(text, "markdown") == 0) {
		*ret_query_format = "md"; /* a table: the caller knows it asked for one */
		return 0;
	}
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(text, formats[i]) == 0) {
			*ret_query_format = formats[i];
			return 0;
		}
	return err_set(LL_EINVAL, "--format must be table, md (markdown), csv or json, not '%s'.", text);
}

int args_option_error(const char *command, char **argv, int answer)
{
	const char *option = optind > 0 ? argv[optind - 1] : "?";

	if (answer == ':')
		return args_usage_error(command, "option '%s' needs a value", option);
	if (optopt)
		return args_usage_error(command, "unknown option '-%c'", optopt);
	return args_usage_error(command, "unknown option '%s'", option);
}

int args_usage_error(const char *command, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "loadlab %s: ", command);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see loadlab %s --help)\n", command);
	return 2;
}

int args_parse(int argc, char **argv, const char *command, const char *usage, const struct option *options,
	       args_option_fn *on_option, void *context)
{
	struct option all[ARGS_OPTIONS_MAX + 2] = {{0}};
	/* ':' first: a missing value is told apart from an unknown option. */
	char short_options[2 * ARGS_OPTIONS_MAX + 3] = ":";
	size_t n = 0, k = 1;
	int opt, rc;

	for (; options[n].name && n < ARGS_OPTIONS_MAX; n++) {
		all[n] = options[n];
		short_options[k++] = (char)options[n].val;
		if (options[n].has_arg == required_argument)
			short_options[k++] = ':';
	}
	all[n] = (struct option){"help", no_argument, NULL, 'h'};
	short_options[k++] = 'h';
	short_options[k] = '\0';
	opterr = 0;
	while ((opt = getopt_long(argc, argv, short_options, all, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (opt == '?' || opt == ':' || !on_option)
			return args_option_error(command, argv, opt);
		if ((rc = on_option(context, opt, optarg)) < 0)
			return client_fail(command, rc);
	}
	return -1;
}

int args_help_only(int argc, char **argv, const char *command, const char *usage)
{
	static const struct option none[] = {{NULL, 0, NULL, 0}};

	return args_parse(argc, argv, command, usage, none, NULL, NULL);
}

int args_job_only(int argc, char **argv, const char *command, const char *usage, long long *ret_id)
{
	int code = args_help_only(argc, argv, command, usage), rc;

	if (code >= 0)
		return code;
	if (argc - optind != 1)
		return args_usage_error(command, "expects one JOB id");
	rc = args_job_id(argv[optind], ret_id);
	return rc < 0 ? client_fail(command, rc) : -1;
}

int args_set_flag(void *context, int option, const char *value)
{
	(void)option;
	(void)value;
	*(bool *)context = true;
	return 0;
}
