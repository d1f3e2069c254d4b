/*
 * blob_cache.c - the content-addressed blob cache (blob_cache.h): an index
 * kept in memory and saved as index.json after every change, the blobs
 * beside it, each verified by its hash before use.
 */
#include "blobs/blob_cache.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"

/* Largest index.json read back. */
#define BLOB_CACHE_MAX_INDEX (32u * 1024u * 1024u)

struct blob_cache_entry {
	char hex[65];
	long long size;
	long long used;
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

/* Removes least recently used blobs, never KEEP, until the cache fits. */
static void evict(struct blob_cache *cache, const char *keep)
{
	long long total = blob_cache_bytes(cache);

	while ((total > cache->cap_bytes || cache->count > BLOB_CACHE_MAX_ENTRIES) && cache->count > 1) {
		struct blob_cache_entry *oldest = NULL;
		char path[PLAT_MAX_PATH + 1];

		for (size_t i = 0; i < cache->count; i++)
			if (strcmp(cache->entries[i].hex, keep) != 0 &&
			    (!oldest || cache->entries[i].used < oldest->used))
				oldest = &cache->entries[i];
		if (!oldest)
			break;
		if (path_of(cache, oldest->hex, path) == 0)
			plat_remove_file(path);
		log_event(LOG_INFO, "blob_evicted", "sha256", oldest->hex, NULL);
		total -= oldest->size;
		forget(cache, oldest);
		cache->stats.evicted++;
	}
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

/* Downloads HEX into the cache: a .part file, hashed, then renamed. */
static int fetch_into(struct blob_cache *cache, const char *hex, blob_fetch_fn fetch, void *context,
		      const char *path, long long *ret_size)
{
	char part[PLAT_MAX_PATH + 1], name[80], have[65];
	long long size = 0;
	int rc;

	if (!fetch)
		return err_set(LL_EUNSUPPORTED,
			       "The blob %s is not cached and this agent cannot fetch blobs.", hex);
	snprintf(name, sizeof(name), "%s.part", hex);
	if ((rc = path_of(cache, name, part)) < 0)
		return rc;
	if ((rc = fetch(context, hex, part)) < 0 || (rc = plat_file_sha256(part, have, &size)) < 0)
		goto fail;
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

int blob_cache_get(struct blob_cache *cache, const char *sha256_hex, blob_fetch_fn fetch, void *context,
		   const char *dest_path, bool *ret_fetched)
{
	char path[PLAT_MAX_PATH + 1], have[65];
	struct blob_cache_entry *e;
	long long size = 0;
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
		if ((rc = fetch_into(cache, sha256_hex, fetch, context, path, &size)) < 0)
			return rc;
		fetched = true;
		cache->stats.fetched++;
		cache->stats.bytes_fetched += size;
	} else {
		cache->stats.hits++;
	}
	if ((rc = remember(cache, sha256_hex, size, ++cache->seq)) < 0 ||
	    (rc = plat_link_file(path, dest_path, NULL)) < 0)
		return rc;
	evict(cache, sha256_hex);
	if ((rc = save_index(cache)) < 0)
		return rc;
	if (ret_fetched)
		*ret_fetched = fetched;
	return 0;
}
