/*
 * job_report.h - a job's report fetched and printed, as `loadlab report`
 * prints it and `loadlab submit --wait` ends on it.
 */
#ifndef LOADLAB_CLI_JOB_REPORT_H
#define LOADLAB_CLI_JOB_REPORT_H

#include <stdbool.h>

/* GET /api/v1/jobs/{ID}/report?format=FORMAT ("json", "md" or "csv")
 * written to stdout as the server sends it; with TABLE the JSON form
 * rendered by report_table_print() instead (FORMAT is then ignored). 0, or
 * the error, with its message set. */
int job_report_print(long long id, const char *format, bool table);

#endif
