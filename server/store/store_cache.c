/*
 * store_cache.c - the writers' caches (store_cache.h).
 */
#include "store_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct lease_job_slot {
	long long job_id; /* 0: empty */
	char *text;       /* the printed "job" member (free()d by the cache) */
	bool calibration; /* the job's spec has "calibration" */
};

struct agent_touch_slot {
	long long agent_id; /* 0: empty */
	long long at;       /* the last_seen written */
};

struct store_cache {
	pthread_mutex_t lock; /* every member below */
	struct lease_job_slot lease_jobs[STORE_CACHE_LEASE_JOB_SLOTS];
	struct agent_touch_slot agent_touches[STORE_CACHE_AGENT_TOUCH_SLOTS];
};

struct store_cache *store_cache_new(void)
{
	struct store_cache *cache = calloc(1, sizeof(*cache));

	if (cache && pthread_mutex_init(&cache->lock, NULL) != 0) {
		free(cache);
		return NULL;
	}
	return cache;
}

/* Empties the lease jobs' slots; under the lock. */
static void lease_jobs_clear(struct store_cache *cache)
{
	for (int i = 0; i < STORE_CACHE_LEASE_JOB_SLOTS; i++) {
		free(cache->lease_jobs[i].text);
		cache->lease_jobs[i] = (struct lease_job_slot){0, NULL, false};
	}
}

void store_cache_free(struct store_cache *cache)
{
	if (!cache)
		return;
	lease_jobs_clear(cache);
	pthread_mutex_destroy(&cache->lock);
	free(cache);
}

/* JOB_ID's slot when it holds the job, else NULL; under the lock. */
static const struct lease_job_slot *lease_job_held(const struct store_cache *cache, long long job_id)
{
	const struct lease_job_slot *slot = &cache->lease_jobs[job_id % STORE_CACHE_LEASE_JOB_SLOTS];

	return slot->job_id == job_id && slot->text ? slot : NULL;
}

cJSON *store_cache_lease_job(struct store_cache *cache, long long job_id, bool *ret_calibration)
{
	const struct lease_job_slot *slot;
	cJSON *raw = NULL;

	if (!cache)
		return NULL;
	pthread_mutex_lock(&cache->lock);
	if ((slot = lease_job_held(cache, job_id))) {
		raw = cJSON_CreateRaw(slot->text); /* a copy, made under the lock */
		if (ret_calibration)
			*ret_calibration = slot->calibration;
	}
	pthread_mutex_unlock(&cache->lock);
	return raw;
}

bool store_cache_lease_job_calibration(struct store_cache *cache, long long job_id, bool *ret_calibration)
{
	const struct lease_job_slot *slot;
	bool held;

	if (!cache)
		return false;
	pthread_mutex_lock(&cache->lock);
	slot = lease_job_held(cache, job_id);
	held = slot != NULL;
	if (held)
		*ret_calibration = slot->calibration;
	pthread_mutex_unlock(&cache->lock);
	return held;
}

void store_cache_lease_job_put(struct store_cache *cache, long long job_id, char *text, bool calibration)
{
	struct lease_job_slot *slot;

	if (!cache) {
		free(text);
		return;
	}
	pthread_mutex_lock(&cache->lock);
	slot = &cache->lease_jobs[job_id % STORE_CACHE_LEASE_JOB_SLOTS];
	free(slot->text);
	*slot = (struct lease_job_slot){text ? job_id : 0, text, calibration};
	pthread_mutex_unlock(&cache->lock);
}

bool store_cache_agent_touch_due(struct store_cache *cache, long long agent_id, long long now,
				 long long window_ms)
{
	const struct agent_touch_slot *slot;
	bool due;

	if (!cache)
		return true;
	pthread_mutex_lock(&cache->lock);
	slot = &cache->agent_touches[agent_id % STORE_CACHE_AGENT_TOUCH_SLOTS];
	due = !(slot->agent_id == agent_id && now >= slot->at && now - slot->at < window_ms);
	pthread_mutex_unlock(&cache->lock);
	return due;
}

void store_cache_agent_touch_put(struct store_cache *cache, long long agent_id, long long now)
{
	if (!cache)
		return;
	pthread_mutex_lock(&cache->lock);
	cache->agent_touches[agent_id % STORE_CACHE_AGENT_TOUCH_SLOTS] =
		(struct agent_touch_slot){agent_id, now};
	pthread_mutex_unlock(&cache->lock);
}

void store_cache_lease_jobs_forget(struct store_cache *cache)
{
	if (!cache)
		return;
	pthread_mutex_lock(&cache->lock);
	lease_jobs_clear(cache);
	pthread_mutex_unlock(&cache->lock);
}

void store_cache_agent_touches_forget(struct store_cache *cache)
{
	if (!cache)
		return;
	pthread_mutex_lock(&cache->lock);
	memset(cache->agent_touches, 0, sizeof(cache->agent_touches));
	pthread_mutex_unlock(&cache->lock);
}
