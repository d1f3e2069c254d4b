/*
 * idle_launcher.c - runs a GUI program until it is ready for input, for
 * the program family's `"until": "input-idle"` (agent/family/program/).
 * Embedded in loadlab-agent; compiled with mingw-w64 on the lab machine
 * (with -municode).
 *
 *	idle_launcher.exe TIMEOUT_MS EXE [ARGS...]
 *
 * starts EXE with ARGS (in this process's folder), waits with
 * WaitForInputIdle until it waits for input with nothing queued, then ends
 * it (TerminateProcess) and exits 0. A program that exits by itself before
 * that exits the launcher with its own code; a program with no message
 * queue (a console program: WaitForInputIdle fails at once) is waited for
 * until it exits, within the same time. Exit codes of its own: 2 bad arguments,
 * 3 EXE could not be started, 4 still not idle after TIMEOUT_MS,
 * 5 WaitForInputIdle failed while the program was still running.
 * Only APIs of Windows XP are used.
 */
#include <windows.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* Appends ARG to CMD quoted as CommandLineToArgvW reads it. */
static void append_arg(wchar_t *cmd, size_t cap, const wchar_t *arg)
{
	size_t n = wcslen(cmd);
	int quote = arg[0] == 0 || wcspbrk(arg, L" \t\"") != NULL;

#define PUT(c)                          \
	do {                            \
		if (n + 1 < cap)        \
			cmd[n++] = (c); \
	} while (0)
	if (n)
		PUT(L' ');
	if (quote)
		PUT(L'"');
	for (const wchar_t *p = arg;; p++) {
		size_t slashes = 0;
		while (*p == L'\\') {
			p++;
			slashes++;
		}
		if (*p == 0) {
			for (size_t i = 0; i < (quote ? 2 * slashes : slashes); i++)
				PUT(L'\\');
			break;
		}
		for (size_t i = 0; i < (*p == L'"' ? 2 * slashes + 1 : slashes); i++)
			PUT(L'\\');
		PUT(*p);
	}
	if (quote)
		PUT(L'"');
	cmd[n] = 0;
#undef PUT
}

int wmain(int argc, wchar_t **argv)
{
	static wchar_t cmd[32768];
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	DWORD timeout_ms, wait, code = 0;

	if (argc < 3)
		return 2;
	timeout_ms = (DWORD)wcstoul(argv[1], NULL, 10);
	cmd[0] = 0;
	for (int i = 2; i < argc; i++)
		append_arg(cmd, sizeof(cmd) / sizeof(cmd[0]), argv[i]);
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	if (!CreateProcessW(argv[2], cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
		return 3;
	CloseHandle(pi.hThread);
	wait = WaitForInputIdle(pi.hProcess, timeout_ms);
	/* WAIT_FAILED: no message queue (a console program): its exit then
	 * stands for "ready", within the same time. */
	if (wait == WAIT_FAILED && WaitForSingleObject(pi.hProcess, timeout_ms) == WAIT_TIMEOUT)
		wait = WAIT_TIMEOUT;
	if (WaitForSingleObject(pi.hProcess, 0) == WAIT_OBJECT_0) {
		/* It ended by itself: its own verdict. */
		GetExitCodeProcess(pi.hProcess, &code);
		CloseHandle(pi.hProcess);
		return (int)code;
	}
	TerminateProcess(pi.hProcess, 0);
	WaitForSingleObject(pi.hProcess, 5000);
	CloseHandle(pi.hProcess);
	if (wait == WAIT_TIMEOUT)
		return 4;
	return wait == 0 ? 0 : 5;
}
