#include "loadlab/log.h"

#include "loadlab/err.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#ifndef _WIN32
#include <pthread.h>
#include <signal.h>
#endif

/* A line's fields from the first that would end past this many bytes are
 * left out whole; the line still ends. */
#define LOG_LINE_MAX 16384
/* Room before a line's text for its head: {"ts":" and the time stamp. */
#define LOG_HEAD_ROOM 32
/* "2026-11-30T10:00:00.123Z" */
#define LOG_STAMP_LEN 24
#define LOG_JSON_HEAD "{\"ts\":\""

static enum log_format log_format = LOG_FORMAT_TEXT;
static enum log_level log_level = LOG_INFO;
static FILE *log_stream;

/* One line being formatted: its text from text + LOG_HEAD_ROOM, the head
 * filled in last, just before the head. */
struct log_line {
	char text[LOG_HEAD_ROOM + LOG_LINE_MAX + 3];
	size_t len; /* bytes after the head room */
	bool full;  /* a field was dropped: nothing more is added */
};

void log_set_format(enum log_format format)
{
	log_format = format;
}
void log_set_level(enum log_level level)
{
	log_level = level;
}

int log_format_parse(const char *name, enum log_format *ret_format)
{
	if (strcmp(name, "text") == 0)
		*ret_format = LOG_FORMAT_TEXT;
	else if (strcmp(name, "json") == 0)
		*ret_format = LOG_FORMAT_JSON;
	else
		return err_set(LL_EINVAL, "Log format must be text or json, not '%s'.", name);
	return 0;
}

static const char *level_name(enum log_level level)
{
	static const char *const names[] = {"debug", "info", "warn", "error"};
	return names[level];
}

/* Appends N bytes, or marks the line full when they do not fit. */
static void put(struct log_line *l, const char *s, size_t n)
{
	if (l->full || l->len + n > LOG_LINE_MAX) {
		l->full = true;
		return;
	}
	memcpy(l->text + LOG_HEAD_ROOM + l->len, s, n);
	l->len += n;
}

static void put_str(struct log_line *l, const char *s)
{
	put(l, s, strlen(s));
}

/* JSON string escaping (RFC 8259, section 7): the runs between characters
 * that need escaping are copied whole. */
static void put_json_string(struct log_line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;

	put(l, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c != '"' && c != '\\' && c >= 0x20)
			continue;
		put(l, run, (size_t)(s - run));
		run = s + 1;
		if (c == '"' || c == '\\')
			put(l, (char[]){'\\', (char)c}, 2);
		else
			put(l, (char[]){'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]}, 6);
	}
	put(l, run, (size_t)(s - run));
	put(l, "\"", 1);
}

/* Text values with spaces, quotes or control characters are quoted. */
static void put_text_value(struct log_line *l, const char *s)
{
	if (s[0] && !strpbrk(s, " \"=\t\r\n"))
		put_str(l, s);
	else
		put_json_string(l, s);
}

/* Everything of the line after the time stamp. */
static void format_line(struct log_line *l, enum log_level level, const char *event, va_list ap)
{
	const char *key, *value;

	l->len = 0;
	l->full = false;
	if (log_format == LOG_FORMAT_JSON) {
		put_str(l, "\",\"level\":\"");
		put_str(l, level_name(level));
		put_str(l, "\",\"event\":");
		put_json_string(l, event);
	} else {
		put(l, " ", 1);
		put_str(l, level_name(level));
		put(l, " ", 1);
		put_str(l, event);
	}
	while ((key = va_arg(ap, const char *)) && !l->full) {
		size_t before = l->len;
		value = va_arg(ap, const char *);
		if (!value)
			value = "";
		if (log_format == LOG_FORMAT_JSON) {
			put(l, ",", 1);
			put_json_string(l, key);
			put(l, ":", 1);
			put_json_string(l, value);
		} else {
			put(l, " ", 1);
			put_str(l, key);
			put(l, "=", 1);
			put_text_value(l, value);
		}
		if (l->full)
			l->len = before; /* the field is left out whole */
	}
	/* The end always fits: LOG_LINE_MAX leaves it room. */
	if (log_format == LOG_FORMAT_JSON)
		l->text[LOG_HEAD_ROOM + l->len++] = '}';
	l->text[LOG_HEAD_ROOM + l->len++] = '\n';
}

static void put_digits(char *out, unsigned value, int n)
{
	while (n-- > 0) {
		out[n] = (char)('0' + value % 10);
		value /= 10;
	}
}

/* "YYYY-MM-DDTHH:MM:SS." of SECONDS (UTC) into OUT (20 bytes). */
static void format_second(time_t seconds, char *out)
{
	struct tm tm;

	gmtime_r(&seconds, &tm);
	put_digits(out, (unsigned)(tm.tm_year + 1900) % 10000, 4);
	out[4] = '-';
	put_digits(out + 5, (unsigned)tm.tm_mon + 1, 2);
	out[7] = '-';
	put_digits(out + 8, (unsigned)tm.tm_mday, 2);
	out[10] = 'T';
	put_digits(out + 11, (unsigned)tm.tm_hour, 2);
	out[13] = ':';
	put_digits(out + 14, (unsigned)tm.tm_min, 2);
	out[16] = ':';
	put_digits(out + 17, (unsigned)tm.tm_sec, 2);
	out[19] = '.';
}

/* Puts the head (JSON's opening and the time stamp, SECOND being the
 * stamp's first 20 bytes) before L's text; returns where the line starts. */
static char *put_head(struct log_line *l, const char *second, int ms)
{
	char *stamp = l->text + LOG_HEAD_ROOM - LOG_STAMP_LEN;

	memcpy(stamp, second, 20);
	put_digits(stamp + 20, (unsigned)ms, 3);
	stamp[23] = 'Z';
	if (log_format != LOG_FORMAT_JSON)
		return stamp;
	memcpy(stamp - strlen(LOG_JSON_HEAD), LOG_JSON_HEAD, strlen(LOG_JSON_HEAD));
	return stamp - strlen(LOG_JSON_HEAD);
}

#ifdef _WIN32

/* The Windows agent logs little: every line is written as it comes (the C
 * runtime's stream lock keeps lines whole), with no cached time stamp and
 * no buffering. */

void log_set_stream(FILE *stream)
{
	log_stream = stream;
}

int log_set_buffered(bool on)
{
	return on ? err_set(LL_EUNSUPPORTED, "Buffered logging is not built on Windows.") : 0;
}

void log_flush(void)
{
}

/* Writes LINE at once, with its head. */
static void emit(enum log_level level, struct log_line *line)
{
	struct timeval tv;
	char second[20];
	char *start;

	(void)level;
	gettimeofday(&tv, NULL);
	format_second(tv.tv_sec, second);
	start = put_head(line, second, (int)(tv.tv_usec / 1000));
	fwrite(start, 1, (size_t)(line->text + LOG_HEAD_ROOM + line->len - start),
	       log_stream ? log_stream : stderr);
	fflush(log_stream ? log_stream : stderr);
}

#else

/* Buffered lines wait at most this long for the flusher thread. */
#define LOG_FLUSH_DELAY_NS (20 * 1000 * 1000L)
/* A writer that finds this many bytes waiting writes them itself. */
#define LOG_FLUSH_BYTES (64 * 1024)

/*
 * Lines are formatted by their thread without a lock, then appended to
 * `pending` under pending_lock (which also orders their time stamps). A
 * flush swaps `pending` for the empty `spare` under pending_lock and
 * writes `spare` with one fwrite under write_lock, so batches reach the
 * stream in the order their lines were appended.
 */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pending_cond = PTHREAD_COND_INITIALIZER;
static char *pending;
static size_t pending_len, pending_alloc;
static bool buffered, flusher_started;
static time_t cached_seconds = -1;
static char cached_second[20];

static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static char *spare;
static size_t spare_alloc;

void log_flush(void)
{
	char *swap;
	size_t len, alloc;

	pthread_mutex_lock(&write_lock);
	pthread_mutex_lock(&pending_lock);
	swap = pending;
	len = pending_len;
	alloc = pending_alloc;
	pending = spare;
	pending_alloc = spare_alloc;
	pending_len = 0;
	pthread_mutex_unlock(&pending_lock);
	spare = swap;
	spare_alloc = alloc;
	if (len) {
		fwrite(spare, 1, len, log_stream ? log_stream : stderr);
		fflush(log_stream ? log_stream : stderr);
	}
	pthread_mutex_unlock(&write_lock);
}

void log_set_stream(FILE *stream)
{
	log_flush();
	pthread_mutex_lock(&write_lock);
	log_stream = stream;
	pthread_mutex_unlock(&write_lock);
}

static void *flusher_main(void *arg)
{
	const struct timespec delay = {0, LOG_FLUSH_DELAY_NS};

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&pending_lock);
		while (pending_len == 0)
			pthread_cond_wait(&pending_cond, &pending_lock);
		pthread_mutex_unlock(&pending_lock);
		nanosleep(&delay, NULL);
		log_flush();
	}
	return NULL;
}

static void flush_at_exit(void)
{
	log_flush();
}

int log_set_buffered(bool on)
{
	sigset_t all, old;
	pthread_t thread;
	int e = 0;

	pthread_mutex_lock(&pending_lock);
	if (on && !flusher_started) {
		/* The flusher takes no signal: loadlabd's main thread sigwait()s
		 * for them, and a thread started before its mask was set would
		 * otherwise die of a SIGTERM meant for it. */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		e = pthread_create(&thread, NULL, flusher_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (e == 0) {
			pthread_detach(thread);
			flusher_started = true;
			atexit(flush_at_exit);
		}
	}
	if (e == 0)
		buffered = on;
	pthread_mutex_unlock(&pending_lock);
	if (!on)
		log_flush();
	return e ? err_set(LL_EIO, "Cannot start the log's flusher thread.") : 0;
}

/* Adds LINE, with its head, to the pending lines, and flushes them when
 * the log is not buffered, LEVEL is a warning or more, or they are many. */
static void emit(enum log_level level, struct log_line *line)
{
	struct timeval tv;
	char *start, *grown;
	size_t len, alloc;
	bool flush_now;

	pthread_mutex_lock(&pending_lock);
	gettimeofday(&tv, NULL);
	if (tv.tv_sec != cached_seconds) {
		format_second(tv.tv_sec, cached_second);
		cached_seconds = tv.tv_sec;
	}
	start = put_head(line, cached_second, (int)(tv.tv_usec / 1000));
	len = (size_t)(line->text + LOG_HEAD_ROOM + line->len - start);
	if (pending_len + len > pending_alloc) {
		alloc = pending_alloc ? pending_alloc : 2 * LOG_FLUSH_BYTES;
		while (alloc < pending_len + len)
			alloc *= 2;
		if ((grown = realloc(pending, alloc))) {
			pending = grown;
			pending_alloc = alloc;
		}
	}
	if (pending_len + len <= pending_alloc) { /* else out of memory: the line is lost */
		memcpy(pending + pending_len, start, len);
		pending_len += len;
	}
	flush_now = !buffered || level >= LOG_WARN || pending_len >= LOG_FLUSH_BYTES;
	if (!flush_now && pending_len == len)
		pthread_cond_signal(&pending_cond);
	pthread_mutex_unlock(&pending_lock);
	if (flush_now)
		log_flush();
}

#endif

void log_event(enum log_level level, const char *event, ...)
{
	struct log_line line;
	va_list ap;

	if (level < log_level)
		return;
	va_start(ap, event);
	format_line(&line, level, event, ap);
	va_end(ap);
	emit(level, &line);
}
