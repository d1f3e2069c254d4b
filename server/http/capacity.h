/*
 * capacity.h - how many connections and parked long-polls loadlabd holds,
 * chosen from its settings and the open-files limit (docs/daemon.md, "Sizing").
 *
 * Every connection is one descriptor. Some descriptors are kept back for
 * everything else: the SQLite store and its -wal/-shm files, the log, the
 * listening socket, and each worker thread's epoll and wake-up descriptors.
 * Parked long-polls (POST /api/v1/lease with a wait) are capped below the
 * connection limit, so that /healthz, /metrics, job submission and results
 * always find a free connection; a lease beyond the cap is answered at once
 * (204 with Retry-After) instead of being parked.
 */
#ifndef LOADLAB_SERVER_CAPACITY_H
#define LOADLAB_SERVER_CAPACITY_H

#include "config.h"

#include <stdbool.h>

/* Descriptors kept back from connections: a base plus 4 per worker thread. */
#define CAPACITY_FD_RESERVE_BASE 64
/* The fewest connections loadlabd starts with. */
#define CAPACITY_MIN_CONNECTIONS 16
/* Connections kept back from long-polls: an eighth of the limit, at least this. */
#define CAPACITY_OTHER_RESERVE_MIN 8
/* Seconds a refused long-poll is told to wait (Retry-After). */
#define CAPACITY_RETRY_AFTER_SECONDS 5

struct capacity {
	long long nofile;         /* the open-files limit the plan fits */
	int connections;          /* libmicrohttpd's connection limit */
	int long_polls;           /* parked long-polls at most (< connections) */
	bool connections_lowered; /* --max-connections did not fit NOFILE */
	bool long_polls_lowered;  /* --max-long-polls left no reserve */
};

/* Raises the soft RLIMIT_NOFILE to the hard limit (as far as the kernel
 * allows). *RET_BEFORE and *RET_AFTER get the soft limit before and after
 * (-1 when unlimited). LL_EIO when the limit cannot be read; a refused
 * raise is not an error (*RET_AFTER == *RET_BEFORE). */
int capacity_raise_nofile(long long *ret_before, long long *ret_after);

/* Plans the limits for CONFIG under an open-files limit of NOFILE (< 0:
 * unlimited). connections = min(--max-connections, NOFILE - reserve);
 * long_polls = --max-long-polls (0: automatic) capped at connections less
 * max(connections / 8, CAPACITY_OTHER_RESERVE_MIN). LL_ERANGE with a
 * message when NOFILE leaves fewer than CAPACITY_MIN_CONNECTIONS. */
int capacity_plan(const struct config *config, long long nofile, struct capacity *ret_capacity);

#endif
