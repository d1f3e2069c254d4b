/*
 * blob_cache.c - the content-addressed blob cache (blob_cache.h): an index
 * kept in memory and saved as index.json after every change, the blobs
 * beside it, each verified by its hash before use.
 */
#include "blobs/blob_cache.h"
#include "blobs/blob_trim.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"

/* Largest index.json read back. */
#define BLOB_CACHE_MAX_INDEX (32u * 1024u * 1024u)
/* A download cut at the room left asks next for twice that and this. */
#define BLOB_CACHE_ROOM_STEP (1ll << 20)
/* "used" of an entry about to be removed (a real one is >= 0). */
#define DOOMED (-1)

struct blob_cache_entry {
	char hex[65];
	long long size;
	long long used;
	bool pinned; /* a file of the task at hand: never removed */
};

static bool hex_valid(const char *hex)
{
	size_t n = 0;

	for (; hex[n]; n++)
		if (!((hex[n] >= '0' && hex[n] <= '9') || (hex[n] >= 'a' && hex[n] <= 'f')))
			return false;
	return n == 64;
}

static int path_of(const struct blob_cache *cache, const char *name, char out[PLAT_MAX_PATH + 1])
{
	return plat_path_join(out, PLAT_MAX_PATH + 1, cache->dir, name);
}

static struct blob_cache_entry *find(struct blob_cache *cache, const char *hex)
{
	for (size_t i = 0; i < cache->count; i++)
		if (strcmp(cache->entries[i].hex, hex) == 0)
			return &cache->entries[i];
	return NULL;
}

static void forget(struct blob_cache *cache, struct blob_cache_entry *e)
{
	size_t i = (size_t)(e - cache->entries);

	cache->entries[i] = cache->entries[--cache->count];
}

/* Adds HEX (or updates it) with SIZE, marked used now. */
static int remember(struct blob_cache *cache, const char *hex, long long size, long long used)
{
	struct blob_cache_entry *e = find(cache, hex);

	if (!e) {
		if (cache->count == cache->capacity) {
			size_t capacity = cache->capacity ? 2 * cache->capacity : 64;
			struct blob_cache_entry *more = realloc(cache->entries, capacity * sizeof(*more));
			if (!more)
				return LL_ENOMEM;
			cache->entries = more;
			cache->capacity = capacity;
		}
		e = &cache->entries[cache->count++];
		memcpy(e->hex, hex, 65);
		e->pinned = false;
	}
	e->size = size;
	e->used = used;
	return 0;
}

static int save_index(const struct blob_cache *cache)
{
	cJSON *root = cJSON_CreateObject(), *blobs;
	char path[PLAT_MAX_PATH + 1];
	int rc = LL_ENOMEM;

	if (!root || !cJSON_AddNumberToObject(root, "seq", (double)cache->seq) ||
	    !(blobs = cJSON_AddObjectToObject(root, "blobs")))
		goto out;
	for (size_t i = 0; i < cache->count; i++) {
		cJSON *o = cJSON_AddObjectToObject(blobs, cache->entries[i].hex);
		if (!o || !cJSON_AddNumberToObject(o, "size", (double)cache->entries[i].size) ||
		    !cJSON_AddNumberToObject(o, "used", (double)cache->entries[i].used))
			goto out;
	}
	if ((rc = path_of(cache, "index.json", path)) == 0)
		rc = json_write_file_atomic(path, root, false, false);
out:
	cJSON_Delete(root);
	return rc;
}

/* The index as saved; entries are checked (name, numbers) one by one. */
static void load_index(struct blob_cache *cache)
{
	char path[PLAT_MAX_PATH + 1], *text = NULL;
	const cJSON *blobs, *b;
	cJSON *root = NULL;
	size_t len = 0;
	long long seq;

	if (path_of(cache, "index.json", path) < 0 || !plat_file_exists(path) ||
	    plat_read_file(path, BLOB_CACHE_MAX_INDEX, &text, &len) < 0 ||
	    json_parse_object(text, len, 8, &root) < 0)
		goto out;
	if (json_get_int(root, "seq", 0, 1LL << 52, true, 0, &seq) == 0)
		cache->seq = seq;
	blobs = cJSON_GetObjectItemCaseSensitive(root, "blobs");
	cJSON_ArrayForEach(b, blobs) {
		long long size, used;
		if (!b->string || !hex_valid(b->string) || cache->count >= BLOB_CACHE_MAX_ENTRIES ||
		    json_get_int(b, "size", 0, 1LL << 52, true, 0, &size) < 0 ||
		    json_get_int(b, "used", 0, 1LL << 52, true, 0, &used) < 0 ||
		    remember(cache, b->string, size, used) < 0)
			continue;
	}
out:
	err_clear();
	cJSON_Delete(root);
	free(text);
}

/* The folder's files: leftovers removed, unknown blobs adopted as least
 * recently used (their hash is checked when they are used). */
static int adopt(void *context, const char *name)
{
	struct blob_cache *cache = context;
	char path[PLAT_MAX_PATH + 1];

	if (strcmp(name, "index.json") == 0 || path_of(cache, name, path) < 0)
		return 0;
	if (strlen(name) == 64 + 5 && strcmp(name + 64, ".part") == 0) {
		plat_remove_file(path);
		return 0;
	}
	if (hex_valid(name) && !find(cache, name)) {
		char hex[65];
		long long size = 0;
		if (plat_file_sha256(path, hex, &size) == 0)
			remember(cache, name, size, 0);
	}
	return 0;
}

int blob_cache_open(struct blob_cache *cache, const char *dir, long long cap_bytes)
{
	int rc;

	memset(cache, 0, sizeof(*cache));
	if (strlen(dir) >= sizeof(cache->dir) - 80)
		return err_set(LL_ETOOBIG, "The blob cache's path %s is too long.", dir);
	memcpy(cache->dir, dir, strlen(dir) + 1);
	cache->cap_bytes = cap_bytes > 0 ? cap_bytes : BLOB_CACHE_DEFAULT_BYTES;
	if ((rc = plat_mkdirs(dir)) < 0)
		return rc;
	load_index(cache);
	/* Entries whose file is gone are forgotten. */
	for (size_t i = 0; i < cache->count;) {
		char path[PLAT_MAX_PATH + 1];
		if (path_of(cache, cache->entries[i].hex, path) < 0 || !plat_file_exists(path))
			forget(cache, &cache->entries[i]);
		else
			i++;
	}
	plat_list_dir(dir, adopt, cache);
	return 0;
}

void blob_cache_close(struct blob_cache *cache)
{
	free(cache->entries);
	memset(cache, 0, sizeof(*cache));
}

long long blob_cache_bytes(const struct blob_cache *cache)
{
	long long total = 0;

	for (size_t i = 0; i < cache->count; i++)
		total += cache->entries[i].size;
	return total;
}

long long blob_cache_pinned_bytes(const struct blob_cache *cache)
{
	long long total = 0;

	for (size_t i = 0; i < cache->count; i++)
		total += cache->entries[i].pinned ? cache->entries[i].size : 0;
	return total;
}

void blob_cache_set_room(struct blob_cache *cache, const struct blob_cache_room *room)
{
	static const struct blob_cache_room none = {0, NULL, NULL};

	cache->room = room ? *room : none;
}

void blob_cache_pin_named(struct blob_cache *cache, const cJSON *item)
{
	const cJSON *child;
	const char *hex = NULL;

	if (cJSON_IsString(item) && strncmp(item->valuestring, "sha256:", 7) == 0)
		hex = item->valuestring + 7;
	else if (cJSON_IsString(item) && item->string && strcmp(item->string, "sha256") == 0)
		hex = item->valuestring;
	if (hex && hex_valid(hex) && find(cache, hex))
		find(cache, hex)->pinned = true;
	cJSON_ArrayForEach(child, item)
		blob_cache_pin_named(cache, child);
}

/* Removes the entries ORDER names (N of them) and their files. */
static void remove_entries(struct blob_cache *cache, const size_t *order, size_t n, const char *why)
{
	size_t kept = 0;

	for (size_t k = 0; k < n; k++) {
		struct blob_cache_entry *e = &cache->entries[order[k]];
		char path[PLAT_MAX_PATH + 1];
		if (path_of(cache, e->hex, path) == 0)
			plat_remove_file(path);
		log_event(LOG_INFO, "blob_evicted", "sha256", e->hex, "reason", why, NULL);
		e->used = DOOMED;
		cache->stats.evicted++;
	}
	for (size_t i = 0; i < cache->count; i++)
		if (cache->entries[i].used != DOOMED)
			cache->entries[kept++] = cache->entries[i];
	cache->count = kept;
	err_clear();
}

/* Applies blob_trim_plan() until the cache is within its cap and count
 * and, when WANT_FREE > 0, the disk has that many bytes free or no blob
 * may go; *RET_FREE gets the free bytes then (0 when WANT_FREE is 0). The
 * disk is measured again after each pass: a blob with another name (a
 * link in a work folder) gives back nothing when it goes. */
static int trim(struct blob_cache *cache, long long want_free, long long *ret_free)
{
	struct blob_trim_entry *entries = NULL;
	size_t *order = NULL;
	long long free_bytes = 0;
	int rc = 0;

	*ret_free = 0;
	if (want_free <= 0 && cache->count <= BLOB_CACHE_MAX_ENTRIES &&
	    blob_cache_bytes(cache) <= cache->cap_bytes)
		return 0; /* the usual case after a get: nothing to plan */
	for (;;) {
		struct blob_trim_limits limits = {cache->cap_bytes, BLOB_CACHE_MAX_ENTRIES, 0, want_free};
		struct blob_trim_plan plan;
		if (want_free > 0 && (rc = plat_free_bytes(cache->dir, &free_bytes)) < 0)
			break;
		limits.free_bytes = free_bytes;
		free(entries);
		free(order);
		entries = malloc((cache->count ? cache->count : 1) * sizeof(*entries));
		order = malloc((cache->count ? cache->count : 1) * sizeof(*order));
		if (!entries || !order) {
			rc = err_set(LL_ENOMEM, "Out of memory.");
			break;
		}
		for (size_t i = 0; i < cache->count; i++)
			entries[i] = (struct blob_trim_entry){cache->entries[i].size, cache->entries[i].used,
							      cache->entries[i].pinned};
		if ((rc = blob_trim_plan(entries, cache->count, &limits, order, &plan)) < 0 ||
		    plan.count == 0)
			break;
		remove_entries(cache, order, plan.count,
			       want_free > 0 ? "the cache's cap or the disk's free space kept"
					     : "the cache's cap");
		if (want_free <= 0)
			break; /* the cap and count: counted exactly */
	}
	free(entries);
	free(order);
	*ret_free = free_bytes;
	return rc;
}

int blob_cache_make_room(struct blob_cache *cache, long long need_bytes, long long *ret_free)
{
	long long keep = cache->room.keep_free_bytes;
	long long want = keep > 0 ? keep + (need_bytes > 0 ? need_bytes : 0) : 0;
	long long free_bytes = 0;
	size_t evicted = cache->stats.evicted;
	int rc;

	/* The cap first; then what the caller gives up (failed work folders,
	 * kept only while nothing needs their space); then the blobs. */
	if ((rc = trim(cache, 0, &free_bytes)) < 0)
		return rc;
	while (want > 0) {
		if ((rc = plat_free_bytes(cache->dir, &free_bytes)) < 0)
			return rc;
		if (free_bytes >= want || !cache->room.reclaim ||
		    !cache->room.reclaim(cache->room.reclaim_context))
			break;
	}
	if (want > 0 && free_bytes < want && (rc = trim(cache, want, &free_bytes)) < 0)
		return rc;
	if (cache->stats.evicted != evicted && save_index(cache) < 0)
		err_clear(); /* rebuilt from the folder at the next open */
	if (ret_free)
		*ret_free = free_bytes;
	if (free_bytes < want)
		return err_set(LL_ENOSPACE,
			       "The disk of the blob cache %s has %lld bytes free, fewer than the %lld "
			       "needed (%lld kept free and %lld more), with %lld bytes of the task's own "
			       "blobs kept and nothing else left to remove.",
			       cache->dir, free_bytes, want, keep, want - keep,
			       blob_cache_pinned_bytes(cache));
	return 0;
}

/* Renames FROM over TO (Windows' rename() will not replace a file). */
static int move_into_place(const char *from, const char *to)
{
	if (plat_file_exists(to))
		plat_remove_file(to);
	if (rename(from, to) != 0)
		return err_set(LL_EIO, "Cannot rename %s to %s.", from, to);
	return 0;
}

/* Downloads HEX into the cache, at most LIMIT bytes: a .part file,
 * hashed, then renamed. LL_ETOOBIG (nothing kept) for a larger blob. */
static int fetch_into(struct blob_cache *cache, const char *hex, blob_fetch_fn fetch, void *context,
		      const char *path, long long limit, long long *ret_size)
{
	char part[PLAT_MAX_PATH + 1], name[80], have[65];
	long long size = 0;
	int rc;

	if (!fetch)
		return err_set(LL_EUNSUPPORTED,
			       "The blob %s is not cached and this agent cannot fetch blobs.", hex);
	if (limit <= 0)
		return err_set(LL_ETOOBIG, "No room is left for the blob %s.", hex);
	snprintf(name, sizeof(name), "%s.part", hex);
	if ((rc = path_of(cache, name, part)) < 0)
		return rc;
	if ((rc = fetch(context, hex, part, limit)) < 0 || (rc = plat_file_sha256(part, have, &size)) < 0)
		goto fail;
	if (size > limit) { /* a fetch that did not keep to its limit */
		rc = err_set(LL_ETOOBIG, "The blob %s is larger than %lld bytes.", hex, limit);
		goto fail;
	}
	if (strcmp(have, hex) != 0) {
		rc = err_set(LL_EFORMAT, "The blob fetched as %s has the SHA-256 %s.", hex, have);
		goto fail;
	}
	if ((rc = move_into_place(part, path)) < 0)
		goto fail;
	*ret_size = size;
	return 0;
fail:
	if (plat_file_exists(part))
		plat_remove_file(part);
	return rc;
}

/* The bytes a download may take now: what is left above the free space
 * kept (after blob_cache_make_room() with NEED more), at most the cap. */
static int room_for_download(struct blob_cache *cache, long long need, long long *ret_limit)
{
	long long keep = cache->room.keep_free_bytes, free_bytes = 0, limit = cache->cap_bytes;
	int rc = blob_cache_make_room(cache, need, &free_bytes);

	if (rc < 0 && rc != LL_ENOSPACE)
		return rc;
	err_clear();
	if (keep > 0 && free_bytes - keep < limit)
		limit = free_bytes - keep;
	*ret_limit = limit;
	return 0;
}

static int does_not_fit(struct blob_cache *cache, const char *hex, long long room)
{
	size_t pinned = 0;

	for (size_t i = 0; i < cache->count; i++)
		pinned += cache->entries[i].pinned;
	return err_set(
		LL_ENOSPACE,
		"This task's files do not fit on the agent's disk: the blob %s is larger than the %lld "
		"bytes left above the %lld the agent keeps free (--min-free-bytes), with the task's "
		"%zu other blobs here (%lld bytes) kept and every other cached blob and everything "
		"else that may go removed.",
		hex, room > 0 ? room : 0, cache->room.keep_free_bytes, pinned,
		blob_cache_pinned_bytes(cache));
}

/* Fetches HEX within the room the disk has: a download cut at the room
 * left makes more room (twice that and BLOB_CACHE_ROOM_STEP) and starts
 * again, until the blob fits or no more room can be made. */
static int fetch_within_room(struct blob_cache *cache, const char *hex, blob_fetch_fn fetch, void *context,
			     const char *path, long long *ret_size)
{
	long long limit = 0, more;
	int rc;

	if ((rc = room_for_download(cache, 0, &limit)) < 0)
		return rc;
	for (;;) {
		if ((rc = fetch_into(cache, hex, fetch, context, path, limit, ret_size)) != LL_ETOOBIG)
			return rc;
		if (limit >= cache->cap_bytes)
			return err_set(
				LL_ENOSPACE,
				"The blob %s is larger than the agent's blob cache may hold (its cap, %lld "
				"bytes).",
				hex, cache->cap_bytes);
		if ((rc = room_for_download(cache, 2 * (limit > 0 ? limit : 0) + BLOB_CACHE_ROOM_STEP,
					    &more)) < 0)
			return rc;
		if (more <= limit)
			return does_not_fit(cache, hex, limit);
		limit = more;
	}
}

int blob_cache_get(struct blob_cache *cache, const char *sha256_hex, blob_fetch_fn fetch, void *context,
		   const char *dest_path, bool *ret_fetched)
{
	char path[PLAT_MAX_PATH + 1], have[65];
	struct blob_cache_entry *e;
	long long size = 0, free_after;
	bool fetched = false;
	int rc;

	if (!hex_valid(sha256_hex))
		return err_set(LL_EINVAL, "'%.80s' is not a SHA-256 in lowercase hex.", sha256_hex);
	if ((rc = path_of(cache, sha256_hex, path)) < 0)
		return rc;
	e = find(cache, sha256_hex);
	if (e && (plat_file_sha256(path, have, &size) < 0 || strcmp(have, sha256_hex) != 0)) {
		/* Changed on disk since it was cached: never used, fetched again. */
		log_event(LOG_WARN, "blob_corrupt", "sha256", sha256_hex, NULL);
		plat_remove_file(path);
		forget(cache, e);
		cache->stats.corrupt++;
		e = NULL;
	}
	err_clear();
	if (!e) {
		if ((rc = fetch_within_room(cache, sha256_hex, fetch, context, path, &size)) < 0)
			return rc;
		fetched = true;
		cache->stats.fetched++;
		cache->stats.bytes_fetched += size;
	} else {
		cache->stats.hits++;
	}
	if ((rc = remember(cache, sha256_hex, size, ++cache->seq)) < 0)
		return rc;
	find(cache, sha256_hex)->pinned = true;
	if ((rc = plat_link_file(path, dest_path, NULL)) < 0 || (rc = trim(cache, 0, &free_after)) < 0 ||
	    (rc = save_index(cache)) < 0)
		return rc;
	if (ret_fetched)
		*ret_fetched = fetched;
	return 0;
}
