/*
 * test_log.c - log_event(): the bytes of a line (text and JSON), levels,
 * and the buffered mode: a warning flushes what waits before it, the
 * flusher thread writes what waits on its own, exit() writes the rest, a
 * kill -9 loses at most INFO lines, lines of many threads stay whole and
 * in time order.
 */

#include "loadlab/log.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* Everything written to F so far, NUL-terminated; the caller frees it. */
static char *stream_text(FILE *f)
{
	long size;
	char *text;

	fflush(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	text = calloc(1, (size_t)size + 1);
	fseek(f, 0, SEEK_SET);
	if (text && fread(text, 1, (size_t)size, f) != (size_t)size)
		text[0] = '\0';
	fseek(f, 0, SEEK_END);
	return text;
}

/* Whether S starts with a time stamp like 2026-11-30T10:00:00.123Z. */
static int is_stamp(const char *s)
{
	const char *shape = "dddd-dd-ddTdd:dd:dd.dddZ";

	for (int i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return 0;
	return 1;
}

static void test_text_line(void)
{
	FILE *f = tmpfile();
	char *text, *second;

	log_set_stream(f);
	log_set_format(LOG_FORMAT_TEXT);
	log_event(LOG_INFO, "request", "method", "GET", "path", "/healthz", "status", "200", NULL);
	log_event(LOG_WARN, "odd", "empty", "", "null", NULL, "space", "a b", "quote", "say \"hi\"", "eq",
		  "a=b", "ctl", "x\001\n\ty\\", NULL);
	text = stream_text(f);
	CHECK(is_stamp(text));
	second = strchr(text, '\n') + 1;
	CHECK(strncmp(text + 24, " info request method=GET path=/healthz status=200\n", 50) == 0);
	CHECK(second == text + 74);
	CHECK(is_stamp(second));
	CHECK_EQ_STR(second + 24, " warn odd empty=\"\" null=\"\" space=\"a b\" quote=\"say \\\"hi\\\"\""
				  " eq=\"a=b\" ctl=\"x\\u0001\\u000a\\u0009y\\\\\"\n");
	free(text);
	fclose(f);
}

static void test_json_line(void)
{
	FILE *f = tmpfile();
	char *text;
	cJSON *line;

	log_set_stream(f);
	log_set_format(LOG_FORMAT_JSON);
	log_event(LOG_ERROR, "store_error", "sql", "SELECT \"x\"\n", "k\x7f", "\xc3\xa9", NULL);
	text = stream_text(f);
	CHECK(strncmp(text, "{\"ts\":\"", 7) == 0);
	CHECK(is_stamp(text + 7));
	CHECK_EQ_STR(text + 31, "\",\"level\":\"error\",\"event\":\"store_error\",\"sql\":\"SELECT "
				"\\\"x\\\"\\u000a\",\"k\x7f\":\"\xc3\xa9\"}\n");
	line = cJSON_Parse(text);
	CHECK(line != NULL);
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(line, "sql")), "SELECT \"x\"\n");
	cJSON_Delete(line);
	free(text);
	fclose(f);
	log_set_format(LOG_FORMAT_TEXT);
}

static void test_levels_and_long_fields(void)
{
	FILE *f = tmpfile();
	char *text, *big = malloc(20000);

	memset(big, 'v', 19999);
	big[19999] = '\0';
	log_set_stream(f);
	log_set_level(LOG_WARN);
	log_event(LOG_INFO, "dropped", NULL);
	log_event(LOG_DEBUG, "dropped", NULL);
	log_event(LOG_WARN, "kept", "big", big, "after", "x", NULL);
	log_set_level(LOG_INFO);
	text = stream_text(f);
	/* The field past 16 KiB is left out, the line still ends. */
	CHECK_EQ_STR(text + 24, " warn kept\n");
	free(text);
	free(big);
	fclose(f);
}

/* A stream counting its writes (fopencookie), into a memory copy. */
struct counted {
	char data[1 << 20];
	size_t len;
	int writes;
};

static ssize_t counted_write(void *cookie, const char *buf, size_t size)
{
	struct counted *c = cookie;

	if (size > sizeof(c->data) - c->len)
		size = sizeof(c->data) - c->len;
	memcpy(c->data + c->len, buf, size);
	c->len += size;
	c->writes++;
	return (ssize_t)size;
}

static int count_lines(const char *s, size_t len)
{
	int n = 0;

	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	return n;
}

static void test_buffered_batches(void)
{
	static struct counted c;
	FILE *f = fopencookie(&c, "w", (cookie_io_functions_t){.write = counted_write});
	struct timespec wait = {0, 10 * 1000 * 1000};
	char n[16];
	int waited = 0;

	setvbuf(f, NULL, _IONBF, 0);
	log_set_stream(f);
	CHECK_EQ_INT(log_set_buffered(true), 0);
	for (int i = 0; i < 500; i++) {
		snprintf(n, sizeof(n), "%d", i);
		log_event(LOG_INFO, "line", "n", n, NULL);
	}
	/* 500 lines in a few milliseconds: a batch or two, not 500 writes
	 * (the flusher wakes 20 ms after a batch begins). */
	log_flush();
	CHECK_EQ_INT(count_lines(c.data, c.len), 500);
	CHECK(c.writes <= 10);

	/* A warning writes the INFO lines before it and itself at once. */
	c.len = 0;
	log_event(LOG_INFO, "before", NULL);
	log_event(LOG_WARN, "warned", NULL);
	CHECK_EQ_INT(count_lines(c.data, c.len), 2);
	CHECK(c.len > 24 && strstr(c.data, " info before\n") && strstr(c.data, " warn warned\n"));

	/* An INFO line alone is written by the flusher thread. */
	c.len = 0;
	log_event(LOG_INFO, "alone", NULL);
	while (count_lines(c.data, c.len) < 1 && waited++ < 500)
		nanosleep(&wait, NULL);
	CHECK_EQ_INT(count_lines(c.data, c.len), 1);

	/* Unbuffered again: every line is written before log_event returns. */
	c.len = 0;
	CHECK_EQ_INT(log_set_buffered(false), 0);
	log_event(LOG_INFO, "direct", NULL);
	CHECK_EQ_INT(count_lines(c.data, c.len), 1);
	log_set_stream(NULL);
	fclose(f);
}

#define THREADS 8
#define THREAD_LINES 2000

static void *log_many(void *arg)
{
	char thread[16], n[16];

	snprintf(thread, sizeof(thread), "%d", (int)(size_t)arg);
	for (int i = 0; i < THREAD_LINES; i++) {
		snprintf(n, sizeof(n), "%d", i);
		log_event(LOG_INFO, "many", "thread", thread, "n", n, NULL);
	}
	return NULL;
}

static void test_threads(void)
{
	FILE *f = tmpfile();
	pthread_t threads[THREADS];
	int next[THREADS] = {0}, bad = 0, lines = 0;
	char *text, *line, *end, last[25] = "";

	log_set_stream(f);
	CHECK_EQ_INT(log_set_buffered(true), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&threads[i], NULL, log_many, (void *)(size_t)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(threads[i], NULL);
	log_flush();
	text = stream_text(f);
	/* Every line whole, each thread's in its order, stamps never going back. */
	for (line = text; *line; line = end + 1) {
		int thread, n, used = 0;
		if (!(end = strchr(line, '\n')))
			break;
		lines++;
		if (!is_stamp(line) || strncmp(line, last, 24) < 0 ||
		    sscanf(line + 24, " info many thread=%d n=%d%n", &thread, &n, &used) != 2 ||
		    line + 24 + used != end || thread < 0 || thread >= THREADS || n != next[thread]++)
			bad++;
		memcpy(last, line, 24);
	}
	CHECK_EQ_INT(lines, THREADS * THREAD_LINES);
	CHECK_EQ_INT(bad, 0);
	log_set_buffered(false);
	log_set_stream(NULL);
	free(text);
	fclose(f);
}

/* In a child: buffered INFO lines, then exit() or kill -9 (after a
 * warning). What reaches F? */
static char *child_run(int kill_it)
{
	FILE *f = tmpfile();
	char *text;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		log_set_stream(f);
		log_set_buffered(true);
		log_event(LOG_INFO, "first", NULL);
		if (kill_it) {
			log_event(LOG_WARN, "warned", NULL);
			log_event(LOG_INFO, "last", NULL);
			raise(SIGKILL);
		}
		exit(0);
	}
	waitpid(pid, NULL, 0);
	text = stream_text(f);
	fclose(f);
	return text;
}

static void test_exit_and_kill(void)
{
	char *text = child_run(0);

	CHECK(strstr(text, " info first\n") != NULL);
	free(text);
	text = child_run(1);
	/* Written with the warning: the INFO line before it and the warning. */
	CHECK(strstr(text, " info first\n") != NULL);
	CHECK(strstr(text, " warn warned\n") != NULL);
	free(text);
}

int main(void)
{
	test_exit_and_kill(); /* first: it forks, better before any thread */
	test_text_line();
	test_json_line();
	test_levels_and_long_fields();
	test_buffered_batches();
	test_threads();
	return check_finish();
}
