#include "loadlab/log.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"

#include <stdarg.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static enum log_format log_format = LOG_FORMAT_TEXT;
static enum log_level log_level = LOG_INFO;
static FILE *log_stream;

void log_set_format(enum log_format format)
{
	log_format = format;
}
void log_set_level(enum log_level level)
{
	log_level = level;
}
void log_set_stream(FILE *stream)
{
	log_stream = stream;
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

/* JSON string escaping (RFC 8259, section 7). */
static void append_json_string(struct buf *b, const char *s)
{
	buf_append(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			buf_printf(b, "\\%c", c);
		else if (c < 0x20)
			buf_printf(b, "\\u%04x", c);
		else
			buf_append(b, s, 1);
	}
	buf_append(b, "\"", 1);
}

/* Text values with spaces, quotes or control characters are quoted. */
static void append_text_value(struct buf *b, const char *s)
{
	if (s[0] && !strpbrk(s, " \"=\t\r\n")) {
		buf_append_str(b, s);
		return;
	}
	append_json_string(b, s);
}

void log_event(enum log_level level, const char *event, ...)
{
	char stamp[64];
	struct timeval tv;
	time_t seconds;
	struct tm tm;
	struct buf line;
	const char *key, *value;
	va_list ap;

	if (level < log_level)
		return;
	gettimeofday(&tv, NULL);
	seconds = tv.tv_sec; /* a long in Windows' struct timeval */
	gmtime_r(&seconds, &tm);
	snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(tv.tv_usec / 1000));

	buf_init(&line, 16384);
	if (log_format == LOG_FORMAT_JSON)
		buf_printf(&line, "{\"ts\":\"%s\",\"level\":\"%s\",\"event\":", stamp, level_name(level));
	else
		buf_printf(&line, "%s %s ", stamp, level_name(level));
	if (log_format == LOG_FORMAT_JSON)
		append_json_string(&line, event);
	else
		buf_append_str(&line, event);

	va_start(ap, event);
	while ((key = va_arg(ap, const char *))) {
		value = va_arg(ap, const char *);
		if (!value)
			value = "";
		if (log_format == LOG_FORMAT_JSON) {
			buf_append(&line, ",", 1);
			append_json_string(&line, key);
			buf_append(&line, ":", 1);
			append_json_string(&line, value);
		} else {
			buf_printf(&line, " %s=", key);
			append_text_value(&line, value);
		}
	}
	va_end(ap);
	buf_append_str(&line, log_format == LOG_FORMAT_JSON ? "}\n" : "\n");
	fwrite(buf_str(&line), 1, line.len, log_stream ? log_stream : stderr);
	fflush(log_stream ? log_stream : stderr);
	buf_release(&line);
}
