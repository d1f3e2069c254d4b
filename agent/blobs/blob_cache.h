/*
 * blob_cache.h - the agent's content-addressed cache of the program
 * family's files (blobs), kept in DATA_DIR/blobs:
 *
 *	HEX          one blob, named by its SHA-256 (64 lowercase hex digits)
 *	HEX.part     a download in progress (removed when found at open)
 *	index.json   {"seq": N, "blobs": {HEX: {"size": BYTES, "used": SEQ}}}
 *
 * A blob is hashed again before every use (a file that no longer matches
 * its name is removed and fetched again) and only the blobs the cache
 * lacks are fetched. "used" is a counter, not a clock: the order survives
 * a clock that jumps. One process uses a cache folder at a time (the agent
 * owns its data folder).
 *
 * What gives way (docs/agent.md, "Disk"; the rule itself is
 * blob_trim_plan()): the least recently used blobs, never a pinned one,
 * past the size cap and, when the caller set a room rule
 * (blob_cache_set_room()), while the disk has less free than the rule
 * keeps (after what the rule's reclaim() gives up). Pinned are the files of the task at hand: every blob
 * blob_cache_get() returned since the open, and those the caller pinned
 * (blob_cache_pin_named()). So a task's own files may take the cache past
 * its cap while it runs, never the disk below the free space kept: a
 * download is limited to what is left above it, and when no blob may go
 * and nothing else can be reclaimed the task's files do not fit
 * (LL_ENOSPACE).
 */
#ifndef LOADLAB_AGENT_BLOB_CACHE_H
#define LOADLAB_AGENT_BLOB_CACHE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "loadlab/plat.h"

/* The cap when the caller names none: 2 GiB. */
#define BLOB_CACHE_DEFAULT_BYTES (2048ll * 1024 * 1024)
/* Most blobs the index holds; older ones beyond it are evicted. */
#define BLOB_CACHE_MAX_ENTRIES 100000

/* Puts the blob SHA256_HEX at DEST_PATH (a file it may create or replace),
 * at most LIMIT bytes of it: a larger blob is LL_ETOOBIG (the cache then
 * makes more room, or says the blob does not fit). Else a negative LL_E*
 * code with a message. */
typedef int (*blob_fetch_fn)(void *context, const char *sha256_hex, const char *dest_path, long long limit);

/* The free space the cache keeps on its disk (blob_cache_set_room()). */
struct blob_cache_room {
	long long keep_free_bytes; /* 0: no such rule (the cap alone) */
	/* Called when no blob may go and the disk still has too little free:
	 * removes one thing of the caller's that may go (the fleet: its
	 * oldest failed work folder) and returns true, or false when nothing
	 * is left. May be NULL. */
	bool (*reclaim)(void *context);
	void *reclaim_context;
};

struct blob_cache_stats {
	size_t hits;    /* blobs found in the cache, hash verified */
	size_t fetched; /* blobs downloaded */
	long long bytes_fetched;
	size_t evicted; /* blobs removed for the cap or the free space kept */
	size_t corrupt; /* cached blobs whose hash no longer matched */
};

struct blob_cache_entry;

struct blob_cache {
	char dir[PLAT_MAX_PATH];
	long long cap_bytes;
	struct blob_cache_room room;
	long long seq; /* the last "used" given */
	struct blob_cache_entry *entries;
	size_t count, capacity;
	struct blob_cache_stats stats; /* since blob_cache_open() */
};

/* Opens (creating it) the cache in DIR with a cap of CAP_BYTES (0:
 * BLOB_CACHE_DEFAULT_BYTES): reads index.json (a missing or unreadable one
 * is rebuilt from the folder), removes leftover downloads and forgets
 * entries whose file is gone. Needs blob_cache_close(). */
int blob_cache_open(struct blob_cache *cache, const char *dir, long long cap_bytes);

/* Frees what blob_cache_open() made (the folder stays). */
void blob_cache_close(struct blob_cache *cache);

/* Keeps ROOM (copied; NULL: no rule) from now on. */
void blob_cache_set_room(struct blob_cache *cache, const struct blob_cache_room *room);

/* Pins every cached blob that ITEM (a lease, a job, a build; may be NULL)
 * names anywhere within it, as a string "sha256:HEX" (a program's
 * manifest) or a member "sha256": "HEX" (a shared build's files): they
 * stay until blob_cache_close(). Names of blobs not cached are ignored. */
void blob_cache_pin_named(struct blob_cache *cache, const cJSON *item);

/* Makes room: the blobs past the cap go (unpinned, least recently used
 * first); then, while the disk has fewer than the room rule's
 * keep_free_bytes + NEED_BYTES free, what the rule's reclaim() gives up,
 * then more blobs. 0 when the disk then has that much free (or there is
 * no room rule); LL_ENOSPACE (a message with the figures) when not;
 * another code when the free space cannot be read. *RET_FREE (may be
 * NULL) gets the free bytes after (0 without a room rule). */
int blob_cache_make_room(struct blob_cache *cache, long long need_bytes, long long *ret_free);

/* Puts the blob SHA256_HEX (64 lowercase hex digits, else LL_EINVAL) at
 * DEST_PATH as a hard link to the cached file where the file system allows
 * it, else a copy (plat_link_file()): a blob named under many paths takes
 * its space once. The caller replaces DEST_PATH rather than writing it in
 * place (a change in place would reach the cache, whose hash check before
 * every use would then throw it away). From the cache when it holds the blob and its hash still
 * matches; else FETCH(CONTEXT, HEX, a temporary path in the cache) fills
 * it, its hash is checked (LL_EFORMAT, nothing kept, when it differs)
 * and it is renamed into place; before, blob_cache_make_room() and a
 * limit of the bytes left above the free space kept (at most the cap):
 * LL_ENOSPACE, naming the sizes, when the blob is larger than the cap or
 * than all the room the disk can give it. Then marks it most recently
 * used and pinned, trims past the cap and saves the index. Sets
 * *RET_FETCHED (may be NULL) to whether it was downloaded. */
int blob_cache_get(struct blob_cache *cache, const char *sha256_hex, blob_fetch_fn fetch, void *context,
		   const char *dest_path, bool *ret_fetched);

/* The bytes the cache holds by its index (all of them, or the pinned ones). */
long long blob_cache_bytes(const struct blob_cache *cache);
long long blob_cache_pinned_bytes(const struct blob_cache *cache);

#endif
