/*
 * churn_child.exe: the child of the Windows churn test (agent/measure/churn.h).
 * Compiled with mingw-w64 when loadlab-agent is built, and shipped inside
 * it (plain C, XP-safe; imports kernel32 and the C runtime only:
 * it loads user32 or gdi32 only when its set says so, and never parses its
 * command line with CommandLineToArgvW, which would pull shell32 and gdi32).
 */
#include <windows.h>
#include <stdlib.h>

/* argv: PARENT_PID GO_EVENT READY_SEMAPHORE [DLL...] */
int main(int argc, char **argv)
{
	HANDLE wait[2];
	HANDLE ready;
	int i;

	if (argc < 4)
		return 2;
	wait[0] = OpenEventA(SYNCHRONIZE, FALSE, argv[2]);
	/* A parent that dies never leaves its children waiting. */
	wait[1] = OpenProcess(SYNCHRONIZE, FALSE, (DWORD)strtoul(argv[1], NULL, 10));
	ready = OpenSemaphoreA(SEMAPHORE_MODIFY_STATE, FALSE, argv[3]);
	if (!wait[0] || !wait[1] || !ready)
		return 4;
	for (i = 4; i < argc; i++)
		if (!LoadLibraryA(argv[i]))
			return 3;
	ReleaseSemaphore(ready, 1, NULL);
	if (WaitForMultipleObjects(2, wait, FALSE, INFINITE) != WAIT_OBJECT_0)
		return 5;
	return 0;
}
