/*
 * start_program.h - how debug_probe.c and idle_launcher.c start the
 * program they watch. Embedded in loadlab-agent beside them and written
 * into the tools folder before they are compiled (program_fetch.c); a
 * header of static functions, since each program is one file compiled on
 * its own. Only APIs of Windows XP.
 */
#ifndef LOADLAB_START_PROGRAM_H
#define LOADLAB_START_PROGRAM_H

#include <windows.h>
#include <string.h>
#include <wchar.h>

/* Appends ARG to CMD (CAP characters with the NUL; cut short there)
 * quoted as CommandLineToArgvW reads it. */
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

/* Starts ARGV[0] (a path) with the arguments ARGV[0..ARGC), quoted into one
 * command line (cut at 32767 characters), in this process's folder, with
 * CreateProcessW's FLAGS (0, or DEBUG_ONLY_THIS_PROCESS). Returns the
 * process handle (the thread's is closed), or NULL when it could not be
 * started. */
static HANDLE start_program(int argc, wchar_t **argv, DWORD flags)
{
	static wchar_t cmd[32768];
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;

	cmd[0] = 0;
	for (int i = 0; i < argc; i++)
		append_arg(cmd, sizeof(cmd) / sizeof(cmd[0]), argv[i]);
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	if (!CreateProcessW(argv[0], cmd, NULL, NULL, FALSE, flags, NULL, NULL, &si, &pi))
		return NULL;
	CloseHandle(pi.hThread);
	return pi.hProcess;
}

#endif
