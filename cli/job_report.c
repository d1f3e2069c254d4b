/* job_report.c - a job's report fetched and printed (job_report.h). */
#include "job_report.h"

#include "client.h"
#include "report_table.h"

#include "loadlab/buf.h"
#include "loadlab/json.h"

#include <stdio.h>

int job_report_print(long long id, const char *format, bool table)
{
	struct rest_answer report = {0};
	char path[96];
	int rc;

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/report?format=%s", id, table ? "json" : format);
	rc = client_fetch("GET", path, NULL, CLIENT_REPORT_LIMIT, &report);
	if (rc == 0 && table && !report.body) /* json_parse_object() says what is wrong */
		rc = json_parse_object(buf_str(&report.text), report.text.len, REST_CLIENT_MAX_DEPTH,
				       &report.body);
	if (rc == 0 && table)
		rc = report_table_print(report.body, stdout);
	else if (rc == 0)
		client_print_body(&report.text);
	rest_answer_release(&report);
	return rc;
}
