/* The agent's blob cache (agent/blobs/blob_cache.h): only missing blobs are
 * fetched, a fetched blob whose bytes do not match its name is refused and
 * not kept, a cached blob changed on disk is fetched again, the least
 * recently used blobs go past the cap, and the index survives a reopen. */
#include "check.h"
#include "blobs/blob_cache.h"
#include "loadlab/err.h"
#include "loadlab/plat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fake server: blob I is 1000 bytes of 'a' + I; LIE serves wrong bytes. */
struct server {
	int calls;
	bool lie;
};

static void blob_bytes(int i, char *out)
{
	memset(out, 'a' + i, 1000);
}

static void blob_hex(int i, char hex[65])
{
	char data[1000];
	blob_bytes(i, data);
	plat_sha256(data, sizeof(data), hex);
}

static int fetch(void *context, const char *hex, const char *dest)
{
	struct server *s = context;
	char data[1000], want[65];

	s->calls++;
	for (int i = 0; i < 26; i++) {
		blob_hex(i, want);
		if (strcmp(want, hex) == 0) {
			blob_bytes(s->lie ? i + 1 : i, data);
			return plat_write_file(dest, data, sizeof(data));
		}
	}
	return err_set(LL_ENOTFOUND, "No such blob.");
}

int main(void)
{
	struct blob_cache cache;
	struct server server = {0};
	char *dir = NULL, path[PLAT_MAX_PATH + 1], dest[PLAT_MAX_PATH + 1], hex[4][65], *text = NULL;
	bool fetched = false;
	size_t len = 0;

	CHECK_EQ_INT(plat_make_temp_dir("loadlab-blobs", &dir), 0);
	if (!dir)
		return check_finish();
	for (int i = 0; i < 4; i++)
		blob_hex(i, hex[i]);
	snprintf(dest, sizeof(dest), "%s/out", dir);
	snprintf(path, sizeof(path), "%s/cache", dir);
	CHECK_EQ_INT(blob_cache_open(&cache, path, 2500), 0); /* room for two blobs */

	CHECK_EQ_INT(blob_cache_get(&cache, hex[0], fetch, &server, dest, &fetched), 0);
	CHECK(fetched);
	CHECK_EQ_INT(plat_read_file(dest, 5000, &text, &len), 0);
	CHECK_EQ_INT(len, 1000);
	CHECK(text && text[0] == 'a');
	free(text);
	CHECK_EQ_INT(blob_cache_get(&cache, hex[0], fetch, &server, dest, &fetched), 0);
	CHECK(!fetched);
	CHECK_EQ_INT(server.calls, 1);
	CHECK_EQ_INT(cache.stats.hits, 1);

	/* Bytes that do not hash to the name: refused, nothing kept. */
	server.lie = true;
	CHECK_EQ_INT(blob_cache_get(&cache, hex[1], fetch, &server, dest, &fetched), LL_EFORMAT);
	server.lie = false;
	snprintf(path, sizeof(path), "%s/cache/%s", dir, hex[1]);
	CHECK(!plat_file_exists(path));
	snprintf(path, sizeof(path), "%s/cache/%s.part", dir, hex[1]);
	CHECK(!plat_file_exists(path));

	/* 1 then 0 used: fetching 2 evicts 1, the least recently used. */
	CHECK_EQ_INT(blob_cache_get(&cache, hex[1], fetch, &server, dest, &fetched), 0);
	CHECK_EQ_INT(blob_cache_get(&cache, hex[0], fetch, &server, dest, &fetched), 0);
	CHECK(!fetched);
	CHECK_EQ_INT(blob_cache_get(&cache, hex[2], fetch, &server, dest, &fetched), 0);
	CHECK_EQ_INT(cache.stats.evicted, 1);
	snprintf(path, sizeof(path), "%s/cache/%s", dir, hex[1]);
	CHECK(!plat_file_exists(path));
	CHECK(blob_cache_bytes(&cache) <= 2500);

	/* A cached blob changed on disk is never used: fetched again. */
	snprintf(path, sizeof(path), "%s/cache/%s", dir, hex[0]);
	CHECK_EQ_INT(plat_write_file(path, "tampered", 8), 0);
	server.calls = 0;
	CHECK_EQ_INT(blob_cache_get(&cache, hex[0], fetch, &server, dest, &fetched), 0);
	CHECK(fetched);
	CHECK_EQ_INT(server.calls, 1);
	CHECK_EQ_INT(cache.stats.corrupt, 1);
	blob_cache_close(&cache);

	/* Reopened: the index remembers both blobs; nothing is fetched. */
	snprintf(path, sizeof(path), "%s/cache", dir);
	CHECK_EQ_INT(blob_cache_open(&cache, path, 2500), 0);
	CHECK_EQ_INT(cache.count, 2);
	server.calls = 0;
	CHECK_EQ_INT(blob_cache_get(&cache, hex[2], NULL, NULL, dest, &fetched), 0);
	CHECK_EQ_INT(blob_cache_get(&cache, hex[0], NULL, NULL, dest, &fetched), 0);
	CHECK_EQ_INT(server.calls, 0);
	/* No fetcher and not cached: refused with a reason. */
	CHECK_EQ_INT(blob_cache_get(&cache, hex[3], NULL, NULL, dest, &fetched), LL_EUNSUPPORTED);
	CHECK_EQ_INT(blob_cache_get(&cache, "../../etc/passwd", fetch, &server, dest, &fetched), LL_EINVAL);
	blob_cache_close(&cache);
	plat_remove_tree(dir);
	free(dir);
	return check_finish();
}
