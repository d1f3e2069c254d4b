/* loadlab report JOB [--format table|md|csv|json]:
 * GET /api/v1/jobs/{id}/report?format=...; md, csv and json printed as the
 * server sends them, table rendered here from the JSON form. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "report_table.h"

#include "loadlab/buf.h"
#include "loadlab/json.h"

#include <string.h>

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

static const char usage_text[] =
	"usage: loadlab report JOB [--format table|md|csv|json]\n\n"
	"Prints job JOB's tables: per variant and cell the fastest time, the median\n"
	"with its CI and the change against default (and the cold-start and churn\n"
	"tables when they ran).\n\n"
	"  --format F  table (default: aligned text for a terminal), md, csv or json\n";

int cmd_report(int argc, char **argv)
{
	static const struct option options[] = {
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct rest_answer report = {0};
	const char *format = "json";
	bool table = true;
	char path[96];
	long long id;
	int opt, rc;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":f:h", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if ((rc = args_format(optarg, &format)) < 0)
				return client_fail("report", rc);
			table = strcmp(optarg, "table") == 0;
			if (table)
				format = "json";
			break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: return args_option_error("report", argv, opt);
		}
	}
	if (argc - optind != 1)
		return args_usage_error("report", "expects one JOB id");
	rc = args_job_id(argv[optind], &id);
	if (rc < 0)
		return client_fail("report", rc);
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/report?format=%s", id, format);

	rc = client_fetch("GET", path, NULL, CLIENT_REPORT_LIMIT, &report);
	if (rc == 0 && table && !report.body) /* json_parse_object() says what is wrong */
		rc = json_parse_object(buf_str(&report.text), report.text.len, REST_CLIENT_MAX_DEPTH,
				       &report.body);
	if (rc == 0 && table)
		rc = report_table_print(report.body, stdout);
	else if (rc == 0)
		client_print_body(&report.text);
	rest_answer_release(&report);
	return rc < 0 ? client_fail("report", rc) : 0;
}
