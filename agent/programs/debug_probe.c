/*
 * debug_probe.c - where the loader put each module of a program that
 * loadlab did not write (the program family's verification,
 * agent/family/program/program_verify.c). Compiled with mingw-w64 (with
 * -municode) when loadlab-agent is built, and shipped inside it.
 *
 *	debug_probe.exe REPORT QUIET_MS EXE [ARGS...]
 *
 * starts EXE with ARGS (in this process's folder) under the debug API
 * (DEBUG_ONLY_THIS_PROCESS) and records, from the CREATE_PROCESS and
 * LOAD_DLL debug events, each module's actual base (lpBaseOfImage /
 * lpBaseOfDll), its preferred base (ImageBase read from the image file
 * through the event's file handle, else from the mapped headers) and its
 * path: GetMappedFileNameW from psapi.dll (looked up at run time) on the
 * module's base, a "\Device\..." name turned into a drive's path with
 * QueryDosDeviceW, else the event's lpImageName read with
 * ReadProcessMemory. Under Wine 8 the mapped name is "\??\Z:\..." and
 * names the file Wine really mapped: for one of its builtins the file in
 * its builtin folder (Z:\usr\lib\x86_64-linux-gnu\wine\...), where
 * lpImageName says C:\windows\system32. Also recorded, as "file_path":
 * GetFinalPathNameByHandleW (Vista and later, looked up at run time) on
 * the event's file handle, empty where there is none. The program runs
 * until it exits, or until no debug event came for QUIET_MS after the
 * loader's first breakpoint (a program that waits for input); then it is
 * ended. REPORT gets, as JSON (UTF-8):
 *
 *   {"modules": [{"kind": "exe"|"dll", "path", "file_path", "actual": "0x..",
 *                 "preferred": "0x..", "size_of_image"}...],
 *    "first_breakpoint": bool, "ended": "exit"|"quiet"|"error",
 *    "exit_code": N}
 *
 * Exit code 0 when the report was written, 2 for bad arguments, 3 when
 * EXE could not be started, 4 when REPORT could not be written.
 * Only APIs of Windows XP are linked (psapi is looked up at run time).
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "start_program.h"

#define MAX_MODULES 4096
#define PATH_CHARS 1024

struct module {
	int dll;
	unsigned long long actual, preferred;
	unsigned long size;
	wchar_t path[PATH_CHARS];
	wchar_t file_path[PATH_CHARS];
};

static struct module modules[MAX_MODULES];
static int module_count;

typedef DWORD(WINAPI *mapped_name_fn)(HANDLE, LPVOID, LPWSTR, DWORD);
static mapped_name_fn mapped_name;
typedef DWORD(WINAPI *final_path_fn)(HANDLE, LPWSTR, DWORD, DWORD);
static final_path_fn final_path;

/* ImageBase and SizeOfImage from the first bytes of an image. */
static int parse_headers(const unsigned char *h, size_t got, unsigned long long *base, unsigned long *size)
{
	DWORD lfanew;
	WORD magic;

	if (got < 64 || h[0] != 'M' || h[1] != 'Z')
		return 0;
	memcpy(&lfanew, h + 0x3c, 4);
	if (lfanew > got - 24 - 64)
		return 0;
	memcpy(&magic, h + lfanew + 24, 2);
	*base = 0;
	if (magic == 0x20b)
		memcpy(base, h + lfanew + 24 + 24, 8);
	else
		memcpy(base, h + lfanew + 24 + 28, 4);
	memcpy(size, h + lfanew + 24 + 56, 4);
	return 1;
}

static void read_preferred(HANDLE process, HANDLE file, void *at, struct module *m)
{
	unsigned char h[4096];
	DWORD got = 0;
	SIZE_T read = 0;

	if (file && file != INVALID_HANDLE_VALUE && SetFilePointer(file, 0, NULL, FILE_BEGIN) == 0 &&
	    ReadFile(file, h, sizeof(h), &got, NULL) && parse_headers(h, got, &m->preferred, &m->size))
		return;
	/* The mapped headers: on Windows a relocated image's ImageBase may
	 * have been rewritten there, so the file comes first. */
	if (ReadProcessMemory(process, at, h, sizeof(h), &read))
		parse_headers(h, read, &m->preferred, &m->size);
}

/* A "\Device\HarddiskVolumeN\..." PATH (what GetMappedFileNameW gives
 * on Windows) as "C:\...": the drive whose QueryDosDeviceW target is its
 * device (MSDN, "Obtaining a File Name From a File Handle"). */
static void drive_path(wchar_t *path)
{
	wchar_t drives[512], target[PATH_CHARS], out[PATH_CHARS];
	DWORD n = GetLogicalDriveStringsW(sizeof(drives) / sizeof(drives[0]) - 1, drives);

	if (wcsncmp(path, L"\\Device\\", 8) != 0 || n == 0 || n >= sizeof(drives) / sizeof(drives[0]))
		return;
	for (wchar_t *d = drives; *d; d += wcslen(d) + 1) {
		wchar_t drive[3] = {d[0], L':', 0};
		size_t len;
		if (!QueryDosDeviceW(drive, target, PATH_CHARS))
			continue;
		len = wcslen(target);
		if (len && wcsncmp(path, target, len) == 0 && path[len] == L'\\' &&
		    wcslen(path + len) + 3 < PATH_CHARS) {
			_snwprintf(out, PATH_CHARS, L"%ls%ls", drive, path + len);
			out[PATH_CHARS - 1] = 0;
			wcscpy(path, out);
			return;
		}
	}
}

static void read_path(HANDLE process, void *base, HANDLE file, void *name_ptr, WORD unicode, struct module *m)
{
	void *remote = NULL;
	SIZE_T read = 0;

	m->path[0] = 0;
	m->file_path[0] = 0;
	if (file && file != INVALID_HANDLE_VALUE && final_path) {
		/* 0: FILE_NAME_NORMALIZED | VOLUME_NAME_DOS, "\\?\C:\..." */
		DWORD n = final_path(file, m->file_path, PATH_CHARS - 1, 0);
		if (n == 0 || n >= PATH_CHARS - 1)
			m->file_path[0] = 0;
	}
	if (mapped_name && mapped_name(process, base, m->path, PATH_CHARS - 1) > 0) {
		drive_path(m->path);
		return;
	}
	/* lpImageName: a pointer, in the debuggee, to the name's pointer. */
	if (!name_ptr || !ReadProcessMemory(process, name_ptr, &remote, sizeof(remote), &read) || !remote)
		return;
	if (unicode) {
		if (ReadProcessMemory(process, remote, m->path, (PATH_CHARS - 1) * sizeof(wchar_t), &read) ||
		    read > 0)
			m->path[PATH_CHARS - 1] = 0;
		else
			m->path[0] = 0;
	} else {
		char narrow[PATH_CHARS];
		if (ReadProcessMemory(process, remote, narrow, sizeof(narrow) - 1, &read) || read > 0) {
			narrow[sizeof(narrow) - 1] = 0;
			MultiByteToWideChar(CP_ACP, 0, narrow, -1, m->path, PATH_CHARS);
		}
	}
}

static void add_module(HANDLE process, int dll, void *base, HANDLE file, void *name_ptr, WORD unicode)
{
	struct module *m;

	if (module_count >= MAX_MODULES)
		return;
	m = &modules[module_count++];
	m->dll = dll;
	m->actual = (unsigned long long)(ULONG_PTR)base;
	read_preferred(process, file, base, m);
	read_path(process, base, file, name_ptr, unicode, m);
}

static void put_json_string(FILE *out, const wchar_t *w)
{
	char utf8[PATH_CHARS * 4];

	if (!WideCharToMultiByte(CP_UTF8, 0, w, -1, utf8, sizeof(utf8), NULL, NULL))
		utf8[0] = 0;
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)utf8; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static int write_report(const wchar_t *path, int first_breakpoint, const char *ended, DWORD exit_code)
{
	FILE *out = _wfopen(path, L"wb");

	if (!out)
		return 0;
	fputs("{\"modules\": [", out);
	for (int i = 0; i < module_count; i++) {
		const struct module *m = &modules[i];
		fprintf(out, "%s\n {\"kind\": \"%s\", \"path\": ", i ? "," : "", m->dll ? "dll" : "exe");
		put_json_string(out, m->path);
		fputs(", \"file_path\": ", out);
		put_json_string(out, m->file_path);
		fprintf(out, ", \"actual\": \"0x%llx\", \"preferred\": \"0x%llx\", \"size_of_image\": %lu}",
			m->actual, m->preferred, m->size);
	}
	fprintf(out, "],\n\"first_breakpoint\": %s, \"ended\": \"%s\", \"exit_code\": %lu}\n",
		first_breakpoint ? "true" : "false", ended, (unsigned long)exit_code);
	return fclose(out) == 0;
}

int wmain(int argc, wchar_t **argv)
{
	DEBUG_EVENT e;
	HANDLE process = NULL;
	HMODULE psapi, kernel32;
	DWORD quiet_ms, exit_code = 0;
	int first_breakpoint = 0, running = 1;
	const char *ended = "exit";

	if (argc < 4)
		return 2;
	quiet_ms = (DWORD)wcstoul(argv[2], NULL, 10);
	if ((psapi = LoadLibraryW(L"psapi.dll")))
		mapped_name = (mapped_name_fn)(void (*)(void))GetProcAddress(psapi, "GetMappedFileNameW");
	if ((kernel32 = GetModuleHandleW(L"kernel32.dll")))
		final_path =
			(final_path_fn)(void (*)(void))GetProcAddress(kernel32, "GetFinalPathNameByHandleW");
	if (!(process = start_program(argc - 3, argv + 3, DEBUG_ONLY_THIS_PROCESS)))
		return 3;
	while (running) {
		DWORD status = DBG_CONTINUE;
		/* Until the loader's breakpoint, wait as long as it takes. */
		if (!WaitForDebugEvent(&e, first_breakpoint ? quiet_ms : 120000)) {
			ended = first_breakpoint ? "quiet" : "error";
			break;
		}
		switch (e.dwDebugEventCode) {
		case CREATE_PROCESS_DEBUG_EVENT:
			add_module(process, 0, e.u.CreateProcessInfo.lpBaseOfImage,
				   e.u.CreateProcessInfo.hFile, e.u.CreateProcessInfo.lpImageName,
				   e.u.CreateProcessInfo.fUnicode);
			if (e.u.CreateProcessInfo.hFile)
				CloseHandle(e.u.CreateProcessInfo.hFile);
			break;
		case LOAD_DLL_DEBUG_EVENT:
			add_module(process, 1, e.u.LoadDll.lpBaseOfDll, e.u.LoadDll.hFile,
				   e.u.LoadDll.lpImageName, e.u.LoadDll.fUnicode);
			if (e.u.LoadDll.hFile)
				CloseHandle(e.u.LoadDll.hFile);
			break;
		case EXCEPTION_DEBUG_EVENT:
			if (!first_breakpoint &&
			    e.u.Exception.ExceptionRecord.ExceptionCode == EXCEPTION_BREAKPOINT)
				first_breakpoint = 1;
			else
				status = DBG_EXCEPTION_NOT_HANDLED;
			break;
		case EXIT_PROCESS_DEBUG_EVENT:
			exit_code = e.u.ExitProcess.dwExitCode;
			running = 0;
			break;
		default:
			break;
		}
		ContinueDebugEvent(e.dwProcessId, e.dwThreadId, status);
	}
	if (running) {
		/* Ended here: drain the events until the process is gone. */
		TerminateProcess(process, 1);
		for (int i = 0; i < 10000 && WaitForDebugEvent(&e, 5000); i++) {
			if (e.dwDebugEventCode == CREATE_PROCESS_DEBUG_EVENT && e.u.CreateProcessInfo.hFile)
				CloseHandle(e.u.CreateProcessInfo.hFile);
			if (e.dwDebugEventCode == LOAD_DLL_DEBUG_EVENT && e.u.LoadDll.hFile)
				CloseHandle(e.u.LoadDll.hFile);
			ContinueDebugEvent(e.dwProcessId, e.dwThreadId,
					   e.dwDebugEventCode == EXCEPTION_DEBUG_EVENT
						   ? DBG_EXCEPTION_NOT_HANDLED
						   : DBG_CONTINUE);
			if (e.dwDebugEventCode == EXIT_PROCESS_DEBUG_EVENT)
				break;
		}
	}
	CloseHandle(process);
	return write_report(argv[1], first_breakpoint, ended, exit_code) ? 0 : 4;
}
