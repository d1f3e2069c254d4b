/*
 * store_cache.c - the writer's caches (store_cache.h).
 */
#include "store_cache.h"

#include <stdlib.h>
#include <string.h>

struct store_cache_lease_job *store_cache_lease_job(struct store_cache *cache, long long job_id)
{
	return &cache->lease_jobs[job_id % STORE_CACHE_LEASE_JOB_SLOTS];
}

void store_cache_lease_job_put(struct store_cache *cache, long long job_id, char *text, bool calibration)
{
	struct store_cache_lease_job *slot = store_cache_lease_job(cache, job_id);

	free(slot->text);
	*slot = (struct store_cache_lease_job){text ? job_id : 0, text, calibration};
}

bool store_cache_agent_touch_due(const struct store_cache *cache, long long agent_id, long long now,
				 long long window_ms)
{
	const struct store_cache_agent_touch *slot =
		&cache->agent_touches[agent_id % STORE_CACHE_AGENT_TOUCH_SLOTS];

	return !(slot->agent_id == agent_id && now >= slot->at && now - slot->at < window_ms);
}

void store_cache_agent_touch_put(struct store_cache *cache, long long agent_id, long long now)
{
	cache->agent_touches[agent_id % STORE_CACHE_AGENT_TOUCH_SLOTS] =
		(struct store_cache_agent_touch){agent_id, now};
}

void store_cache_lease_jobs_forget(struct store_cache *cache)
{
	for (int i = 0; i < STORE_CACHE_LEASE_JOB_SLOTS; i++) {
		free(cache->lease_jobs[i].text);
		cache->lease_jobs[i] = (struct store_cache_lease_job){0, NULL, false};
	}
}

void store_cache_agent_touches_forget(struct store_cache *cache)
{
	memset(cache->agent_touches, 0, sizeof(cache->agent_touches));
}
