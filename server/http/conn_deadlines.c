/* conn_deadlines.c - header and body deadlines of open connections
 * (conn_deadlines.h). */
#include "conn_deadlines.h"

#include "server.h"

#include "loadlab/clock.h"
#include "loadlab/log.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

/* One open connection: libmicrohttpd's socket context. */
struct http_conn {
	struct http_conn *prev, *next;
	int fd;
	atomic_llong header_deadline_ms; /* 0: a request is being handled */
	atomic_llong body_started_ms;    /* 0: no body being received */
	atomic_llong body_bytes;         /* of the body being received */
	atomic_llong swept_bytes;        /* body_bytes at the sweep before; -1: none yet */
};

void conn_warn_limit(struct server *server, enum limit_warning which, const char *event, const char *key,
		     long long value)
{
	long long now = clock_now_ms(), next = atomic_load(&server->next_warning_ms[which]);
	char text[24];

	if (now < next ||
	    !atomic_compare_exchange_strong(&server->next_warning_ms[which], &next, now + 10000))
		return;
	snprintf(text, sizeof(text), "%lld", value);
	log_event(LOG_WARN, event, key, text, NULL);
}

void conn_deadlines_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
			   enum MHD_ConnectionNotificationCode code)
{
	struct server *server = cls;
	struct http_conn *conn = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *info =
			MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
		long open = atomic_fetch_add(&server->connections_open, 1) + 1;
		conn = calloc(1, sizeof(*conn));
		if (conn) {
			conn->fd = info ? info->connect_fd : -1;
			atomic_store(&conn->header_deadline_ms,
				     clock_now_ms() + server->config.header_timeout * 1000LL);
			pthread_mutex_lock(&server->conns_lock);
			conn->next = server->conns;
			if (server->conns)
				server->conns->prev = conn;
			server->conns = conn;
			pthread_mutex_unlock(&server->conns_lock);
		}
		*socket_context = conn;
		if (open >= server->capacity.connections) {
			metrics_add(&server->metrics.connection_limit_hits, 1);
			conn_warn_limit(server, WARN_CONNECTIONS, "connection_limit_reached", "limit",
					server->capacity.connections);
		}
		return;
	}
	atomic_fetch_sub(&server->connections_open, 1);
	if (!conn)
		return;
	/* libmicrohttpd closes the socket after this callback: removing the
	 * entry under the lock keeps the sweep from touching a closed (or
	 * reused) descriptor. */
	pthread_mutex_lock(&server->conns_lock);
	if (conn->prev)
		conn->prev->next = conn->next;
	else
		server->conns = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	pthread_mutex_unlock(&server->conns_lock);
	free(conn);
	*socket_context = NULL;
}

struct http_conn *conn_of(struct MHD_Connection *connection)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

void conn_wait_headers(struct server *server, struct http_conn *conn, bool waiting)
{
	if (conn)
		atomic_store(&conn->header_deadline_ms,
			     waiting ? clock_now_ms() + server->config.header_timeout * 1000LL : 0);
}

void conn_body_begin(struct http_conn *conn)
{
	if (!conn)
		return;
	atomic_store(&conn->body_bytes, 0);
	atomic_store(&conn->swept_bytes, -1);
	atomic_store(&conn->body_started_ms, clock_now_ms());
}

void conn_body_progress(struct http_conn *conn, long long size)
{
	if (conn)
		atomic_fetch_add(&conn->body_bytes, size);
}

void conn_body_end(struct http_conn *conn)
{
	if (conn)
		atomic_store(&conn->body_started_ms, 0);
}

/* True when the peer of FD has closed its side (or the socket failed). */
static bool peer_closed(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

enum cut { CUT_NONE, CUT_HEADERS, CUT_BODY_TIME, CUT_ABANDONED };

/* Whether CONN is past one of its deadlines at NOW. */
static enum cut check(const struct config *c, struct http_conn *conn, long long now)
{
	long long header_deadline = atomic_load(&conn->header_deadline_ms);
	long long started = atomic_load(&conn->body_started_ms), bytes, elapsed;
	bool stalled;

	if (header_deadline && header_deadline <= now)
		return CUT_HEADERS;
	if (!started)
		return CUT_NONE;
	bytes = atomic_load(&conn->body_bytes);
	elapsed = now - started;
	stalled = atomic_exchange(&conn->swept_bytes, bytes) == bytes;
	if (elapsed > c->body_timeout * 1000LL ||
	    (elapsed > CONN_BODY_GRACE_MS &&
	     bytes * 1000 < c->body_min_rate * (elapsed - CONN_BODY_GRACE_MS)))
		return CUT_BODY_TIME;
	return stalled && peer_closed(conn->fd) ? CUT_ABANDONED : CUT_NONE;
}

void conn_deadlines_sweep(struct server *server, long long now)
{
	long long cut[4] = {0};

	pthread_mutex_lock(&server->conns_lock);
	for (struct http_conn *conn = server->conns; conn; conn = conn->next) {
		enum cut why = conn->fd >= 0 ? check(&server->config, conn, now) : CUT_NONE;
		if (why == CUT_NONE)
			continue;
		atomic_store(&conn->header_deadline_ms, 0);
		atomic_store(&conn->body_started_ms, 0);
		shutdown(conn->fd, SHUT_RDWR);
		cut[why]++;
	}
	pthread_mutex_unlock(&server->conns_lock);
	if (cut[CUT_HEADERS]) {
		metrics_add(&server->metrics.header_timeouts, cut[CUT_HEADERS]);
		conn_warn_limit(server, WARN_HEADERS, "header_timeout", "closed", cut[CUT_HEADERS]);
	}
	if (cut[CUT_BODY_TIME]) {
		metrics_add(&server->metrics.body_timeouts, cut[CUT_BODY_TIME]);
		conn_warn_limit(server, WARN_BODIES, "body_timeout", "closed", cut[CUT_BODY_TIME]);
	}
	if (cut[CUT_ABANDONED])
		metrics_add(&server->metrics.bodies_abandoned, cut[CUT_ABANDONED]);
}
