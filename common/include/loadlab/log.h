/*
 * log.h - one line per event, as text or as JSON, on stderr.
 *
 * An event has a level, a name ("request", "task_state") and key/value
 * fields given as pairs of strings ending with NULL:
 *
 *	log_event(LOG_INFO, "request", "method", "GET", "path", "/healthz",
 *	          "status", "200", NULL);
 *
 * Text:  2026-11-30T10:00:00.123Z info request method=GET path=/healthz status=200
 * JSON:  {"ts":"2026-11-30T10:00:00.123Z","level":"info","event":"request",
 *         "method":"GET","path":"/healthz","status":"200"}
 *
 * Lines are written with one fwrite each, so lines from different threads
 * do not interleave. This is the only module of common/ that prints.
 */
#ifndef LOADLAB_LOG_H
#define LOADLAB_LOG_H

#include <stdio.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };
enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON };

/* Selects the output format (text by default). */
void log_set_format(enum log_format format);

/* Parses "text" or "json"; LL_EINVAL for anything else. */
int log_format_parse(const char *name, enum log_format *ret_format);

/* Events below LEVEL are dropped (LOG_INFO by default). */
void log_set_level(enum log_level level);

/* Redirects output (stderr by default); used by tests. */
void log_set_stream(FILE *stream);

/* Writes one event. Fields are key, value pairs of strings, ending with
 * NULL; a NULL value is written as an empty string. */
void log_event(enum log_level level, const char *event, ...) __attribute__((sentinel));

#endif
