/*
 * http.h - the HTTP door (http.c, on libmicrohttpd): what route handlers
 * see of a request and how they answer (http_reply.c), the route table it
 * is given (http_route.c), and starting and stopping it. Beside it: auth.h (who may call), capacity.h
 * (connection and long-poll limits), metrics.h (/metrics counters).
 *
 * A handler is `int handler(struct http_request *req, struct http_reply
 * *reply)`: it reads the request (req->path_id, req->body, http_query()),
 * fills REPLY with reply_json()/reply_error()/reply_from_err(), and
 * returns 0 — or HTTP_SUSPEND to park the connection (lease long-poll)
 * until http_waiters_wake_all() or its req->wait_deadline_ms; the handler
 * is then called again with the same req.
 */
#ifndef LOADLAB_SERVER_HTTP_H
#define LOADLAB_SERVER_HTTP_H

#include "http/auth.h"
#include "store/store.h"

#include "loadlab/buf.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct server;
struct store_call;
struct MHD_Connection;

#define HTTP_SUSPEND 1
/* A handler's answer after queuing a store write (store_async.h) with
 * http_write_committed() and the request as its callback, the call in
 * req->write_call: the connection waits, suspended, for the commit; the
 * handler is then called again and ends the call. The same for other work
 * done off the HTTP threads whose end calls http_write_committed(): a
 * report computed on a report worker (reports/report_cache.h), its ticket
 * in req->route_state. */
#define HTTP_SUSPEND_WRITE 2

/* Query arguments a request may carry; more get 414 (libmicrohttpd 0.9.75
 * would run out of its per-connection pool and never answer). */
#define HTTP_MAX_QUERY_ARGS 64

struct route;
struct http_conn;

struct http_request {
	struct server *server;
	struct MHD_Connection *connection;
	struct http_conn *conn; /* its deadlines (conn_deadlines.h); NULL: not tracked */
	const struct route *route;
	int route_index;
	char method[8];
	char path[256];
	long long path_id; /* the {id} of the route, if any */
	struct buf body;
	bool body_too_big;
	bool headers_done;        /* the first access callback has run */
	bool query_too_long;      /* more than HTTP_MAX_QUERY_ARGS arguments */
	bool holds_long_poll;     /* counted in server->long_polls */
	int auth_rc;              /* auth_check()'s answer from the headers */
	struct store_token token; /* who called (id 0: anonymous) */
	bool authorized;
	int status; /* the status sent, for logs and metrics */
	long long started_us;

	/* a streamed body (route_table_stream()) */
	const struct route_stream *stream; /* NULL: the body goes to req->body */
	void *stream_state;                /* the route's, freed by stream->release */
	bool stream_failed;                /* data() refused: the rest is dropped, stream_reply sent */
	long long stream_dropped;          /* bytes dropped since */
	struct http_reply *stream_reply;

	/* a store write queued (HTTP_SUSPEND_WRITE); its state: http.c */
	struct store_call *write_call;
	atomic_int write_state;
	cJSON *write_body; /* owned: the parsed body its answer still needs (a result's, for calibration) */

	/* the route's state between its handler's calls (a report's ticket),
	 * released by ROUTE_STATE_RELEASE, when set, once the request ends */
	void *route_state;
	void (*route_state_release)(void *state);

	/* long-poll */
	int calls; /* handler invocations so far */
	long long wait_deadline_ms;
	struct http_request *next_waiter;
};

struct http_reply {
	int status;
	cJSON *json;             /* owned; the body when set */
	char *text;              /* owned; the body when json is NULL */
	const void *static_data; /* borrowed; the body when both are NULL */
	size_t static_len;
	const char *content_type; /* default application/json */
	int retry_after;          /* seconds for a Retry-After header; 0: none */
	bool storage_full;        /* a write refused for a full disk (reply_from_err(), LL_ENOSPACE) */
	bool has_file;            /* the body is file_fd (owned, closed when sent) */
	int file_fd;
	long long file_size;
};

typedef int (*route_handler)(struct http_request *req, struct http_reply *reply);

/* A route whose body is handed over piece by piece instead of being read
 * into req->body (uploads; the table's streamed routes): max_body is then
 * not checked by http.c. */
struct route_stream {
	/* Once the headers are in and the caller is authorized, before any
	 * body byte. Filling REPLY refuses the request: the answer is sent at
	 * once and the body never read (the connection then closes). */
	int (*begin)(struct http_request *req, struct http_reply *reply);
	/* Each piece of the body, in order. A negative return with REPLY
	 * filled refuses the request: the rest of the body is read and
	 * dropped (up to HTTP_STREAM_DROP_MAX bytes, beyond which the
	 * connection is closed unanswered) and REPLY is sent once it ends.
	 * The route's handler is then not called. */
	int (*data)(struct http_request *req, const char *data, size_t size, struct http_reply *reply);
	/* When the request completes, however it ended: frees stream_state. */
	void (*release)(struct http_request *req);
};

/* Answers this large or larger are refused (503 busy) rather than held
 * past --answer-memory-bytes; smaller ones are always sent. */
#define HTTP_ANSWER_HELD_MIN ((size_t)64 << 10)

/* Bytes of a refused streamed body read and dropped before giving up. */
#define HTTP_STREAM_DROP_MAX ((long long)64 << 20)

struct route {
	const char *method;
	const char *pattern; /* "/api/v1/jobs/{id}/cancel" */
	enum auth_class auth;
	size_t max_body; /* 413 beyond this */
	route_handler handler;
};

/* A route whose body is streamed (route_stream), by its handler. */
struct route_streamed {
	route_handler handler;
	const struct route_stream *stream;
};

/* The routes a server answers: rest/route_table.c's, given to the HTTP
 * door in server->routes (the door names no handler). */
struct route_table {
	const struct route *routes;
	int count;
	const struct route_streamed *streamed;
	int streamed_count;
};

/* The route of TABLE matching METHOD and PATH (http_route.c). Returns the
 * index, or -1 with *RET_WRONG_METHOD set when the path exists for
 * another method. */
int route_table_match(const struct route_table *table, const char *method, const char *path,
		      long long *ret_id, bool *ret_wrong_method);
/* How ROUTE takes its body as a stream, or NULL: into req->body. */
const struct route_stream *route_table_stream(const struct route_table *table, const struct route *route);

/* Replaces every byte of TEXT that is not part of well-formed UTF-8 with
 * '?' (http_reply.c): a message may quote a query argument or be cut by
 * its buffer mid-character, and what the daemon sends must be valid JSON
 * (and its log lines valid UTF-8). */
void http_utf8_sanitize(char *text);

/* Retry-After of a 507 storage_full (reply_from_err()). */
#define HTTP_STORAGE_FULL_RETRY_AFTER_SECONDS 30

/* Reply helpers; each returns 0 so a handler can `return reply_...;`. */
int reply_json(struct http_reply *reply, int status, cJSON *body);
int reply_text(struct http_reply *reply, int status, const char *content_type, char *text);
int reply_error(struct http_reply *reply, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Maps an LL_E* code and this thread's err_message() to a status and body. */
int reply_from_err(struct http_reply *reply, int rc);

/* A query-string argument, or NULL. */
const char *http_query(struct http_request *req, const char *key);

/* Parses the body as a JSON object (an empty body is {} when
 * EMPTY_IS_OBJECT). On failure fills REPLY with the 400 and returns < 0. */
int http_body_object(struct http_request *req, struct http_reply *reply, bool empty_is_object,
		     cJSON **ret_root);

/* Takes one of the capacity's long-poll places for REQ, kept until the
 * request completes. False, counted and warned about, when all are taken:
 * the caller answers at once (204 with Retry-After) instead of parking. */
bool http_long_poll_begin(struct http_request *req);

/* The store_done_fn of a request's write (HTTP_SUSPEND_WRITE): resumes
 * REQ's connection once it is suspended. Any thread. */
void http_write_committed(void *req);

/* Wakes every parked long-poll (tasks may have become available). */
void http_waiters_wake_all(struct server *server);

/* Starts serving per SERVER->config; fills server->daemon and port. */
int http_start(struct server *server);
/* Stops accepting, wakes long-polls, waits for in-flight requests (up to
 * TIMEOUT_MS), then stops the daemon. */
void http_stop(struct server *server, long long timeout_ms);

#endif
