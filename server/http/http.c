/*
 * http.c - libmicrohttpd glue: per-request state, capped bodies, auth,
 * dispatch through the route table, long-poll parking, request logs.
 *
 * Per-request state is made on the first callback and freed in the
 * completed callback. Responses are queued on a later callback than the
 * first: libmicrohttpd 0.9.75 drops keep-alive when a response is queued
 * on the first one (DESIGN.md, "Known traps") — except refusals of a
 * request with a body (404, 405, 413, 414, 401, 403), which are sent before the body
 * is read and close the connection on purpose.
 *
 * A route with a body stream (route_table_stream(), http.h) gets its body piece by piece instead
 * of in req->body: blob uploads, which may be far larger than memory.
 *
 * Capacity (capacity.h): a connection limit from the open-files limit,
 * parked long-polls capped below it, and header and body deadlines
 * (conn_deadlines.h) enforced by the sweeper for every connection.
 */
#include "conn_deadlines.h"
#include "schedules/lease_expiry.h"
#include "server.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- long-poll */

bool http_long_poll_begin(struct http_request *req)
{
	struct server *server = req->server;

	if (req->holds_long_poll)
		return true;
	if (atomic_fetch_add(&server->long_polls, 1) >= server->capacity.long_polls) {
		atomic_fetch_sub(&server->long_polls, 1);
		metrics_add(&server->metrics.long_polls_refused, 1);
		conn_warn_limit(server, WARN_LONG_POLLS, "long_poll_limit_reached", "limit",
				server->capacity.long_polls);
		return false;
	}
	req->holds_long_poll = true;
	return true;
}

void http_waiters_wake_all(struct server *server)
{
	pthread_mutex_lock(&server->waiters_lock);
	while (server->waiters) {
		struct http_request *req = server->waiters;
		server->waiters = req->next_waiter;
		req->next_waiter = NULL;
		MHD_resume_connection(req->connection);
	}
	pthread_mutex_unlock(&server->waiters_lock);
}

static void wake_expired(struct server *server, long long now)
{
	struct http_request **p;

	pthread_mutex_lock(&server->waiters_lock);
	for (p = &server->waiters; *p;) {
		struct http_request *req = *p;
		if (req->wait_deadline_ms <= now) {
			*p = req->next_waiter;
			req->next_waiter = NULL;
			MHD_resume_connection(req->connection);
		} else {
			p = &req->next_waiter;
		}
	}
	pthread_mutex_unlock(&server->waiters_lock);
}

/* Another daemon's write made tasks ready, or the watch of the shared
 * store is back (store_watch_tasks(), on the store's thread): the parked
 * long-polls look again, as after a local submit. */
static void on_tasks_watch(void *arg, enum store_watch_event event)
{
	struct server *server = arg;

	metrics_add(event == STORE_WATCH_TASKS ? &server->metrics.lease_wakes_notify
					       : &server->metrics.store_watch_reconnects,
		    1);
	http_waiters_wake_all(server);
}

/* ------------------------------------------------------------ store writes */

/* req->write_state: a write's commit and the connection's suspension race
 * (the writer may finish before on_request() suspends); whichever comes
 * second resumes the connection. */
enum { WRITE_QUEUED, WRITE_SUSPENDED, WRITE_COMMITTED };

void http_write_committed(void *arg)
{
	struct http_request *req = arg;
	struct server *server = req->server; /* REQ may be gone once resumed */

	if (atomic_exchange(&req->write_state, WRITE_COMMITTED) == WRITE_SUSPENDED)
		MHD_resume_connection(req->connection);
	atomic_fetch_sub(&server->writes_pending, 1);
}

/* The sweeper: every 100 ms resumes long-polls past their deadline; every
 * LEASE_EXPIRY_TICK_MS runs the lease-expiry tick (schedules/lease_expiry.h)
 * and, when it says so, wakes the long-polls so that they look again. */
static void *sweeper_main(void *arg)
{
	struct server *server = arg;
	int tick = 0;

	while (!atomic_load(&server->stopping)) {
		long long now;
		usleep(100 * 1000);
		now = clock_now_ms();
		wake_expired(server, now);
		if (tick % 5 == 0)
			conn_deadlines_sweep(server, now);
		if (++tick % (LEASE_EXPIRY_TICK_MS / 100))
			continue;
		int expired = 0;
		bool wake = lease_expiry_tick(server->store, now, server->waiters != NULL, &expired);
		if (expired > 0)
			metrics_add(&server->metrics.leases_expired, expired);
		if (wake)
			http_waiters_wake_all(server);
	}
	return NULL;
}

/* ---------------------------------------------------------------- dispatch */

/* An answer built for one request, held until libmicrohttpd has sent it
 * (or the connection is gone): counted in server->answer_bytes. */
struct held_answer {
	struct server *server;
	char *text;
	size_t len;
};

static void release_answer(void *arg)
{
	struct held_answer *held = arg;

	atomic_fetch_sub(&held->server->answer_bytes, (long long)held->len);
	free(held->text);
	free(held);
}

/* A response of TEXT (LEN bytes, owned), counted against
 * --answer-memory-bytes until it is sent. NULL when out of memory, or with
 * *RET_REFUSED when an answer of HTTP_ANSWER_HELD_MIN bytes or more would
 * pass the limit while others are held (clients that read slowly, or
 * never): such answers cannot take the daemon's memory. TEXT is freed in
 * every case. */
static struct MHD_Response *held_response(struct server *server, char *text, size_t len, bool *ret_refused)
{
	struct held_answer *held = malloc(sizeof(*held));
	long long before = atomic_fetch_add(&server->answer_bytes, (long long)len);
	struct MHD_Response *response = NULL;

	*ret_refused = len >= HTTP_ANSWER_HELD_MIN && before > 0 &&
		       before + (long long)len > server->config.answer_memory_bytes;
	if (held && !*ret_refused) {
		*held = (struct held_answer){server, text, len};
		response = MHD_create_response_from_buffer_with_free_callback_cls(len, text, release_answer,
										  held);
	}
	if (!response) {
		atomic_fetch_sub(&server->answer_bytes, (long long)len);
		free(text);
		free(held);
	}
	return response;
}

static enum MHD_Result send_reply(struct http_request *req, struct http_reply *reply)
{
	struct MHD_Response *response;
	enum MHD_Result ret;
	char *text = NULL;
	size_t len = 0;
	enum MHD_ResponseMemoryMode mode = MHD_RESPMEM_MUST_FREE; /* PERSISTENT: static_data */
	const char *type = reply->content_type ? reply->content_type : "application/json";

	if (reply->has_file) {
		/* libmicrohttpd reads the file as it sends it and closes it. */
		response = MHD_create_response_from_fd64((uint64_t)reply->file_size, reply->file_fd);
		if (!response) {
			close(reply->file_fd);
			return MHD_NO;
		}
		reply->has_file = false;
		type = reply->content_type ? reply->content_type : "application/octet-stream";
		goto headers;
	}
	if (reply->json) {
		text = json_print(reply->json);
		cJSON_Delete(reply->json);
		reply->json = NULL;
		if (!text)
			return MHD_NO;
		len = strlen(text);
	} else if (reply->text) {
		text = reply->text;
		reply->text = NULL;
		len = strlen(text);
	} else if (reply->static_data) {
		text = (char *)reply->static_data;
		len = reply->static_len;
		mode = MHD_RESPMEM_PERSISTENT;
	}
	if (text && mode == MHD_RESPMEM_MUST_FREE) {
		bool refused = false;
		if (!(response = held_response(req->server, text, len, &refused)) && refused) {
			struct http_reply busy = {0};
			metrics_add(&req->server->metrics.answers_refused, 1);
			reply_error(&busy, 503, "busy",
				    "Answers waiting for slow clients hold nearly the limit of %lld bytes "
				    "(--answer-memory-bytes): try again shortly.",
				    req->server->config.answer_memory_bytes);
			busy.retry_after = CAPACITY_RETRY_AFTER_SECONDS;
			return send_reply(req, &busy); /* small: never refused */
		}
	} else {
		response = MHD_create_response_from_buffer(len, text ? text : (char *)"",
							   MHD_RESPMEM_PERSISTENT);
	}
	if (!response)
		return MHD_NO;
headers:
	if (reply->status != 204)
		MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(response, "Cache-Control", "no-store");
	if (reply->retry_after > 0) {
		char seconds[16];
		snprintf(seconds, sizeof(seconds), "%d", reply->retry_after);
		MHD_add_response_header(response, MHD_HTTP_HEADER_RETRY_AFTER, seconds);
	}
	req->status = reply->status;
	if (reply->storage_full)
		storage_full_note(req->server);
	ret = MHD_queue_response(req->connection, (unsigned int)reply->status, response);
	MHD_destroy_response(response);
	return ret;
}

#define QUERY_TOO_LONG_MESSAGE "The query string has more than 64 arguments."
_Static_assert(HTTP_MAX_QUERY_ARGS == 64, "QUERY_TOO_LONG_MESSAGE names the limit");

static enum MHD_Result send_error(struct http_request *req, int status, const char *code, const char *message)
{
	struct http_reply reply = {0};

	reply_error(&reply, status, code, "%s", message);
	return send_reply(req, &reply);
}

/* The 404 or 405 of a path no route matches (req->status says which). */
static enum MHD_Result send_unrouted(struct http_request *req)
{
	if (req->status == 405)
		return send_error(req, 405, "method_not_allowed", "This path does not take that method.");
	return send_error(req, 404, "not_found", "No such route.");
}

/* The URI-log callback: called once a request line is in, before
 * libmicrohttpd splits the query string. Makes the per-request state. A
 * query of more than HTTP_MAX_QUERY_ARGS arguments is cut here (the byte
 * after '?' becomes NUL, so libmicrohttpd parses none) and answered 414 by
 * on_request(): libmicrohttpd 0.9.75 runs out of its connection pool on
 * many arguments, queues a 431 and then overwrites its own state, so that
 * the client never gets an answer. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *connection)
{
	struct server *server = cls;
	struct http_request *req = calloc(1, sizeof(*req));
	char *query = strchr(uri, '?');

	if (!req)
		return NULL;
	atomic_fetch_add_explicit(&server->inflight, 1, memory_order_relaxed);
	req->server = server;
	req->connection = connection;
	req->conn = conn_of(connection);
	req->started_us = clock_monotonic_us();
	req->route_index = -1;
	if (query) {
		int args = 1;
		for (const char *p = query + 1; *p; p++)
			args += *p == '&';
		if (args > HTTP_MAX_QUERY_ARGS) {
			req->query_too_long = true;
			query[1] = '\0'; /* the request line lies in libmicrohttpd's writable buffer */
		}
	}
	return req;
}

/* True when the request announces a body (Content-Length > 0 or chunked). */
static bool has_body(struct MHD_Connection *connection)
{
	const char *length =
		MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (length && strtoull(length, NULL, 10) > 0) ||
	       MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

/* SRC into DST of SIZE bytes, cut to fit: snprintf's "%s" without its
 * format parsing (two a request). */
static void copy_cut(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The first access callback: every header is in, no body byte is read.
 * Matches the route and decides authorization from the headers alone. A
 * refusal of a request with a body is sent now, so that the body is never
 * read (libmicrohttpd then closes the connection); without a body it waits
 * for the next callback, which keeps the connection alive. */
static enum MHD_Result on_headers(struct server *server, struct http_request *req,
				  struct MHD_Connection *connection, const char *url, const char *method)
{
	struct http_reply reply = {0};
	const char *length;
	bool wrong_method = false;

	req->headers_done = true;
	conn_wait_headers(server, req->conn, false);
	copy_cut(req->method, sizeof(req->method), method);
	copy_cut(req->path, sizeof(req->path), url);
	req->route_index = strlen(url) < sizeof(req->path) ? route_table_match(server->routes, method, url,
									       &req->path_id, &wrong_method)
							   : -1;
	req->route = req->route_index >= 0 ? &server->routes->routes[req->route_index] : NULL;
	req->stream = route_table_stream(server->routes, req->route);
	buf_init(&req->body, req->route ? req->route->max_body : 0);
	if (!req->route) {
		req->status = wrong_method ? 405 : 404;
		if (has_body(connection)) /* answered now: the body is never read */
			return send_unrouted(req);
		return MHD_YES;
	}
	if (req->query_too_long) {
		metrics_add(&server->metrics.query_refused, 1);
		if (has_body(connection))
			return send_error(req, 414, "uri_too_long", QUERY_TOO_LONG_MESSAGE);
		return MHD_YES;
	}
	/* Refuse an oversized body before reading it (a streamed one: begin()). */
	length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (!req->stream && length && strtoull(length, NULL, 10) > req->route->max_body) {
		char message[128];
		snprintf(message, sizeof(message), "The body is larger than the limit of %zu bytes.",
			 req->route->max_body);
		return send_error(req, 413, "too_large", message);
	}
	err_clear();
	req->auth_rc = auth_check(
		server->store, req->route->auth, server->config.public_read, server->config.public_metrics,
		MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
		&req->token);
	if (req->auth_rc < 0 && has_body(connection)) {
		reply_from_err(&reply, req->auth_rc);
		return send_reply(req, &reply);
	}
	req->authorized = req->auth_rc == 0;
	if (req->authorized && req->stream) {
		req->stream->begin(req, &reply);
		if (reply.status)
			return send_reply(req, &reply);
	}
	if (has_body(connection))
		conn_body_begin(req->conn);
	return MHD_YES;
}

/* A piece of a streamed body: to the route, or dropped once it refused. */
static enum MHD_Result on_stream_data(struct http_request *req, const char *data, size_t size)
{
	if (!req->authorized)
		return MHD_YES; /* a refusal is waiting for the end of the body */
	if (req->stream_failed) {
		req->stream_dropped += (long long)size;
		return req->stream_dropped > HTTP_STREAM_DROP_MAX ? MHD_NO : MHD_YES;
	}
	if (!req->stream_reply && !(req->stream_reply = calloc(1, sizeof(*req->stream_reply))))
		return MHD_NO;
	if (req->stream->data(req, data, size, req->stream_reply) < 0) {
		req->stream_failed = true;
		if (!req->stream_reply->status)
			reply_error(req->stream_reply, 500, "internal", "The upload failed.");
	}
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *connection, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct server *server = cls;
	struct http_request *req = *con_cls;
	struct http_reply reply = {0};
	int rc;

	(void)version;
	if (!req)
		return MHD_NO; /* on_uri() ran out of memory */
	if (!req->headers_done)
		return on_headers(server, req, connection, url, method);

	if (*upload_data_size)
		conn_body_progress(req->conn, (long long)*upload_data_size);
	if (*upload_data_size && req->stream) {
		enum MHD_Result ret = on_stream_data(req, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return ret;
	}
	if (*upload_data_size) {
		if (!req->body_too_big && buf_append(&req->body, upload_data, *upload_data_size) < 0)
			req->body_too_big = true;
		*upload_data_size = 0;
		return MHD_YES;
	}

	conn_body_end(req->conn);
	if (!req->route)
		return send_unrouted(req);
	if (req->query_too_long)
		return send_error(req, 414, "uri_too_long", QUERY_TOO_LONG_MESSAGE);
	if (req->body_too_big) {
		char message[128];
		snprintf(message, sizeof(message), "The body is larger than the limit of %zu bytes.",
			 req->route->max_body);
		return send_error(req, 413, "too_large", message);
	}
	if (!req->authorized) {
		reply_from_err(&reply, req->auth_rc);
		return send_reply(req, &reply);
	}
	if (req->stream_failed) {
		reply = *req->stream_reply;
		memset(req->stream_reply, 0, sizeof(*req->stream_reply));
		return send_reply(req, &reply);
	}

	err_clear();
	atomic_store(&req->write_state, WRITE_QUEUED);
	rc = req->route->handler(req, &reply);
	req->calls++;
	if (rc == HTTP_SUSPEND_WRITE) {
		/* Counted after the write is queued: may go below 0 a moment. */
		atomic_fetch_add(&server->writes_pending, 1);
		MHD_suspend_connection(connection);
		if (atomic_exchange(&req->write_state, WRITE_SUSPENDED) == WRITE_COMMITTED)
			MHD_resume_connection(connection);
		return MHD_YES;
	}
	if (rc == HTTP_SUSPEND) {
		pthread_mutex_lock(&server->waiters_lock);
		MHD_suspend_connection(connection);
		req->next_waiter = server->waiters;
		server->waiters = req;
		pthread_mutex_unlock(&server->waiters_lock);
		return MHD_YES;
	}
	if (!reply.status)
		reply_error(&reply, 500, "internal", "The handler gave no answer.");
	return send_reply(req, &reply);
}

/* Writes the decimal digits of VALUE (>= 0) at OUT, NUL-ended; returns
 * the end. The request log's numbers, without printf per request. */
static char *put_decimal(char *out, long long value)
{
	char digits[24];
	int n = 0;

	do
		digits[n++] = (char)('0' + value % 10);
	while ((value /= 10) > 0);
	while (n)
		*out++ = digits[--n];
	*out = '\0';
	return out;
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct server *server = cls;
	struct http_request *req = *con_cls;
	long long duration;
	char status[8], ms[32], who[32], *end;

	if (!req)
		return;
	if (req->holds_long_poll)
		atomic_fetch_sub(&server->long_polls, 1);
	conn_body_end(req->conn);
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		conn_wait_headers(server, req->conn, true);
	duration = clock_monotonic_us() - req->started_us;
	if (!req->status)
		req->status = 499; /* the client went away before an answer */
	metrics_count_request(&server->metrics, req->route_index, req->status, duration);
	put_decimal(status, req->status);
	/* "%.3f" of the milliseconds: whole ones, then 3 digits of micros */
	end = put_decimal(ms, duration / 1000);
	*end++ = '.';
	for (long long unit = 100, us = duration % 1000; unit; unit /= 10)
		*end++ = (char)('0' + us / unit % 10);
	*end = '\0';
	if (req->token.agent_id)
		put_decimal((char *)memcpy(who, "agent:", 6) + 6, req->token.agent_id);
	else if (req->token.id)
		put_decimal((char *)memcpy(who, "token:", 6) + 6, req->token.id);
	else
		memcpy(who, "-", 2);
	if (req->headers_done)
		log_event(LOG_INFO, "request", "method", req->method, "path", req->path, "status", status,
			  "ms", ms, "who", who, NULL);
	store_call_free(req->write_call); /* committed (http_stop() waits), not answered */
	if (req->route_state_release)
		req->route_state_release(req->route_state);
	cJSON_Delete(req->write_body);
	if (req->stream && req->stream->release)
		req->stream->release(req);
	if (req->stream_reply) {
		cJSON_Delete(req->stream_reply->json);
		free(req->stream_reply->text);
		free(req->stream_reply);
	}
	buf_release(&req->body);
	free(req);
	*con_cls = NULL;
	atomic_fetch_sub_explicit(&server->inflight, 1, memory_order_relaxed);
}

/* ------------------------------------------------------------ start, stop */

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct buf b;
	char chunk[4096];
	size_t n;

	if (!f)
		return NULL;
	buf_init(&b, 1 << 20);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_append(&b, chunk, n) < 0) {
			buf_release(&b);
			fclose(f);
			return NULL;
		}
	fclose(f);
	return b.data ? b.data : strdup("");
}

/* libmicrohttpd's own messages go to the log as warnings; a connection
 * it closes for the limit is counted. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct server *server = cls;
	char message[512];
	size_t len;

	vsnprintf(message, sizeof(message), fmt, ap);
	len = strlen(message);
	while (len && (message[len - 1] == '\n' || message[len - 1] == '\r'))
		message[--len] = '\0';
	http_utf8_sanitize(message);
	if (strstr(message, "reached connection limit")) {
		metrics_add(&server->metrics.connection_limit_hits, 1);
		conn_warn_limit(server, WARN_CONNECTIONS, "connection_limit_reached", "limit",
				server->capacity.connections);
		return;
	}
	log_event(LOG_WARN, "libmicrohttpd", "message", message, NULL);
}

/* Raises the open-files limit, plans the connection and long-poll limits
 * (capacity.h) and says what it got. */
static int plan_capacity(struct server *server)
{
	long long before, after;
	char text[4][24];
	int rc;

	if ((rc = capacity_raise_nofile(&before, &after)) < 0 ||
	    (rc = capacity_plan(&server->config, after, &server->capacity)) < 0)
		return rc;
	snprintf(text[0], sizeof(text[0]), "%lld", before);
	snprintf(text[1], sizeof(text[1]), "%lld", after);
	snprintf(text[2], sizeof(text[2]), "%d", server->capacity.connections);
	snprintf(text[3], sizeof(text[3]), "%d", server->capacity.long_polls);
	log_event(LOG_INFO, "capacity", "open_files_was", text[0], "open_files", text[1], "connections",
		  text[2], "long_polls", text[3], NULL);
	if (server->capacity.connections_lowered)
		log_event(LOG_WARN, "max_connections_lowered", "asked",
			  (snprintf(text[0], sizeof(text[0]), "%d", server->config.max_connections), text[0]),
			  "connections", text[2], NULL);
	if (server->capacity.long_polls_lowered)
		log_event(LOG_WARN, "max_long_polls_lowered", "asked",
			  (snprintf(text[0], sizeof(text[0]), "%d", server->config.max_long_polls), text[0]),
			  "long_polls", text[3], NULL);
	return 0;
}

int http_start(struct server *server)
{
	struct config *c = &server->config;
	struct sockaddr_in addr = {0};
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
			     MHD_USE_ERROR_LOG | MHD_USE_ITC;
	char *cert = NULL, *key = NULL;
	const union MHD_DaemonInfo *info;

	storage_full_init(server);
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)c->listen_port);
	if (inet_pton(AF_INET, strcmp(c->listen_host, "localhost") == 0 ? "127.0.0.1" : c->listen_host,
		      &addr.sin_addr) != 1)
		return err_set(LL_EINVAL, "listen host '%s' must be an IPv4 address.", c->listen_host);
	if (c->tls_cert[0]) {
		cert = read_file(c->tls_cert);
		key = read_file(c->tls_key);
		if (!cert || !key) {
			free(cert);
			free(key);
			return err_set(LL_EIO, "Cannot read the TLS certificate or key.");
		}
		flags |= MHD_USE_TLS;
	}
	if (plan_capacity(server) < 0) {
		free(cert);
		free(key);
		return LL_ERANGE;
	}
	pthread_mutex_init(&server->waiters_lock, NULL);
	pthread_mutex_init(&server->conns_lock, NULL);
	server->daemon = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, server, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log,
		server, /* first, or some go to stderr */
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_THREAD_POOL_SIZE,
		(unsigned int)c->threads, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)c->connection_timeout,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)c->per_ip_limit,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, server, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)server->capacity.connections, MHD_OPTION_URI_LOG_CALLBACK, on_uri, server,
		MHD_OPTION_NOTIFY_CONNECTION, conn_deadlines_notify, server,
		cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, cert, MHD_OPTION_HTTPS_MEM_KEY, key,
		MHD_OPTION_END);
	/* libmicrohttpd copies nothing: cert and key live until http_stop(). */
	server->tls_cert_pem = cert;
	server->tls_key_pem = key;
	if (!server->daemon) {
		free(cert);
		free(key);
		server->tls_cert_pem = server->tls_key_pem = NULL;
		return err_set(LL_EIO, "Cannot listen on %s:%d (in use, or TLS not available).",
			       c->listen_host, c->listen_port);
	}
	info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
	server->port = info ? info->port : c->listen_port;
	if (pthread_create(&server->sweeper, NULL, sweeper_main, server) == 0)
		server->sweeper_running = true;
	/* Without the watch the lease-expiry tick still finds the tasks. */
	int rc = server->config.store_watch ? store_watch_tasks(server->store, on_tasks_watch, server) : 0;
	if (rc < 0)
		log_event(LOG_WARN, "store_watch_failed", "message", err_message(rc), NULL);
	return 0;
}

void http_stop(struct server *server, long long timeout_ms)
{
	long long deadline = clock_now_ms() + timeout_ms;

	if (!server->daemon)
		return;
	MHD_quiesce_daemon(server->daemon);
	store_watch_tasks(server->store, NULL, NULL);
	atomic_store(&server->stopping, true);
	if (server->sweeper_running)
		pthread_join(server->sweeper, NULL);
	/* Parked long-polls answer 204 once woken (the handler sees stopping). */
	while (clock_now_ms() < deadline) {
		http_waiters_wake_all(server);
		if (atomic_load_explicit(&server->inflight, memory_order_relaxed) == 0)
			break;
		usleep(20 * 1000);
	}
	http_waiters_wake_all(server);
	/* A connection suspended for a store write must not be closed under
	 * it: the writer still holds the request. Every write ends (the
	 * store's busy timeout bounds it), so this wait does. */
	while (atomic_load(&server->writes_pending) != 0)
		usleep(10 * 1000);
	MHD_stop_daemon(server->daemon);
	server->daemon = NULL;
	free(server->tls_cert_pem);
	free(server->tls_key_pem);
	server->tls_cert_pem = server->tls_key_pem = NULL;
}
