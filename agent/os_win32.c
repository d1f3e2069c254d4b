/* os.h on Windows, XP and later (only functions XP's kernel32 has). */
#ifdef _WIN32

#include "os.h"

#include "loadlab/err.h"

#include <windows.h>
#include <errno.h>
#include <process.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char os_path_separator = '\\';

static atomic_int stop_flag;

/* Runs on a thread of its own. For close, logoff and shutdown Windows
 * ends the process when the handler returns, so it waits a little for the
 * agent to give its task back. */
static BOOL WINAPI on_console_event(DWORD type)
{
	atomic_store(&stop_flag, 1);
	if (type == CTRL_CLOSE_EVENT || type == CTRL_LOGOFF_EVENT || type == CTRL_SHUTDOWN_EVENT)
		Sleep(4000);
	return TRUE;
}

int os_install_stop_handler(void)
{
	if (!SetConsoleCtrlHandler(on_console_event, TRUE))
		return err_set(LL_EIO, "Cannot install the console control handler (error %lu).",
			       (unsigned long)GetLastError());
	return 0;
}

bool os_stop_requested(void)
{
	return atomic_load(&stop_flag) != 0;
}

void os_request_stop(void)
{
	atomic_store(&stop_flag, 1);
}

bool os_sleep_ms(long long ms)
{
	while (ms > 0) {
		long long slice = ms < 100 ? ms : 100;
		if (os_stop_requested())
			return false;
		Sleep((DWORD)slice);
		ms -= slice;
	}
	return !os_stop_requested();
}

void os_nap_ms(long long ms)
{
	Sleep((DWORD)ms);
}

static bool is_separator(char c)
{
	return c == '/' || c == '\\';
}

int os_make_dirs(const char *path)
{
	char tmp[MAX_PATH];
	size_t len = strlen(path), start = 0;

	if (len == 0 || len >= sizeof(tmp))
		return err_set(LL_EINVAL, "The folder name '%s' is empty or too long.", path);
	memcpy(tmp, path, len + 1);
	/* Skip "C:\" and "\\server\share\": they exist or cannot be made. */
	if (len >= 2 && tmp[1] == ':')
		start = 2;
	else if (len >= 2 && is_separator(tmp[0]) && is_separator(tmp[1])) {
		int parts = 0;
		for (start = 2; start < len && parts < 2; start++)
			if (is_separator(tmp[start]))
				parts++;
	}
	for (size_t i = start + 1; i <= len; i++) {
		if (!is_separator(tmp[i]) && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (!CreateDirectoryA(tmp, NULL) && GetLastError() != ERROR_ALREADY_EXISTS) {
			DWORD e = GetLastError();
			DWORD attributes = GetFileAttributesA(tmp);
			if (attributes == INVALID_FILE_ATTRIBUTES ||
			    !(attributes & FILE_ATTRIBUTE_DIRECTORY))
				return err_set(LL_EIO, "Cannot create folder %s (error %lu).", tmp,
					       (unsigned long)e);
		}
		tmp[i] = path[i];
	}
	return 0;
}

static bool is_missing(DWORD e)
{
	return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND;
}

int os_remove_tree(const char *path)
{
	DWORD attributes = GetFileAttributesA(path);
	WIN32_FIND_DATAA entry;
	HANDLE find;
	char pattern[MAX_PATH], child[MAX_PATH];
	int rc = 0;

	if (attributes == INVALID_FILE_ATTRIBUTES)
		return is_missing(GetLastError())
			       ? 0 : err_set(LL_EIO, "Cannot remove %s (error %lu).", path,
					     (unsigned long)GetLastError());
	if (attributes & FILE_ATTRIBUTE_READONLY)
		SetFileAttributesA(path, attributes & ~(DWORD)FILE_ATTRIBUTE_READONLY);
	if (!(attributes & FILE_ATTRIBUTE_DIRECTORY)) {
		if (!DeleteFileA(path) && !is_missing(GetLastError()))
			return err_set(LL_EIO, "Cannot remove %s (error %lu).", path,
				       (unsigned long)GetLastError());
		return 0;
	}
	/* A junction or folder link is removed, not followed. */
	if (!(attributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
		if ((size_t)snprintf(pattern, sizeof(pattern), "%s\\*", path) >= sizeof(pattern))
			return err_set(LL_EINVAL, "The path %s is too long.", path);
		find = FindFirstFileA(pattern, &entry);
		if (find != INVALID_HANDLE_VALUE) {
			do {
				if (strcmp(entry.cFileName, ".") == 0 || strcmp(entry.cFileName, "..") == 0)
					continue;
				if ((size_t)snprintf(child, sizeof(child), "%s\\%s", path,
						     entry.cFileName) >= sizeof(child))
					rc = err_set(LL_EINVAL, "A path below %s is too long.", path);
				else
					rc = os_remove_tree(child);
			} while (rc == 0 && FindNextFileA(find, &entry));
			FindClose(find);
		}
	}
	if (rc == 0 && !RemoveDirectoryA(path) && !is_missing(GetLastError()))
		rc = err_set(LL_EIO, "Cannot remove folder %s (error %lu).", path,
			     (unsigned long)GetLastError());
	return rc;
}

int os_remove_file(const char *path)
{
	if (!DeleteFileA(path) && !is_missing(GetLastError()))
		return err_set(LL_EIO, "Cannot remove %s (error %lu).", path,
			       (unsigned long)GetLastError());
	return 0;
}

bool os_file_exists(const char *path)
{
	DWORD attributes = GetFileAttributesA(path);

	return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY);
}

bool os_is_executable(const char *path)
{
	return os_file_exists(path);
}

int os_write_file_atomic(const char *path, const void *data, size_t len, bool private_mode)
{
	char tmp[MAX_PATH];
	const char *p = data;
	HANDLE file;
	int rc = 0;

	(void)private_mode; /* the data folder's ACL decides who may read */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp%lu", path,
			     (unsigned long)GetCurrentProcessId()) >= sizeof(tmp))
		return err_set(LL_EINVAL, "The path %s is too long.", path);
	file = CreateFileA(tmp, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	if (file == INVALID_HANDLE_VALUE)
		return err_set(LL_EIO, "Cannot create %s (error %lu).", tmp,
			       (unsigned long)GetLastError());
	while (len > 0 && rc == 0) {
		DWORD chunk = len > (1u << 30) ? (1u << 30) : (DWORD)len, written = 0;
		if (!WriteFile(file, p, chunk, &written, NULL) || written == 0)
			rc = err_set(LL_EIO, "Cannot write %s (error %lu).", tmp,
				     (unsigned long)GetLastError());
		p += written;
		len -= written;
	}
	if (rc == 0 && !FlushFileBuffers(file))
		rc = err_set(LL_EIO, "Cannot flush %s (error %lu).", tmp, (unsigned long)GetLastError());
	CloseHandle(file);
	if (rc == 0 && !MoveFileExA(tmp, path, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
		rc = err_set(LL_EIO, "Cannot rename %s to %s (error %lu).", tmp, path,
			     (unsigned long)GetLastError());
	if (rc < 0)
		DeleteFileA(tmp);
	return rc;
}

int os_list_dir(const char *path, int (*visit)(void *context, const char *name), void *context)
{
	WIN32_FIND_DATAA entry;
	char pattern[MAX_PATH];
	HANDLE find;
	int rc = 0;

	if ((size_t)snprintf(pattern, sizeof(pattern), "%s\\*", path) >= sizeof(pattern))
		return err_set(LL_EINVAL, "The path %s is too long.", path);
	find = FindFirstFileA(pattern, &entry);
	if (find == INVALID_HANDLE_VALUE)
		return is_missing(GetLastError()) || GetLastError() == ERROR_NO_MORE_FILES
			       ? 0 : err_set(LL_EIO, "Cannot read folder %s (error %lu).", path,
					     (unsigned long)GetLastError());
	do {
		if (strcmp(entry.cFileName, ".") != 0 && strcmp(entry.cFileName, "..") != 0)
			rc = visit(context, entry.cFileName);
	} while (rc == 0 && FindNextFileA(find, &entry));
	FindClose(find);
	return rc;
}

int os_make_temp_dir(const char *prefix, char **ret_path)
{
	char base[MAX_PATH], path[MAX_PATH];
	DWORD n = GetTempPathA(sizeof(base), base);

	if (n == 0 || n >= sizeof(base))
		return err_set(LL_EIO, "The system has no temporary folder.");
	for (unsigned i = 0; i < 1000; i++) {
		snprintf(path, sizeof(path), "%s%s-%lu-%lu", base, prefix,
			 (unsigned long)GetCurrentProcessId(), (unsigned long)(GetTickCount() + i));
		if (CreateDirectoryA(path, NULL)) {
			*ret_path = strdup(path);
			return *ret_path ? 0 : err_set(LL_ENOMEM, "Out of memory.");
		}
		if (GetLastError() != ERROR_ALREADY_EXISTS)
			break;
	}
	return err_set(LL_EIO, "Cannot create a folder in %s (error %lu).", base,
		       (unsigned long)GetLastError());
}

void os_host_name(char *out, size_t size)
{
	DWORD n = (DWORD)size;

	if (!GetComputerNameA(out, &n) || !*out)
		snprintf(out, size, "agent");
	out[size - 1] = '\0';
}

unsigned os_random_seed(void)
{
	LARGE_INTEGER counter;

	QueryPerformanceCounter(&counter);
	return (unsigned)counter.LowPart ^ (unsigned)GetTickCount() * 2654435761u ^
	       (unsigned)GetCurrentProcessId() << 16;
}

const char *os_getenv(const char *name)
{
	return getenv(name);
}

/*
 * clock_gettime for common/src/clock.c. mingw-w64 has it only in
 * winpthread, whose static library imports GetTickCount64 (Vista), so the
 * XP-class agent could not start. This one uses what XP has: the
 * performance counter for CLOCK_MONOTONIC and the system time (100 ns
 * ticks since 1601) for CLOCK_REALTIME.
 */
int clock_gettime(clockid_t clock_id, struct timespec *tp)
{
	if (clock_id == CLOCK_MONOTONIC) {
		static LARGE_INTEGER frequency;
		LARGE_INTEGER now;
		if (!frequency.QuadPart && !QueryPerformanceFrequency(&frequency))
			return -1;
		QueryPerformanceCounter(&now);
		tp->tv_sec = (time_t)(now.QuadPart / frequency.QuadPart);
		tp->tv_nsec = (long)((now.QuadPart % frequency.QuadPart) * 1000000000LL /
				     frequency.QuadPart);
		return 0;
	}
	if (clock_id == CLOCK_REALTIME) {
		FILETIME ft;
		ULARGE_INTEGER ticks;
		GetSystemTimeAsFileTime(&ft);
		ticks.LowPart = ft.dwLowDateTime;
		ticks.HighPart = ft.dwHighDateTime;
		ticks.QuadPart -= 116444736000000000ULL; /* 1601-01-01 to 1970-01-01 */
		tp->tv_sec = (time_t)(ticks.QuadPart / 10000000ULL);
		tp->tv_nsec = (long)(ticks.QuadPart % 10000000ULL) * 100;
		return 0;
	}
	errno = EINVAL;
	return -1;
}

struct os_thread {
	HANDLE handle;
	void (*fn)(void *arg);
	void *arg;
};

static unsigned __stdcall thread_main(void *p)
{
	struct os_thread *t = p;

	t->fn(t->arg);
	return 0;
}

int os_thread_start(void (*fn)(void *arg), void *arg, struct os_thread **ret_thread)
{
	struct os_thread *t = calloc(1, sizeof(*t));
	uintptr_t handle;

	if (!t)
		return err_set(LL_ENOMEM, "Out of memory.");
	t->fn = fn;
	t->arg = arg;
	handle = _beginthreadex(NULL, 0, thread_main, t, 0, NULL);
	if (handle == 0) {
		free(t);
		return err_set(LL_EIO, "Cannot start a thread.");
	}
	t->handle = (HANDLE)handle;
	*ret_thread = t;
	return 0;
}

void os_thread_join(struct os_thread *thread)
{
	if (!thread)
		return;
	WaitForSingleObject(thread->handle, INFINITE);
	CloseHandle(thread->handle);
	free(thread);
}

#endif
