/*
 * plat_clock_posix.c - clock.h's clocks on POSIX: clock_gettime.
 */
#ifndef _WIN32

#include "loadlab/clock.h"

#include <time.h>

long long clock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long clock_monotonic_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#endif /* !_WIN32 */
