/*
 * compare_table.h - a comparison (GET /api/v1/compare, JSON) as a
 * plain-text table for a terminal: `loadlab compare`'s default format,
 * saying what the Markdown says (verdict, counts, generators, metric,
 * intervals; per row the sides' figures in one unit, the ratio and its
 * interval, the change, the verdict).
 */
#ifndef LOADLAB_CLI_COMPARE_TABLE_H
#define LOADLAB_CLI_COMPARE_TABLE_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* Writes COMPARISON to OUT. LL_EFORMAT when it is not shaped as
 * schemas/compare.json (no "rows" or "counts"). */
int compare_table_print(const cJSON *comparison, FILE *out);

#endif
