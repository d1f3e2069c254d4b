/* update_restart_win32.c - update_restart() for the Windows console
 * agent: a new process with the same command line (update.h). */
#ifdef _WIN32
#include "update/update.h"

#include "loadlab/err.h"
#include "loadlab/plat_spawn_win32.h"

#include <windows.h>
#include <string.h>

int update_restart(const char *exe, int argc, char **argv, const char *data_dir, long long confirm_ms)
{
	static char line[PLAT_MAX_COMMAND_LINE + 1];
	STARTUPINFOA si;
	PROCESS_INFORMATION pi;
	size_t len = 0;
	int rc;

	(void)data_dir, (void)confirm_ms;
	line[0] = '\0';
	if ((rc = plat_win32_append_arg(line, &len, exe)) < 0)
		return rc;
	for (int i = 1; i < argc; i++)
		if ((rc = plat_win32_append_arg(line, &len, argv[i])) < 0)
			return rc;
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	if (!CreateProcessA(exe, line, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
		return err_set(LL_EIO, "Cannot restart as %s (error %lu).", exe,
			       (unsigned long)GetLastError());
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	return 0;
}
#endif
