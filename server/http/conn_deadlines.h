/*
 * conn_deadlines.h - the deadlines of every open connection, enforced by
 * the HTTP sweeper (http.c) so that no client holds a connection, or what
 * its request holds (an upload's temporary file, descriptor and quota),
 * longer than the limits allow (docs/daemon.md, "Limits"):
 *
 * - headers: a request's headers are in within --header-timeout of the
 *   connection opening or of its previous answer;
 * - bodies: a body ends within --body-timeout of its headers, and after its
 *   first CONN_BODY_GRACE_MS it averages at least --body-min-rate bytes per
 *   second;
 * - abandoned bodies: a client that closed its side mid-body (the socket
 *   reads end-of-file) and sent nothing since the sweep before is cut at
 *   once. libmicrohttpd 0.9.75 does not always see that end-of-file (the
 *   connection then waits for --connection-timeout).
 *
 * A connection past a deadline is shut down (shutdown(2)): libmicrohttpd
 * then reads end-of-file and closes it in its own thread, which calls the
 * request's completion callback, which releases what it held.
 */
#ifndef LOADLAB_SERVER_CONN_DEADLINES_H
#define LOADLAB_SERVER_CONN_DEADLINES_H

#include <microhttpd.h>
#include <stdbool.h>

struct server;
struct http_conn;

/* Milliseconds of a body before --body-min-rate applies. */
#define CONN_BODY_GRACE_MS 5000

enum limit_warning { WARN_CONNECTIONS, WARN_LONG_POLLS, WARN_HEADERS, WARN_BODIES };

/* Logs EVENT (KEY=VALUE) as a warning that a limit bites, at most once per
 * 10 s per limit. */
void conn_warn_limit(struct server *server, enum limit_warning which, const char *event, const char *key,
		     long long value);

/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION callback (CLS: the server):
 * tracks every open connection in server->conns. */
void conn_deadlines_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
			   enum MHD_ConnectionNotificationCode code);

/* The tracking of CONNECTION, or NULL (out of memory at its start). */
struct http_conn *conn_of(struct MHD_Connection *connection);

/* CONN waits for a request's headers (WAITING), or has one being handled. */
void conn_wait_headers(struct server *server, struct http_conn *conn, bool waiting);

/* A body starts on CONN, SIZE more bytes of it came, it ended. NULL is fine. */
void conn_body_begin(struct http_conn *conn);
void conn_body_progress(struct http_conn *conn, long long size);
void conn_body_end(struct http_conn *conn);

/* Shuts down every connection past a deadline at NOW (ms), counting each
 * in /metrics. The sweeper's, every 500 ms. */
void conn_deadlines_sweep(struct server *server, long long now);

#endif
