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
	struct client c = {0};
	struct buf report;
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

	buf_init(&report, CLIENT_REPORT_LIMIT);
	rc = client_open(&c);
	if (rc == 0)
		rc = client_request(&c, "GET", path, NULL, &report, NULL);
	if (rc == 0 && table) {
		cJSON *root = NULL;
		rc = json_parse_object(buf_str(&report), report.len, 64, &root);
		if (rc == 0)
			rc = report_table_print(root, stdout);
		cJSON_Delete(root);
	} else if (rc == 0) {
		fwrite(buf_str(&report), 1, report.len, stdout);
		if (report.len && report.data[report.len - 1] != '\n')
			fputc('\n', stdout);
	}
	buf_release(&report);
	client_close(&c);
	return rc < 0 ? client_fail("report", rc) : 0;
}
