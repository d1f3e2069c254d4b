/*
 * store_cache.h - the writers' caches, which every driver's writes share
 * (struct store_base): the "job" member of leases, printed once per job,
 * and the last_seen each agent was last written with, so that a burst of
 * requests from one agent writes it once. Plain data in slots chosen by
 * the id, under one lock of their own: SQLite's writer thread is their
 * only user, PostgreSQL's writes run on many threads at once; one
 * uncontended mutex costs nothing measurable (tests/bench/README.md).
 * They call nothing of the store, so the drivers and the resources that
 * fill them both sit above this file.
 *
 * A slot holds one id at a time: a lookup of another id that maps to the
 * same slot misses. After a rollback (an id may come again with other
 * contents) the driver forgets them. A NULL cache (out of memory at open)
 * remembers nothing: every lookup misses, every touch is due.
 */
#ifndef LOADLAB_SERVER_STORE_CACHE_H
#define LOADLAB_SERVER_STORE_CACHE_H

#include <cjson/cJSON.h>
#include <stdbool.h>

/* Jobs whose leases' "job" member is kept printed, by job id. */
#define STORE_CACHE_LEASE_JOB_SLOTS 64
/* Agents whose last_seen write is remembered, by agent id. */
#define STORE_CACHE_AGENT_TOUCH_SLOTS 256

struct store_cache;

/* A new, empty cache; NULL when out of memory. */
struct store_cache *store_cache_new(void);
/* Frees CACHE and what it keeps (NULL is fine). */
void store_cache_free(struct store_cache *cache);

/* Job JOB_ID's printed member as a new raw item (cJSON_CreateRaw(): the
 * same bytes as printed), with *RET_CALIBRATION whether its spec has
 * "calibration" (may be NULL); NULL when the cache does not hold the job
 * (or out of memory). */
cJSON *store_cache_lease_job(struct store_cache *cache, long long job_id, bool *ret_calibration);

/* Whether the cache holds job JOB_ID, and then *RET_CALIBRATION as
 * store_cache_lease_job() gives it. */
bool store_cache_lease_job_calibration(struct store_cache *cache, long long job_id, bool *ret_calibration);

/* Keeps TEXT (taken; NULL: the slot is left empty) as job JOB_ID's printed
 * member in its slot, replacing what the slot held. */
void store_cache_lease_job_put(struct store_cache *cache, long long job_id, char *text, bool calibration);

/* Whether agent AGENT_ID's last_seen must be written at NOW: not when it
 * was written less than WINDOW_MS before (as remembered). */
bool store_cache_agent_touch_due(struct store_cache *cache, long long agent_id, long long now,
				 long long window_ms);

/* Remembers that agent AGENT_ID's last_seen was written as NOW. */
void store_cache_agent_touch_put(struct store_cache *cache, long long agent_id, long long now);

/* Forgets the printed jobs (freeing them): after a rollback. */
void store_cache_lease_jobs_forget(struct store_cache *cache);

/* Forgets the touches, so that every agent's next touch writes: after an
 * op or a transaction was rolled back. */
void store_cache_agent_touches_forget(struct store_cache *cache);

#endif
