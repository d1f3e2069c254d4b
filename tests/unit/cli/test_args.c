/* The CLI's argument checks (cli/args.h): integers within their range and
 * whole, job ids, --format values, and the option loop of a command whose
 * one operand is a job id (exit codes 0 after --help, 2 after a mistake,
 * -1 to go on). */
#include "args.h"
#include "check.h"

#include "loadlab/err.h"

#include <getopt.h>
#include <stdio.h>

/* args_job_only() on ARGV (ARGC words), getopt reset first. */
static int job_only(int argc, char **argv, long long *ret_id)
{
	optind = 0;
	return args_job_only(argc, argv, "report", "usage: loadlab report JOB_ID\n", ret_id);
}

int main(void)
{
	long long value = -1, id = -1;
	const char *format = NULL;

	CHECK_EQ_INT(args_integer("42", 1, 100, "--runs", &value), 0);
	CHECK_EQ_INT(value, 42);
	value = -1;
	CHECK_EQ_INT(args_integer("0", 1, 100, "--runs", &value), LL_ERANGE);
	CHECK_EQ_INT(args_integer("101", 1, 100, "--runs", &value), LL_ERANGE);
	CHECK_EQ_INT(args_integer("4x", 1, 100, "--runs", &value), LL_EINVAL);
	CHECK_EQ_INT(args_integer("", 1, 100, "--runs", &value), LL_EINVAL);
	CHECK_EQ_INT(value, -1); /* untouched on failure */
	CHECK(strstr(err_message(LL_EINVAL), "--runs") != NULL);

	CHECK_EQ_INT(args_job_id("9007199254740992", &id), 0);
	CHECK_EQ_INT(id, 9007199254740992LL);
	CHECK(args_job_id("9007199254740993", &id) < 0);
	CHECK(args_job_id("0", &id) < 0);

	CHECK_EQ_INT(args_format("table", &format), 0);
	CHECK_EQ_STR(format, "md");
	CHECK_EQ_INT(args_format("csv", &format), 0);
	CHECK_EQ_STR(format, "csv");
	CHECK_EQ_INT(args_format("xml", &format), LL_EINVAL);
	CHECK_EQ_STR(format, "csv");

	id = -1;
	CHECK_EQ_INT(job_only(2, (char *[]){"report", "17", NULL}, &id), -1);
	CHECK_EQ_INT(id, 17);
	CHECK_EQ_INT(job_only(2, (char *[]){"report", "--help", NULL}, &id), 0);
	CHECK_EQ_INT(job_only(1, (char *[]){"report", NULL}, &id), 2);
	CHECK_EQ_INT(job_only(3, (char *[]){"report", "1", "2", NULL}, &id), 2);
	CHECK_EQ_INT(job_only(2, (char *[]){"report", "abc", NULL}, &id), 2);
	CHECK_EQ_INT(job_only(3, (char *[]){"report", "--bogus", "1", NULL}, &id), 2);
	CHECK_EQ_INT(args_usage_error("report", "%s", "a mistake"), 2);
	return check_finish();
}
