/*
 * plat_cpu_win32.c - plat_process_cpu_s() (plat.h) on Windows:
 * GetProcessTimes(), in XP's kernel32.
 */
#ifdef _WIN32

#include "loadlab/plat.h"

#include <windows.h>

double plat_process_cpu_s(long long pid)
{
	HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
	FILETIME created, exited, kernel, user;
	double s = 0;

	if (!h)
		return 0;
	if (GetProcessTimes(h, &created, &exited, &kernel, &user))
		s = ((double)kernel.dwLowDateTime + (double)kernel.dwHighDateTime * 4294967296.0 +
		     (double)user.dwLowDateTime + (double)user.dwHighDateTime * 4294967296.0) /
		    1e7;
	CloseHandle(h);
	return s;
}

#endif
