/* The agent's blob cache (agent/blobs/blob_cache.h): only missing blobs are
 * fetched, a fetched blob whose bytes do not match its name is refused and
 * not kept, a cached blob changed on disk is fetched again, the least
 * recently used blobs go past the cap but never a task's own (pinned),
 * a blob larger than the cap is refused, and the index survives a
 * reopen. (The free space kept: tests/agent/test_agent_cache.py, on a
 * small disk.) */
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

static int fetch(void *context, const char *hex, const char *dest, long long limit)
{
	struct server *s = context;
	char data[1000], want[65];

	s->calls++;
	for (int i = 0; i < 26; i++) {
		blob_hex(i, want);
		if (strcmp(want, hex) == 0) {
			/* writes it whole whatever LIMIT says: the cache checks the size */
			(void)limit;
			blob_bytes(s->lie ? i + 1 : i, data);
			return plat_write_file(dest, data, sizeof(data));
		}
	}
	return err_set(LL_ENOTFOUND, "No such blob.");
}

static bool blob_file_exists(const char *cache_dir, const char *hex)
{
	char path[PLAT_MAX_PATH + 1];
	snprintf(path, sizeof(path), "%s/%s", cache_dir, hex);
	return plat_file_exists(path);
}

int main(void)
{
	char cache_dir[PLAT_MAX_PATH - 100];
	struct blob_cache cache;
	struct server server = {0};
	char *dir = NULL, path[PLAT_MAX_PATH + 1], dest[PLAT_MAX_PATH + 1], hex[5][65], *text = NULL;
	bool fetched = false;
	size_t len = 0;

	CHECK_EQ_INT(plat_make_temp_dir("loadlab-blobs", &dir), 0);
	if (!dir)
		return check_finish();
	for (int i = 0; i < 5; i++)
		blob_hex(i, hex[i]);
	snprintf(dest, sizeof(dest), "%s/out", dir);
	snprintf(cache_dir, sizeof(cache_dir), "%s/cache", dir);
	CHECK_EQ_INT(blob_cache_open(&cache, cache_dir, 2500), 0); /* room for two blobs */

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

	/* The blobs a task got stay while it runs (pinned), past the cap too. */
	CHECK_EQ_INT(blob_cache_get(&cache, hex[1], fetch, &server, dest, &fetched), 0);
	CHECK_EQ_INT(blob_cache_get(&cache, hex[2], fetch, &server, dest, &fetched), 0);
	CHECK_EQ_INT(cache.stats.evicted, 0);
	CHECK_EQ_INT(cache.count, 3);
	CHECK_EQ_INT(blob_cache_pinned_bytes(&cache), 3000);
	/* ... and a cache past its cap with its task's files alone is no
	 * lack of room on a disk that has the free space kept (one byte). */
	{
		struct blob_cache_room room = {1, NULL, NULL};
		long long free_bytes = 0;
		CHECK_EQ_INT(blob_cache_make_room(&cache, 0, NULL), 0);
		blob_cache_set_room(&cache, &room);
		CHECK_EQ_INT(blob_cache_make_room(&cache, 0, &free_bytes), 0);
		CHECK(free_bytes >= 1);
		CHECK_EQ_INT(cache.count, 3);
		blob_cache_set_room(&cache, NULL);
	}
	blob_cache_close(&cache);

	/* The next task: past the cap, the least recently used blob that it
	 * has not got goes: 0 (used before 1), then 1. */
	CHECK_EQ_INT(blob_cache_open(&cache, cache_dir, 2500), 0);
	CHECK_EQ_INT(blob_cache_pinned_bytes(&cache), 0);
	CHECK_EQ_INT(blob_cache_get(&cache, hex[2], fetch, &server, dest, &fetched), 0);
	CHECK(!fetched);
	CHECK_EQ_INT(cache.stats.evicted, 1);
	CHECK(!blob_file_exists(cache_dir, hex[0]));
	CHECK(blob_file_exists(cache_dir, hex[1]));
	CHECK_EQ_INT(blob_cache_get(&cache, hex[0], fetch, &server, dest, &fetched), 0);
	CHECK(fetched);
	CHECK_EQ_INT(cache.stats.evicted, 2);
	CHECK(!blob_file_exists(cache_dir, hex[1]));
	CHECK_EQ_INT(blob_cache_bytes(&cache), 2000);
	blob_cache_close(&cache);

	/* A task that names its blobs keeps them (pinned): 2 goes for 1, not 0. */
	CHECK_EQ_INT(blob_cache_open(&cache, cache_dir, 2500), 0);
	{
		char ref[80];
		cJSON *job = cJSON_CreateObject(), *files = cJSON_AddObjectToObject(job, "files");
		snprintf(ref, sizeof(ref), "sha256:%s", hex[0]);
		cJSON_AddStringToObject(files, "a.dll", ref);
		cJSON_AddStringToObject(files, "b.dll", "sha256:not-a-digest");
		blob_cache_pin_named(&cache, job);
		cJSON_Delete(job);
	}
	CHECK_EQ_INT(blob_cache_pinned_bytes(&cache), 1000);
	CHECK_EQ_INT(blob_cache_get(&cache, hex[1], fetch, &server, dest, &fetched), 0);
	CHECK(fetched);
	CHECK(blob_file_exists(cache_dir, hex[0]));
	CHECK(!blob_file_exists(cache_dir, hex[2]));
	CHECK_EQ_INT(blob_cache_bytes(&cache), 2000);

	/* A cached blob changed on disk is never used: fetched again. */
	snprintf(path, sizeof(path), "%s/%s", cache_dir, hex[0]);
	CHECK_EQ_INT(plat_write_file(path, "tampered", 8), 0);
	server.calls = 0;
	CHECK_EQ_INT(blob_cache_get(&cache, hex[0], fetch, &server, dest, &fetched), 0);
	CHECK(fetched);
	CHECK_EQ_INT(server.calls, 1);
	CHECK_EQ_INT(cache.stats.corrupt, 1);
	blob_cache_close(&cache);

	/* Reopened: the index remembers both blobs; nothing is fetched. */
	CHECK_EQ_INT(blob_cache_open(&cache, cache_dir, 2500), 0);
	CHECK_EQ_INT(cache.count, 2);
	server.calls = 0;
	CHECK_EQ_INT(blob_cache_get(&cache, hex[1], NULL, NULL, dest, &fetched), 0);
	CHECK_EQ_INT(blob_cache_get(&cache, hex[0], NULL, NULL, dest, &fetched), 0);
	CHECK_EQ_INT(server.calls, 0);
	/* No fetcher and not cached: refused with a reason. */
	CHECK_EQ_INT(blob_cache_get(&cache, hex[3], NULL, NULL, dest, &fetched), LL_EUNSUPPORTED);
	CHECK_EQ_INT(blob_cache_get(&cache, "../../etc/passwd", fetch, &server, dest, &fetched), LL_EINVAL);
	blob_cache_close(&cache);

	/* A blob larger than the cap: refused (the fetcher wrote it whole
	 * anyway), nothing kept. */
	CHECK_EQ_INT(blob_cache_open(&cache, cache_dir, 999), 0);
	CHECK_EQ_INT(blob_cache_get(&cache, hex[4], fetch, &server, dest, &fetched), LL_ENOSPACE);
	CHECK(strstr(err_message(LL_ENOSPACE), "cap") != NULL);
	CHECK(!blob_file_exists(cache_dir, hex[4]));
	snprintf(path, sizeof(path), "%s/%s.part", cache_dir, hex[4]);
	CHECK(!plat_file_exists(path));
	blob_cache_close(&cache);
	plat_remove_tree(dir);
	free(dir);
	return check_finish();
}
