/*
 * plat_churn_win32.c - plat_churn.h on Windows, XP-safe (_WIN32_WINNT
 * 0x0501). The churn itself runs as generated Windows programs (churn.c);
 * this backend only answers the limits and paths.
 */
#ifdef _WIN32

#include "measure/plat_churn.h"

#include <windows.h>

#include <stdio.h>
#include <string.h>

#include "loadlab/err.h"

int plat_churn_wave_cap(long long per_process_bytes, char *why, size_t size)
{
	MEMORYSTATUSEX m;
	long long cap = PLAT_CHURN_MAX_WAVE;

	snprintf(why, size, "at most %d at once", PLAT_CHURN_MAX_WAVE);
	memset(&m, 0, sizeof(m));
	m.dwLength = sizeof(m);
	if (per_process_bytes > 0 && GlobalMemoryStatusEx(&m) &&
	    (long long)(m.ullAvailPhys / (unsigned long long)per_process_bytes) < cap) {
		cap = (long long)(m.ullAvailPhys / (unsigned long long)per_process_bytes);
		snprintf(why, size, "available memory %lld MiB at %lld MiB per process",
			 (long long)(m.ullAvailPhys >> 20), per_process_bytes >> 20);
	}
	return cap < 1 ? 1 : (int)cap;
}

int plat_churn_self_path(char *out, size_t size)
{
	char path[MAX_PATH + 1];
	DWORD n = GetModuleFileNameA(NULL, path, sizeof(path));

	if (n == 0 || n >= sizeof(path))
		return err_set(LL_EIO, "GetModuleFileName failed (%lu).", (unsigned long)GetLastError());
	if (n >= size)
		return err_set(LL_ETOOBIG, "This program's path is too long.");
	memcpy(out, path, n + 1);
	return 0;
}

int plat_churn_absolute_path(const char *path, char *out, size_t size)
{
	char full[MAX_PATH + 1];
	DWORD n = GetFullPathNameA(path, sizeof(full), full, NULL);

	if (n == 0 || n >= sizeof(full))
		return err_set(LL_EIO, "Cannot resolve %s (%lu).", path, (unsigned long)GetLastError());
	if (n >= size)
		return err_set(LL_ETOOBIG, "The path %s is too long.", full);
	memcpy(out, full, n + 1);
	return 0;
}

int plat_churn_wave_run(const char *const *child_argv, int count, long long timeout_ms,
			struct plat_churn_wave *ret_wave)
{
	return err_set(LL_EUNSUPPORTED,
		       "The Linux churn analog does not run on Windows; churn runs Windows programs.");
}

int plat_churn_child(const char *const *libs, int count)
{
	return err_set(LL_EUNSUPPORTED, "The Linux churn child does not run on Windows.");
}

#endif
