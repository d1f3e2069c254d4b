/*
 * idle_launcher.c - runs a GUI program until it is ready for input, for
 * the program family's `"until": "input-idle"` (agent/family/program/).
 * Compiled with mingw-w64 (with -municode) when loadlab-agent is built,
 * and shipped inside it.
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

#include "start_program.h"

int wmain(int argc, wchar_t **argv)
{
	HANDLE process;
	DWORD timeout_ms, wait, code = 0;

	if (argc < 3)
		return 2;
	timeout_ms = (DWORD)wcstoul(argv[1], NULL, 10);
	if (!(process = start_program(argc - 2, argv + 2, 0)))
		return 3;
	wait = WaitForInputIdle(process, timeout_ms);
	/* WAIT_FAILED: no message queue (a console program): its exit then
	 * stands for "ready", within the same time. */
	if (wait == WAIT_FAILED && WaitForSingleObject(process, timeout_ms) == WAIT_TIMEOUT)
		wait = WAIT_TIMEOUT;
	if (WaitForSingleObject(process, 0) == WAIT_OBJECT_0) {
		/* It ended by itself: its own verdict. */
		GetExitCodeProcess(process, &code);
		CloseHandle(process);
		return (int)code;
	}
	TerminateProcess(process, 0);
	WaitForSingleObject(process, 5000);
	CloseHandle(process);
	if (wait == WAIT_TIMEOUT)
		return 4;
	return wait == 0 ? 0 : 5;
}
