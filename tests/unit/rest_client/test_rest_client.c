/*
 * test_rest_client.c - the shared REST client against a tiny HTTP server
 * that this test runs on 127.0.0.1 (port 0) in a thread, answering canned
 * responses by path. Each answer closes its connection.
 */
#include "check.h"

#include "loadlab/err.h"
#include "loadlab/plat.h"
#include "loadlab/rest_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int listener = -1;
static atomic_int server_stop;
static char last_request[8192]; /* the last request's head and body, for checks */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void send_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
		if (n <= 0)
			return;
		data += n;
		len -= (size_t)n;
	}
}

static void answer(int fd, int status, const char *body)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			 status, strlen(body));

	send_all(fd, head, (size_t)n);
	send_all(fd, body, strlen(body));
}

/* Reads one request (head and Content-Length body) into last_request. */
static void read_request(int fd)
{
	size_t used = 0, want = 0;
	char *end = NULL;

	memset(last_request, 0, sizeof(last_request));
	while (used + 1 < sizeof(last_request)) {
		ssize_t n = recv(fd, last_request + used, sizeof(last_request) - 1 - used, 0);
		if (n <= 0)
			return;
		used += (size_t)n;
		if (!end && (end = strstr(last_request, "\r\n\r\n"))) {
			const char *length = strcasestr(last_request, "Content-Length:");
			want = (size_t)(end + 4 - last_request) +
			       (length && length < end ? strtoul(length + 15, NULL, 10) : 0);
		}
		if (end && used >= want)
			return;
	}
}

/* Sends a head promising 100 bytes, one byte, then nothing until the
 * client hangs up (or 10 s pass). */
static void answer_slowly(int fd)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{";
	long long until = now_ms() + 10000;
	char byte;

	send_all(fd, head, sizeof(head) - 1);
	while (now_ms() < until && !atomic_load(&server_stop)) {
		if (recv(fd, &byte, 1, MSG_DONTWAIT | MSG_PEEK) == 0)
			return;
		nap_ms(20);
	}
}

static void *server_main(void *arg)
{
	static char big[4096];

	(void)arg;
	memset(big, 'x', sizeof(big) - 1);
	while (!atomic_load(&server_stop)) {
		int fd = accept(listener, NULL, NULL);
		char path[128] = "";

		if (fd < 0)
			continue;
		read_request(fd);
		sscanf(last_request, "%*s %127s", path);
		if (strcmp(path, "/ok") == 0)
			answer(fd, 200, "{\"hello\": \"world\", \"n\": [1, 2]}");
		else if (strcmp(path, "/missing") == 0)
			answer(fd, 404, "{\"error\": {\"code\": \"not_found\", \"message\": \"No job 7.\"}}");
		else if (strcmp(path, "/big") == 0)
			answer(fd, 200, big);
		else if (strcmp(path, "/text") == 0)
			answer(fd, 200, "not json {");
		else if (strcmp(path, "/text502") == 0)
			answer(fd, 502, "upstream\r\ndown");
		else if (strcmp(path, "/control") == 0)
			answer(fd, 400,
			       "{\"error\": {\"code\": \"bad\\ncode\", \"message\": "
			       "\"line1\\nline2\\u001b[31m\\r\"}}");
		else if (strcmp(path, "/slow") == 0)
			answer_slowly(fd);
		else if (strcmp(path, "/stop") == 0) {
			answer(fd, 200, "{}");
			atomic_store(&server_stop, 1);
		} else
			answer(fd, 200, "{\"echo\": true}");
		close(fd);
	}
	return NULL;
}

static int start_server(pthread_t *thread, char *url, size_t size)
{
	struct sockaddr_in addr = {0};
	socklen_t len = sizeof(addr);

	listener = socket(AF_INET, SOCK_STREAM, 0);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(listener, 8) < 0 || getsockname(listener, (struct sockaddr *)&addr, &len) < 0)
		return -1;
	snprintf(url, size, "http://127.0.0.1:%d/", ntohs(addr.sin_port));
	return pthread_create(thread, NULL, server_main, NULL) == 0 ? 0 : -1;
}

static int send_request(struct rest_client *c, const char *method, const char *path, const char *body,
			size_t limit, struct rest_answer *a)
{
	const struct rest_request request = {method, path, body, limit, 10};

	return rest_client_send(c, &request, a);
}

static long long abort_after;

static bool abort_when_due(void *context)
{
	(void)context;
	return now_ms() >= abort_after;
}

static void test_answers(struct rest_client *c)
{
	struct rest_answer a;
	const cJSON *hello;
	int rc;

	/* A 200 JSON object is parsed. */
	rc = send_request(c, "GET", "/ok", NULL, 0, &a);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(a.status, 200);
	hello = cJSON_GetObjectItemCaseSensitive(a.body, "hello");
	CHECK(cJSON_IsString(hello) && strcmp(hello->valuestring, "world") == 0);
	CHECK_EQ_STR(a.error_code, "");
	CHECK_EQ_INT(rest_answer_error(&a, "GET", "/ok"), 0);
	CHECK(strncmp(last_request, "GET /ok HTTP/1.1\r\n", 18) == 0);
	CHECK(strstr(last_request, "Authorization: Bearer secret-1\r\n") != NULL);
	CHECK(strstr(last_request, "User-Agent: loadlab-test/1\r\n") != NULL);
	rest_answer_release(&a);
	CHECK(a.body == NULL && a.text.data == NULL);

	/* A 404 error body: status, code and message; mapped for the CLI. */
	rc = send_request(c, "GET", "/missing", NULL, 0, &a);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(a.status, 404);
	CHECK_EQ_STR(a.error_code, "not_found");
	CHECK_EQ_STR(a.message, "No job 7.");
	CHECK(a.server_message);
	CHECK_EQ_INT(rest_answer_error(&a, "GET", "/missing"), LL_ENOTFOUND);
	CHECK_EQ_STR(err_message(LL_ENOTFOUND), "No job 7. (HTTP 404 not_found)");
	rest_answer_release(&a);

	/* A body over the request's limit is refused. */
	rc = send_request(c, "GET", "/big", NULL, 1024, &a);
	CHECK_EQ_INT(rc, LL_ETOOBIG);
	CHECK(strstr(err_message(rc), "larger than 1024 bytes") != NULL);
	CHECK(a.body == NULL && a.text.data == NULL && a.status == 0);
	rest_answer_release(&a); /* harmless after a failure */
	rc = send_request(c, "GET", "/big", NULL, 8192, &a);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(a.text.len, 4095);
	rest_answer_release(&a);

	/* A 2xx body that is not JSON: kept as text, no object. */
	rc = send_request(c, "GET", "/text", NULL, 0, &a);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(a.status, 200);
	CHECK(a.body == NULL);
	CHECK_EQ_STR(a.text.data, "not json {");
	rest_answer_release(&a);

	/* An error body that is not JSON: its start, on one line. */
	rc = send_request(c, "GET", "/text502", NULL, 0, &a);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(a.status, 502);
	CHECK(!a.server_message);
	CHECK_EQ_STR(a.message, "upstream  down");
	CHECK_EQ_INT(rest_answer_error(&a, "GET", "/text502"), LL_ESTORE);
	CHECK_EQ_STR(err_message(LL_ESTORE), "The server answered HTTP 502 to GET /text502: upstream  down");
	rest_answer_release(&a);

	/* Control characters in the server's code and message become spaces. */
	rc = send_request(c, "GET", "/control", NULL, 0, &a);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(a.status, 400);
	CHECK_EQ_STR(a.error_code, "bad code");
	CHECK_EQ_STR(a.message, "line1 line2 [31m ");
	CHECK_EQ_INT(rest_answer_error(&a, "GET", "/control"), LL_EINVAL);
	rest_answer_release(&a);

	/* Any method, with a JSON body and its Content-Type. */
	rc = send_request(c, "PATCH", "/echo", "{\"x\":1}", 0, &a);
	CHECK_EQ_INT(rc, 0);
	CHECK(strncmp(last_request, "PATCH /echo HTTP/1.1\r\n", 22) == 0);
	CHECK(strstr(last_request, "Content-Type: application/json\r\n") != NULL);
	CHECK(strstr(last_request, "\r\n\r\n{\"x\":1}") != NULL);
	rest_answer_release(&a);
	rc = rest_client_post(c, "/echo", "{}", 10, &a);
	CHECK_EQ_INT(rc, 0);
	CHECK(strncmp(last_request, "POST /echo HTTP/1.1\r\n", 21) == 0);
	rest_answer_release(&a);

	/* A replaced token is sent from then on; a token with a newline is not taken. */
	CHECK_EQ_INT(rest_client_set_token(c, "two\nlines"), LL_EINVAL);
	CHECK_EQ_INT(rest_client_set_token(c, "secret-2"), 0);
	CHECK_EQ_INT(rest_client_post(c, "/echo", "{}", 10, &a), 0);
	CHECK(strstr(last_request, "Authorization: Bearer secret-2\r\n") != NULL);
	rest_answer_release(&a);
	CHECK_EQ_INT(rest_client_set_token(c, NULL), 0);
	CHECK_EQ_INT(rest_client_post(c, "/echo", "{}", 10, &a), 0);
	CHECK(strstr(last_request, "Authorization:") == NULL);
	rest_answer_release(&a);
}

/* rest_client_download(): a 2xx body into the file, an error body into
 * the answer (the file left empty), a body over the limit refused. */
static void test_download(struct rest_client *c)
{
	char path[] = "/tmp/loadlab-download-XXXXXX", *data = NULL;
	struct rest_answer a;
	long long size = -1;
	size_t len = 0;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	CHECK_EQ_INT(rest_client_download(c, "/big", path, 1 << 20, &size, &a), 0);
	CHECK_EQ_INT(a.status, 200);
	CHECK_EQ_INT(size, 4095);
	CHECK_EQ_INT(a.text.len, 0);
	CHECK_EQ_INT(plat_read_file(path, 1 << 20, &data, &len), 0);
	CHECK_EQ_INT(len, 4095);
	CHECK(data && data[0] == 'x' && data[4094] == 'x');
	free(data);
	rest_answer_release(&a);
	CHECK_EQ_INT(rest_client_download(c, "/missing", path, 1 << 20, &size, &a), 0);
	CHECK_EQ_INT(a.status, 404);
	CHECK_EQ_STR(a.message, "No job 7.");
	CHECK_EQ_INT(plat_read_file(path, 1 << 20, &data, &len), 0);
	CHECK_EQ_INT(len, 0);
	free(data);
	rest_answer_release(&a);
	CHECK_EQ_INT(rest_client_download(c, "/big", path, 100, &size, &a), LL_ETOOBIG);
	remove(path);
}

static void test_abort(struct rest_client *c)
{
	struct rest_answer a;
	long long start = now_ms();
	int rc;

	abort_after = start + 300;
	rest_client_set_abort(c, abort_when_due, NULL);
	rc = send_request(c, "GET", "/slow", NULL, 0, &a);
	rest_client_set_abort(c, NULL, NULL);
	CHECK_EQ_INT(rc, LL_ESTATE);
	CHECK(now_ms() - start >= 300);
	CHECK(now_ms() - start < 5000); /* the server would stall for 10 s */
	rest_answer_release(&a);
}

static void test_refusals(void)
{
	struct rest_client c;
	char text[8];

	CHECK_EQ_INT(rest_client_open(&c, "ftp://127.0.0.1/", NULL), LL_EINVAL);
	CHECK(c.curl == NULL);
	CHECK_EQ_INT(rest_client_open(&c, "127.0.0.1:8080", NULL), LL_EINVAL);
	CHECK_EQ_INT(rest_client_open(&c, "http://127.0.0.1:1\n", NULL), LL_EINVAL);
	CHECK_EQ_INT(rest_client_open(&c, "http://127.0.0.1:1", "tok\nen"), LL_EINVAL);
	CHECK(strstr(err_message(LL_EINVAL), "token") != NULL);
	CHECK_EQ_INT(rest_client_open(&c, "http://127.0.0.1:1", "tok\x7f"), LL_EINVAL);
	rest_client_close(&c);

	CHECK_EQ_INT(rest_status_code(401), LL_EAUTH);
	CHECK_EQ_INT(rest_status_code(403), LL_EFORBIDDEN);
	CHECK_EQ_INT(rest_status_code(409), LL_ECONFLICT);
	CHECK_EQ_INT(rest_status_code(413), LL_ETOOBIG);
	CHECK_EQ_INT(rest_status_code(501), LL_EUNSUPPORTED);
	CHECK_EQ_INT(rest_status_code(503), LL_ESTORE);
	CHECK_EQ_INT(rest_status_code(418), LL_EINVAL);

	char *escaped = rest_escape("a b&c/~é");
	CHECK_EQ_STR(escaped, "a%20b%26c%2F~%C3%A9");
	free(escaped);

	/* "aé" cut to 3 bytes: the half 'é' goes. */
	rest_one_line("a\xc3\xa9", text, 3);
	CHECK_EQ_STR(text, "a");
	rest_one_line("ab\xc3\xa9", text, 5);
	CHECK_EQ_STR(text, "ab\xc3\xa9");
	rest_one_line("\t\x1b"
		      "x",
		      text, sizeof(text));
	CHECK_EQ_STR(text, "  x");
}

static void test_unreachable(void)
{
	struct rest_client c;
	struct rest_answer a;
	struct sockaddr_in addr = {0};
	socklen_t len = sizeof(addr);
	char url[64];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	/* A port that was free a moment ago: nothing listens there. */
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
	      getsockname(fd, (struct sockaddr *)&addr, &len) == 0);
	close(fd);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(addr.sin_port));
	CHECK_EQ_INT(rest_client_open(&c, url, NULL), 0);
	CHECK_EQ_INT(rest_client_post(&c, "/x", "{}", 5, &a), LL_EIO);
	CHECK(strstr(err_message(LL_EIO), "Cannot reach the server") != NULL);
	rest_client_close(&c);
}

int main(void)
{
	struct rest_client c;
	struct rest_answer a;
	pthread_t thread;
	char url[64];

	CHECK_EQ_INT(rest_client_global_init("loadlab-test/1"), 0);
	if (start_server(&thread, url, sizeof(url)) < 0) {
		fprintf(stderr, "cannot start the test server\n");
		return 1;
	}
	CHECK_EQ_INT(rest_client_open(&c, url, "secret-1"), 0);
	test_answers(&c);
	test_download(&c);
	test_abort(&c);
	rest_client_send(&c, &(struct rest_request){"POST", "/stop", "{}", 0, 5}, &a);
	rest_answer_release(&a);
	rest_client_close(&c);
	pthread_join(thread, NULL);
	close(listener);
	test_refusals();
	test_unreachable();
	rest_client_global_cleanup();
	return check_finish();
}
