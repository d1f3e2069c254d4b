/*
 * pg_watch.c - the PostgreSQL backend's task watch (store.h,
 * store_watch_tasks()): several daemons share one database, and a
 * long-poll parked on one must hear of tasks queued through another.
 *
 * Every write that makes tasks leasable now (a job submitted, leases
 * expired back to the queue, a build done that frees its cells, an
 * agent's labels or quarantine changed) runs pq_notify_tasks(): NOTIFY
 * loadlab_tasks with this daemon's token as the payload, delivered by
 * PostgreSQL at the commit, once per transaction however many rows it
 * changed (identical notifications of one transaction are folded).
 *
 * Each daemon keeps ONE connection outside the pool that LISTENs on the
 * channel, on a thread of its own that sleeps in poll() on its socket
 * (PQsocket, PQconsumeInput, PQnotifies). A notification from another
 * daemon's token calls the watcher's FN (STORE_WATCH_TASKS); one of its
 * own is dropped, as the write's caller woke its waiters already. When
 * the connection is lost (a PostgreSQL restart) the thread connects
 * again with the pool's backoff (PG_BACKOFF_MIN_MS doubling to
 * PG_BACKOFF_MAX_MS), LISTENs again and calls FN once with
 * STORE_WATCH_RECONNECTED: notifications sent meanwhile are lost. The
 * daemon's once-a-second lease-expiry tick stays the fallback.
 *
 * The same connection LISTENs on loadlab_tokens (store_tokens.c): each
 * notification there, and each reconnection, forgets the remembered
 * tokens.
 */
#include "pg_int.h"
#include "store/store_token_cache.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void pg_watch_init(struct store *s)
{
	struct pg_watch *w = &s->watch;

	pthread_mutex_init(&w->lock, NULL);
	w->stop_pipe[0] = w->stop_pipe[1] = -1;
	snprintf(w->token, sizeof(w->token), "%ld.%lld.%p", (long)getpid(), clock_now_ms(), (void *)s);
}

int pq_notify_tasks(struct store *s)
{
	char sql[128];

	/* The token is digits, dots, "0x" and hex: nothing to quote. */
	snprintf(sql, sizeof(sql), "NOTIFY " PG_TASKS_CHANNEL ", '%s'", s->watch.token);
	return pq_exec(pq_writer(), sql);
}

/* Connects and LISTENs; NULL (logged) when either fails. Its notices go
 * to the log as the pool's do (pg_pool_connect(), pg_notices_to_log()). */
static PGconn *listen_connect(struct store *s)
{
	PGconn *conn = pg_pool_connect(&s->pool);

	if (conn && pq_exec(conn, "LISTEN " PG_TASKS_CHANNEL "; LISTEN " PG_TOKENS_CHANNEL) < 0) {
		PQfinish(conn);
		conn = NULL;
	}
	return conn;
}

/* Reads what CONN has; false when the connection is lost. *RET_NEWS
 * whether another daemon's notification came. */
static bool read_notifications(struct store *s, PGconn *conn, bool *ret_news)
{
	PGnotify *n;

	if (!PQconsumeInput(conn) || PQstatus(conn) != CONNECTION_OK)
		return false;
	while ((n = PQnotifies(conn))) {
		if (strcmp(n->relname, PG_TOKENS_CHANNEL) == 0)
			token_cache_forget(s->base.token_cache); /* a token changed (store_tokens.c) */
		else if (strcmp(n->extra, s->watch.token) != 0)
			*ret_news = true;
		PQfreemem(n);
	}
	return true;
}

static void *watch_main(void *arg)
{
	struct store *s = arg;
	struct pg_watch *w = &s->watch;
	long long backoff = PG_BACKOFF_MIN_MS, retry_at = 0;
	bool missed = false; /* a connection lost or not made: tell FN when back */
	PGconn *conn = NULL;

	for (;;) {
		struct pollfd fds[2] = {{w->stop_pipe[0], POLLIN, 0}, {-1, POLLIN, 0}};
		long long now = clock_now_ms();
		int timeout = -1;
		bool news = false;

		if (!conn && now >= retry_at) {
			if ((conn = listen_connect(s))) {
				backoff = PG_BACKOFF_MIN_MS;
				if (missed) {
					token_cache_forget(
						s->base.token_cache); /* revocations may be missed */
					log_event(LOG_INFO, "store_watch_reconnected", "channel",
						  PG_TASKS_CHANNEL, NULL);
					w->fn(w->arg, STORE_WATCH_RECONNECTED);
				}
				missed = false;
			} else {
				missed = true;
				retry_at = now + backoff;
				backoff = pg_backoff_next(backoff);
			}
		}
		if (conn)
			fds[1].fd = PQsocket(conn);
		else
			timeout = (int)(retry_at > now ? retry_at - now : 0);
		if (poll(fds, 2, timeout) < 0 && errno != EINTR)
			usleep(100 * 1000);
		if (fds[0].revents)
			break;
		if (!conn || !fds[1].revents)
			continue;
		if (!read_notifications(s, conn, &news)) {
			log_event(LOG_WARN, "store_watch_lost", "channel", PG_TASKS_CHANNEL, "postgresql",
				  PQerrorMessage(conn), NULL);
			PQfinish(conn);
			conn = NULL;
			missed = true;
			retry_at = clock_now_ms() + backoff;
			continue;
		}
		if (news)
			w->fn(w->arg, STORE_WATCH_TASKS);
	}
	PQfinish(conn);
	return NULL;
}

/* Stops W's thread, if running (W's lock held). */
static void stop_locked(struct pg_watch *w)
{
	if (!w->running)
		return;
	while (write(w->stop_pipe[1], "x", 1) < 0 && errno == EINTR)
		;
	pthread_join(w->thread, NULL);
	close(w->stop_pipe[0]);
	close(w->stop_pipe[1]);
	w->stop_pipe[0] = w->stop_pipe[1] = -1;
	w->running = false;
	w->fn = NULL;
	w->arg = NULL;
}

int pg_watch_tasks(struct store *s, store_watch_fn fn, void *arg)
{
	struct pg_watch *w = &s->watch;
	int rc = 0;

	pthread_mutex_lock(&w->lock);
	stop_locked(w);
	if (fn) {
		w->fn = fn;
		w->arg = arg;
		if (pipe(w->stop_pipe) < 0) {
			rc = err_set(LL_EIO, "Cannot make the task watch's pipe: %s.", strerror(errno));
		} else if (pthread_create(&w->thread, NULL, watch_main, s) != 0) {
			close(w->stop_pipe[0]);
			close(w->stop_pipe[1]);
			w->stop_pipe[0] = w->stop_pipe[1] = -1;
			rc = err_set(LL_EIO, "Cannot start the task watch's thread.");
		} else {
			fcntl(w->stop_pipe[0], F_SETFD, FD_CLOEXEC);
			fcntl(w->stop_pipe[1], F_SETFD, FD_CLOEXEC);
			w->running = true;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}

void pg_watch_stop(struct store *s)
{
	pthread_mutex_lock(&s->watch.lock);
	stop_locked(&s->watch);
	pthread_mutex_unlock(&s->watch.lock);
	pthread_mutex_destroy(&s->watch.lock);
}
