/*
 * store_stats.h - the store's figures counted over the statement layer
 * (store_stats.c), for store.c's store_stats(); the backend's own figures
 * (size, commits) come from its handle (store_backend.h).
 */
#ifndef LOADLAB_SERVER_STORE_STATS_H
#define LOADLAB_SERVER_STORE_STATS_H

#include "store/store.h"

/* Counts into *ST (zeroed by the caller) the tasks and jobs by state
 * (tasks_ready: queued and due at NOW), the agents online, offline and
 * quarantined, the results and the alerts waiting for their webhook, in
 * one snapshot; 0 or the store's failure. */
int store_stats_count(struct store *s, long long now, struct store_stats *st);

#endif
