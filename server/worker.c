/* The server's background threads' stop flag: see worker.h. */
#include "worker.h"

#include <errno.h>
#include <time.h>

void worker_request_stop(pthread_mutex_t *lock, pthread_cond_t *wake, bool *stopping)
{
	pthread_mutex_lock(lock);
	*stopping = true;
	pthread_cond_broadcast(wake);
	pthread_mutex_unlock(lock);
}

void worker_stop(pthread_mutex_t *lock, pthread_cond_t *wake, bool *stopping, pthread_t thread)
{
	worker_request_stop(lock, wake, stopping);
	pthread_join(thread, NULL);
}

bool worker_wait_or_stop(pthread_mutex_t *lock, pthread_cond_t *wake, const bool *stopping, long long ms)
{
	struct timespec until;
	bool stopped;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(lock);
	while (!*stopping && pthread_cond_timedwait(wake, lock, &until) != ETIMEDOUT)
		;
	stopped = *stopping;
	pthread_mutex_unlock(lock);
	return stopped;
}
