/* loadlab report JOB [--format table|md|csv|json]:
 * GET /api/v1/jobs/{id}/report?format=...; md, csv and json printed as the
 * server sends them, table rendered here from the JSON form. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "job_report.h"

#include <string.h>

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

static const char usage_text[] =
	"usage: loadlab report JOB [--format table|md|csv|json]\n\n"
	"Prints job JOB's tables: per variant and cell the fastest time, the median\n"
	"with its CI and the change against default (and the cold-start and churn\n"
	"tables when they ran; churn against none), each table in one unit (ms from\n"
	"10 ms, else us), \"!\" where the runner cannot show a figure (the reason\n"
	"under the table), then the findings.\n\n"
	"  --format F  table (default: aligned text for a terminal), md (markdown),\n"
	"              csv or json\n";

struct report_options {
	const char *format;
	bool table;
};

/* --format table: the JSON form, printed as a table here. */
static int report_option(void *context, int option, const char *value)
{
	struct report_options *o = context;
	int rc;

	if (option != 'f')
		return 0;
	if ((rc = args_format(value, &o->format)) < 0)
		return rc;
	o->table = strcmp(value, "table") == 0;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option options[] = {
		{"format", required_argument, NULL, 'f'},
		{NULL, 0, NULL, 0},
	};
	struct report_options o = {.format = "json", .table = true};
	long long id;
	int rc = args_parse(argc, argv, "report", usage_text, options, report_option, &o);

	if (rc >= 0)
		return rc;
	if (argc - optind != 1)
		return args_usage_error("report", "expects one JOB id");
	rc = args_job_id(argv[optind], &id);
	if (rc < 0)
		return client_fail("report", rc);
	rc = job_report_print(id, o.format, o.table);
	return rc < 0 ? client_fail("report", rc) : 0;
}
