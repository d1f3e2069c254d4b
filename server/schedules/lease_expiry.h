/*
 * lease_expiry.h - the lease-expiry tick: once a second the HTTP door's
 * sweeper thread (http.c) asks it to return the leases that were not
 * renewed in time to the queue (or mark their tasks dead: store.h's task
 * states), and whether the parked long-polls should look for work again.
 * Beside the scheduler's tick (scheduler.h), the other thing the daemon
 * does by the clock. On a store shared by several daemons, tasks queued
 * through another wake the long-polls at once (store_watch_tasks(),
 * http.c); this tick stays their fallback.
 */
#ifndef LOADLAB_SERVER_LEASE_EXPIRY_H
#define LOADLAB_SERVER_LEASE_EXPIRY_H

#include "store/store.h"

#include <stdbool.h>

/* How often the sweeper calls lease_expiry_tick(). */
#define LEASE_EXPIRY_TICK_MS 1000

/* Expires STORE's leases past their deadline at NOW (store_expire_leases()),
 * *RET_EXPIRED how many (0 when the store failed). True when long-polls
 * should look again: leases expired, or, when ANYONE_WAITING, tasks are
 * ready (a backoff ended). */
bool lease_expiry_tick(struct store *store, long long now, bool anyone_waiting, int *ret_expired);

#endif
