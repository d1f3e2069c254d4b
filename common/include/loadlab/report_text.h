/*
 * report_text.h - what the daemon's Markdown reports (server/report_format.c)
 * and the CLI's tables (cli/report_table.c) write alike from a report's
 * cells (schemas/report.schema.json).
 */
#ifndef LOADLAB_REPORT_TEXT_H
#define LOADLAB_REPORT_TEXT_H

#include "loadlab/buf.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

/* Appends a duration of US microseconds: "18.34 ms" from 10 ms up, else
 * "812.4 " followed by MICRO, the microsecond unit the output can show
 * ("µs" or "us"). A buffer past its limit keeps what fitted. */
void report_text_duration(struct buf *out, double us, const char *micro);

/* For a cell whose "status" is not the string "ok": appends "STATUS: REASON"
 * and returns true. A status that is missing or not a string is written as
 * NO_STATUS, such a reason as ""; the reason goes through ESCAPE(OUT, reason)
 * when ESCAPE is not NULL (Markdown cells), else as it is. False, nothing
 * written, for a cell that was measured. */
bool report_text_failed_cell(struct buf *out, const cJSON *cell, const char *no_status,
			     void (*escape)(struct buf *out, const char *text));

#endif
