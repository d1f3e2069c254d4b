/*
 * blob_cache.h - the agent's content-addressed cache of the program
 * family's files (blobs), kept in DATA_DIR/blobs:
 *
 *	HEX          one blob, named by its SHA-256 (64 lowercase hex digits)
 *	HEX.part     a download in progress (removed when found at open)
 *	index.json   {"seq": N, "blobs": {HEX: {"size": BYTES, "used": SEQ}}}
 *
 * A blob is hashed again before every use (a file that no longer matches
 * its name is removed and fetched again), only the blobs the cache lacks
 * are fetched, and past its size cap the least recently used blobs are
 * removed (never the one just asked for). "used" is a counter, not a
 * clock: the order survives a clock that jumps. One process uses a cache
 * folder at a time (the agent owns its data folder).
 */
#ifndef LOADLAB_AGENT_BLOB_CACHE_H
#define LOADLAB_AGENT_BLOB_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "loadlab/plat.h"

/* The cap when the caller names none: 2 GiB. */
#define BLOB_CACHE_DEFAULT_BYTES (2048ll * 1024 * 1024)
/* Most blobs the index holds; older ones beyond it are evicted. */
#define BLOB_CACHE_MAX_ENTRIES 100000

/* Puts the blob SHA256_HEX at DEST_PATH (a file it may create or replace)
 * or returns a negative LL_E* code with a message. */
typedef int (*blob_fetch_fn)(void *context, const char *sha256_hex, const char *dest_path);

struct blob_cache_stats {
	size_t hits;    /* blobs found in the cache, hash verified */
	size_t fetched; /* blobs downloaded */
	long long bytes_fetched;
	size_t evicted; /* blobs removed to stay under the cap */
	size_t corrupt; /* cached blobs whose hash no longer matched */
};

struct blob_cache_entry;

struct blob_cache {
	char dir[PLAT_MAX_PATH];
	long long cap_bytes;
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

/* Puts the blob SHA256_HEX (64 lowercase hex digits, else LL_EINVAL) at
 * DEST_PATH as a hard link to the cached file where the file system allows
 * it, else a copy (plat_link_file()): a blob named under many paths takes
 * its space once. The caller replaces DEST_PATH rather than writing it in
 * place (a change in place would reach the cache, whose hash check before
 * every use would then throw it away). From the cache when it holds the blob and its hash still
 * matches; else FETCH(CONTEXT, HEX, a temporary path in the cache) fills
 * it, its hash is checked (LL_EFORMAT, nothing kept, when it differs)
 * and it is renamed into place. Then marks it most recently used, evicts
 * past the cap and saves the index. Sets *RET_FETCHED (may be NULL) to
 * whether it was downloaded. */
int blob_cache_get(struct blob_cache *cache, const char *sha256_hex, blob_fetch_fn fetch, void *context,
		   const char *dest_path, bool *ret_fetched);

/* The bytes the cache holds by its index. */
long long blob_cache_bytes(const struct blob_cache *cache);

#endif
