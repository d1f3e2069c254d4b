/*
 * job_file.h - a job file as the user typed it: read, and parsed as JSON
 * with its mistakes placed by line and column.
 */
#ifndef LOADLAB_CLI_JOB_FILE_H
#define LOADLAB_CLI_JOB_FILE_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Parses LEN bytes of TEXT, the contents of the file NAME ("-": stdin),
 * as json_parse_object() does (strict JSON, an object at the top). On
 * failure the message names the file and, where the mistake has a place,
 * its line and column, both from 1, the column in characters:
 * "job.json:3:15: not valid JSON, at '"variants": []'.", a mistake in
 * the brackets where it could first have been known (job_file_scan.h):
 * "job.json:5:3: '}' expected to close 'generator' opened at line 4, at
 * '"variants": ["de'.",
 * "job.json: the file ends early: '}' expected to close the job's object
 * opened at line 1.", or "job.json: the job must be a JSON object, not an
 * array.". Same codes as
 * json_parse_object(); *RET_ROOT (the caller deletes it) untouched on
 * failure. */
int job_file_parse(const char *name, const char *text, size_t len, cJSON **ret_root);

/* The line and column, from 1, of byte OFFSET of TEXT (LEN bytes): lines
 * end at '\n', columns count UTF-8 characters. */
void job_file_position(const char *text, size_t len, size_t offset, size_t *ret_line, size_t *ret_column);

#endif
