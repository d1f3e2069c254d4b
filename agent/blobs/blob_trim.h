/*
 * blob_trim.h - which cached blobs give way, as a pure function of the
 * cache's entries and its limits (the blob cache applies it,
 * blob_cache.h; tests/unit/agent/blobs/test_blob_trim.c is its table).
 *
 * The rule: the least recently used blob goes first (ties: the lower
 * index), never a pinned one (a file of the task at hand), one after the
 * other until all three hold: the cache holds at most CAP_BYTES, at most
 * MAX_ENTRIES blobs, and the disk has WANT_FREE_BYTES free, counting each
 * blob removed as its size given back. A blob with another name on the
 * disk (a hard link in a work folder) gives back nothing when it goes:
 * the caller measures the disk again and asks again.
 */
#ifndef LOADLAB_AGENT_BLOB_TRIM_H
#define LOADLAB_AGENT_BLOB_TRIM_H

#include <stdbool.h>
#include <stddef.h>

struct blob_trim_entry {
	long long size; /* bytes */
	long long used; /* the cache's use counter: lower is less recent */
	bool pinned;    /* never removed */
};

struct blob_trim_limits {
	long long cap_bytes;       /* most bytes the cache keeps */
	size_t max_entries;        /* most blobs the cache keeps */
	long long free_bytes;      /* free on the cache's disk now */
	long long want_free_bytes; /* free bytes to reach; 0: no such rule */
};

struct blob_trim_plan {
	size_t count;          /* entries to remove: ORDER[0..count) */
	long long freed_bytes; /* their sizes added up */
	bool enough;           /* whether the three limits hold once they are gone */
};

/* Fills ORDER (room for COUNT indexes) with the indexes of ENTRIES to
 * remove, in the order they go, and *RET_PLAN with how many and whether
 * that is enough; a plan that is not enough removes every entry that is
 * not pinned. LL_ENOMEM (nothing filled) when its scratch space cannot be
 * had. */
int blob_trim_plan(const struct blob_trim_entry *entries, size_t count, const struct blob_trim_limits *limits,
		   size_t *order, struct blob_trim_plan *ret_plan);

#endif
