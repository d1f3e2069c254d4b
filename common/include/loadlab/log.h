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
 * A line is formatted without printf (the time stamp's date and time are
 * formatted once a second) and written whole: lines from different threads
 * never interleave, and in the stream they are in the order of their time
 * stamps. This is the only module of common/ that prints.
 *
 * By default every line is written (one fwrite and fflush) before
 * log_event() returns. A process that logs a lot (loadlabd, one line a
 * request) calls log_set_buffered(true): lines then wait in memory and are
 * written in batches, one fwrite per batch, by whichever comes first:
 *   - a WARN or ERROR line, written at once with every line before it;
 *   - 64 KiB of lines waiting (written by the thread that logs the last);
 *   - a flusher thread, about 20 ms after the first line of a batch;
 *   - log_flush(), log_set_stream(), log_set_buffered(false), exit().
 * So a process killed (kill -9, a crash) loses at most the DEBUG and INFO
 * lines of its last ~20-100 ms; a warning or error is never held back.
 * Windows has no buffered mode: each line is written as it comes.
 */
#ifndef LOADLAB_LOG_H
#define LOADLAB_LOG_H

#include <stdbool.h>
#include <stdio.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };
enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON };

/* Selects the output format (text by default). */
void log_set_format(enum log_format format);

/* Parses "text" or "json"; LL_EINVAL for anything else. */
int log_format_parse(const char *name, enum log_format *ret_format);

/* Events below LEVEL are dropped (LOG_INFO by default). */
void log_set_level(enum log_level level);

/* Redirects output (stderr by default); used by tests and the Windows
 * service. Lines waiting in the buffer are written to the old stream first. */
void log_set_stream(FILE *stream);

/* Turns buffering (above) on or off; off by default. Turning it on the
 * first time starts the flusher thread (all signals blocked in it) and
 * registers log_flush() with atexit(). LL_EIO when the thread cannot be
 * started (the log stays unbuffered); LL_EUNSUPPORTED on Windows. Turning
 * it off writes what is waiting. Thread-safe. */
int log_set_buffered(bool on);

/* Writes every line waiting in the buffer (nothing when unbuffered) before
 * returning. Thread-safe. */
void log_flush(void);

/* Writes one event (or queues it, when buffered). Fields are key, value
 * pairs of strings, ending with NULL; a NULL value is written as an empty
 * string. Fields past 16 KiB a line are left out. Thread-safe. */
void log_event(enum log_level level, const char *event, ...) __attribute__((sentinel));

#endif
