/*
 * store_cache.h - the writer's caches, which any backend's writer may
 * keep (store_backend.h): the "job" member of leases, printed once per
 * job, and the last_seen each agent was last written with, so that a burst
 * of requests from one agent writes it once. Plain data in slots chosen by
 * the id; no locking: only the writer thread uses them (or no thread, at
 * open and close). They call nothing of the store, so the writer and the
 * resources that fill them both sit above this file.
 *
 * A slot holds one id at a time: a lookup of another id that maps to the
 * same slot misses. After a rollback (an id may come again with other
 * contents) the writer forgets them.
 */
#ifndef LOADLAB_SERVER_STORE_CACHE_H
#define LOADLAB_SERVER_STORE_CACHE_H

#include <stdbool.h>

/* Jobs whose leases' "job" member is kept printed, by job id. */
#define STORE_CACHE_LEASE_JOB_SLOTS 64
/* Agents whose last_seen write is remembered, by agent id. */
#define STORE_CACHE_AGENT_TOUCH_SLOTS 256

struct store_cache_lease_job {
	long long job_id; /* 0: empty */
	char *text;       /* the printed "job" member (free()d by the cache) */
	bool calibration; /* the job's spec has "calibration" */
};

struct store_cache_agent_touch {
	long long agent_id; /* 0: empty */
	long long at;       /* the last_seen written */
};

struct store_cache {
	struct store_cache_lease_job lease_jobs[STORE_CACHE_LEASE_JOB_SLOTS];
	struct store_cache_agent_touch agent_touches[STORE_CACHE_AGENT_TOUCH_SLOTS];
};

/* The slot of job JOB_ID, which holds it when its job_id is JOB_ID and its
 * text is set (borrowed). */
struct store_cache_lease_job *store_cache_lease_job(struct store_cache *cache, long long job_id);

/* Keeps TEXT (taken; NULL: the slot is left empty) as job JOB_ID's printed
 * member in its slot, replacing what the slot held. */
void store_cache_lease_job_put(struct store_cache *cache, long long job_id, char *text, bool calibration);

/* Whether agent AGENT_ID's last_seen must be written at NOW: not when it
 * was written less than WINDOW_MS before (as remembered). */
bool store_cache_agent_touch_due(const struct store_cache *cache, long long agent_id, long long now,
				 long long window_ms);

/* Remembers that agent AGENT_ID's last_seen was written as NOW. */
void store_cache_agent_touch_put(struct store_cache *cache, long long agent_id, long long now);

/* Forgets the printed jobs (freeing them): after a rollback, and at close. */
void store_cache_lease_jobs_forget(struct store_cache *cache);

/* Forgets the touches, so that every agent's next touch writes: after an
 * op or a transaction was rolled back. */
void store_cache_agent_touches_forget(struct store_cache *cache);

#endif
