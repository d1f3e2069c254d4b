/*
 * plat_noise_win32.c - plat_noise.h on Windows (XP-safe: GetSystemTimes
 * is XP SP1's).
 */
#ifdef _WIN32

#include "measure/plat_noise.h"

#include <windows.h>

#include <stdio.h>
#include <string.h>

#include "loadlab/err.h"
#include "measure/plat_measure.h"

static double seconds_of(const FILETIME *t)
{
	return (double)(((unsigned long long)t->dwHighDateTime << 32) | t->dwLowDateTime) / 1e7;
}

int plat_noise_open(struct plat_noise *ret)
{
	FILETIME idle, kernel, user;

	memset(ret, 0, sizeof(*ret));
	if (!GetSystemTimes(&idle, &kernel, &user)) {
		snprintf(ret->source, sizeof(ret->source), "unavailable: GetSystemTimes failed (error %lu)",
			 (unsigned long)GetLastError());
		return err_set(LL_EUNSUPPORTED, "Noise unavailable: GetSystemTimes failed.");
	}
	snprintf(ret->source, sizeof(ret->source),
		 "windows GetSystemTimes busy time - GetProcessTimes(agent + measured programs); disk I/O "
		 "unavailable (the disk performance counters are not read)");
	return 0;
}

void plat_noise_add_companion(struct plat_noise *noise, long long pid)
{
	(void)noise;
	(void)pid;
}

int plat_noise_read(const struct plat_noise *noise, struct plat_noise_reading *ret)
{
	FILETIME idle, kernel, user, created, exited, self_kernel, self_user;
	LARGE_INTEGER now, freq;

	(void)noise;
	if (!GetSystemTimes(&idle, &kernel, &user))
		return err_set(LL_EIO, "GetSystemTimes failed (error %lu).", (unsigned long)GetLastError());
	/* The kernel time includes the idle time. */
	ret->busy_cpu_s = seconds_of(&kernel) + seconds_of(&user) - seconds_of(&idle);
	ret->ours_cpu_s = (double)plat_measure_children_cpu_ns() / 1e9;
	if (GetProcessTimes(GetCurrentProcess(), &created, &exited, &self_kernel, &self_user))
		ret->ours_cpu_s += seconds_of(&self_kernel) + seconds_of(&self_user);
	ret->disk_ios = -1;
	QueryPerformanceCounter(&now);
	QueryPerformanceFrequency(&freq);
	ret->at_ns = freq.QuadPart ? (long long)((double)now.QuadPart * 1e9 / (double)freq.QuadPart) : 0;
	return 0;
}

#endif
