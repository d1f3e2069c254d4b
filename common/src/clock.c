/*
 * clock.c - the text form of a time. The clocks themselves are per OS:
 * src/plat/plat_clock_posix.c and src/plat/plat_clock_win32.c.
 */
#include "loadlab/clock.h"

#include <stdio.h>
#include <time.h>

char *clock_format_rfc3339(long long ms, char *out)
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(out, 32, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (tm.tm_year + 1900) % 10000,
		 (tm.tm_mon + 1) % 100, tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100, tm.tm_sec % 100,
		 (int)(ms % 1000));
	return out;
}
