/*
 * job_file_scan.h - the structure of a JSON text checked bracket by
 * bracket, so that a job file's syntax mistake is named where it could
 * first have been known: cJSON says only where it stopped, which for a
 * missing '}' is the end of the file, lines below the mistake.
 *
 * The scan knows strings, scalars (numbers and literals, checked no
 * further: cJSON does that), ':', ',' and the brackets, with the line each
 * bracket opened on and the key it is the value of. It also reads the
 * indentation: a line that starts a member at or left of the indentation
 * of the line that opened its enclosing object or array (other than the
 * outermost) is where that bracket was most likely meant to close, and is
 * named when the structure turns out wrong later (at a stray ']' or '}',
 * or at the end of the file).
 */
#ifndef LOADLAB_CLI_JOB_FILE_SCAN_H
#define LOADLAB_CLI_JOB_FILE_SCAN_H

#include <stddef.h>

/* Longest message job_file_scan() writes, with its NUL. */
#define JOB_FILE_SCAN_MESSAGE_SIZE 256

/* Scans LEN bytes of TEXT (UTF-8, no NUL byte). 1 when the structure is
 * wrong: MESSAGE (JOB_FILE_SCAN_MESSAGE_SIZE bytes) says what was expected,
 * one of
 *   "'}' expected to close 'generator' opened at line 3"
 *   "',' or '}' expected after the value of 'measure'"
 *   "':' expected after the key 'name'"
 *   "a value expected after 'dlls'"
 *   "']' expected to close 'variants' opened at line 5"
 *   "the file ends early: '}' expected to close the job's object opened at line 1"
 *   "the file ends inside a string that starts at line 3"
 * and *RET_OFFSET is where: the token at which it could first have been
 * known, or LEN for the end of the file. 0 when the brackets are right
 * (the text may still be wrong in ways the scan does not look at: a bad
 * number, more after the value); MESSAGE and *RET_OFFSET untouched then. */
int job_file_scan(const char *text, size_t len, char *message, size_t *ret_offset);

#endif
