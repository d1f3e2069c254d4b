/*
 * report_table.h - a job report (GET /api/v1/jobs/{id}/report, JSON) as
 * plain-text tables for a terminal: `loadlab report --format table`.
 */
#ifndef LOADLAB_CLI_REPORT_TABLE_H
#define LOADLAB_CLI_REPORT_TABLE_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* Writes to OUT the tables REPORT's job measured (no warm table when its
 * "measured" is false), each in the unit the report names for it, with
 * "!" where a figure carries notes and the notes under the table, then
 * the findings. LL_EFORMAT when REPORT is not shaped as
 * schemas/report.json. */
int report_table_print(const cJSON *report, FILE *out);

#endif
