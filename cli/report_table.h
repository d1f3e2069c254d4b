/*
 * report_table.h - a job report (GET /api/v1/jobs/{id}/report, JSON) as
 * plain-text tables for a terminal: `loadlab report --format table`.
 */
#ifndef LOADLAB_CLI_REPORT_TABLE_H
#define LOADLAB_CLI_REPORT_TABLE_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* Writes REPORT's warm, cold and churn tables and findings to OUT.
 * LL_EFORMAT when REPORT is not shaped as schemas/report.json. */
int report_table_print(const cJSON *report, FILE *out);

#endif
