/*
 * maintenance.h - the store's housekeeping (docs/operations.md,
 * "Bounded growth"): each series' retention of raw samples, then a
 * compaction that returns the freed pages to the file system. Run by
 * the scheduler's ticker once every MAINTENANCE_PERIOD_MS (the first an
 * hour after start) and on demand by POST /api/v1/admin/compact.
 */
#ifndef LOADLAB_SERVER_SCHEDULES_MAINTENANCE_H
#define LOADLAB_SERVER_SCHEDULES_MAINTENANCE_H

#include "store/store.h"

/* How often the ticker runs maintenance_run(). */
#define MAINTENANCE_PERIOD_MS (3600 * 1000LL)
/* Results pruned per store write: a pass holds the writer this long at most. */
#define MAINTENANCE_PRUNE_BATCH 200

struct maintenance_outcome {
	long long pruned_results;
	long long bytes_before, bytes_after; /* the store's file around the compaction */
};

/* Applies every series' retention at NOW (batch after batch until none
 * is left), then compacts (FULL: store_compact()'s full compaction). */
int maintenance_run(struct store *store, long long now, bool full, struct maintenance_outcome *ret_outcome);

#endif
