/*
 * plat_win32.c - plat.h on Windows, XP-safe (_WIN32_WINNT 0x0501): only
 * calls that Windows XP's kernel32 and advapi32 export.
 */
#ifdef _WIN32

#include "loadlab/plat.h"
#include "loadlab/plat_thread.h"
#include "loadlab/plat_spawn_win32.h"

#include <windows.h>
#include <process.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"

struct plat_process {
	HANDLE process;
	DWORD pid;
	bool exited;
	int exit_code;
	LARGE_INTEGER start;
	LARGE_INTEGER end;
	/* A host program under Wine (plat_spawn_host): no usable handle; the
	 * exit code arrives in MARKER, the host PID of its `timeout` in
	 * PID_FILE (this process's paths). */
	bool host;
	char marker[MAX_PATH + 64];
	char pid_file[MAX_PATH + 64];
};

static int host_wait(struct plat_process *process, long long timeout_ms);
static int host_kill(struct plat_process *process);

static long long elapsed_us(LARGE_INTEGER from, LARGE_INTEGER to)
{
	LARGE_INTEGER freq;
	QueryPerformanceFrequency(&freq);
	long long ticks = to.QuadPart - from.QuadPart;
	return freq.QuadPart ? (long long)((double)ticks * 1e6 / (double)freq.QuadPart) : 0;
}

/* Appends ARG to LINE quoted the way the C runtime's argv parser splits
 * it: backslashes are literal unless they precede a quote, so runs of
 * backslashes before a quote (or the closing quote) are doubled. */
int plat_win32_append_arg(char *line, size_t *len, const char *arg)
{
	size_t n = *len;
	bool quote = arg[0] == '\0' || strpbrk(arg, " \t\n\v\"") != NULL;

#define PUT(c)                                                                       \
	do {                                                                         \
		if (n + 2 > PLAT_MAX_COMMAND_LINE)                                   \
			return err_set(LL_ETOOBIG, "The command line is too long."); \
		line[n++] = (c);                                                     \
	} while (0)
	if (n > 0)
		PUT(' ');
	if (!quote) {
		for (const char *p = arg; *p; p++)
			PUT(*p);
	} else {
		PUT('"');
		for (const char *p = arg;; p++) {
			size_t slashes = 0;
			while (*p == '\\') {
				p++;
				slashes++;
			}
			if (*p == '\0') {
				for (size_t k = 0; k < slashes * 2; k++)
					PUT('\\');
				break;
			}
			if (*p == '"') {
				for (size_t k = 0; k < slashes * 2 + 1; k++)
					PUT('\\');
				PUT('"');
			} else {
				for (size_t k = 0; k < slashes; k++)
					PUT('\\');
				PUT(*p);
			}
		}
		PUT('"');
	}
#undef PUT
	line[n] = '\0';
	*len = n;
	return 0;
}

static size_t key_length(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) : strlen(entry);
}

/* The parent's environment block with ADD applied; malloc'd. */
int plat_win32_environment(const char *const *add, char **ret_block)
{
	char *parent = GetEnvironmentStringsA(), *block = NULL, *p;
	size_t size = 1, extra = 0, n = 0;

	if (!parent)
		return err_set(LL_EIO, "Cannot read the environment.");
	for (p = parent; *p; p += strlen(p) + 1)
		size += strlen(p) + 1;
	for (; add && add[extra]; extra++)
		size += strlen(add[extra]) + 1;
	if (extra > PLAT_MAX_ARGS) {
		FreeEnvironmentStringsA(parent);
		return err_set(LL_ETOOBIG, "More than %u environment additions.", PLAT_MAX_ARGS);
	}
	block = malloc(size + 1);
	if (!block) {
		FreeEnvironmentStringsA(parent);
		return LL_ENOMEM;
	}
	for (p = parent; *p; p += strlen(p) + 1) {
		bool replaced = false;
		for (size_t j = 0; j < extra; j++)
			if (key_length(p) == key_length(add[j]) && _strnicmp(p, add[j], key_length(p)) == 0)
				replaced = true;
		if (!replaced) {
			memcpy(block + n, p, strlen(p) + 1);
			n += strlen(p) + 1;
		}
	}
	for (size_t j = 0; j < extra; j++) {
		memcpy(block + n, add[j], strlen(add[j]) + 1);
		n += strlen(add[j]) + 1;
	}
	block[n] = '\0';
	if (n == 0)
		block[1] = '\0';
	FreeEnvironmentStringsA(parent);
	*ret_block = block;
	return 0;
}

HANDLE plat_win32_open_inheritable(const char *path, bool write)
{
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
	return CreateFileA(path ? path : "NUL", write ? GENERIC_WRITE : GENERIC_READ,
			   FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, write ? CREATE_ALWAYS : OPEN_EXISTING,
			   FILE_ATTRIBUTE_NORMAL, NULL);
}

void plat_win32_close_std_handles(HANDLE in, HANDLE out, HANDLE err)
{
	HANDLE handles[3] = {in, out, err};

	for (int i = 0; i < 3; i++)
		if (handles[i] != INVALID_HANDLE_VALUE)
			CloseHandle(handles[i]);
}

int plat_win32_std_handles(const struct plat_spawn_options *options, HANDLE *in, HANDLE *out, HANDLE *err)
{
	*in = plat_win32_open_inheritable(NULL, false);
	*out = plat_win32_open_inheritable(options->stdout_path, true);
	if (options->stderr_path && options->stdout_path &&
	    strcmp(options->stderr_path, options->stdout_path) == 0) {
		if (!DuplicateHandle(GetCurrentProcess(), *out, GetCurrentProcess(), err, 0, TRUE,
				     DUPLICATE_SAME_ACCESS))
			*err = INVALID_HANDLE_VALUE;
	} else {
		*err = plat_win32_open_inheritable(options->stderr_path, true);
	}
	if (*in == INVALID_HANDLE_VALUE || *out == INVALID_HANDLE_VALUE || *err == INVALID_HANDLE_VALUE)
		return err_set(LL_EIO, "Cannot open the output files of %s (error %lu).", options->argv[0],
			       (unsigned long)GetLastError());
	return 0;
}

int plat_win32_start_info(const struct plat_spawn_options *options, char *line, char **ret_env, HANDLE *in,
			  HANDLE *out, HANDLE *err, STARTUPINFOA *si)
{
	size_t len = 0;
	int rc;

	line[0] = '\0';
	for (size_t i = 0; options->argv[i]; i++) {
		if (i >= PLAT_MAX_ARGS)
			return err_set(LL_ETOOBIG, "Too many arguments.");
		if ((rc = plat_win32_append_arg(line, &len, options->argv[i])) < 0)
			return rc;
	}
	if ((rc = plat_win32_environment(options->env_add, ret_env)) < 0 ||
	    (rc = plat_win32_std_handles(options, in, out, err)) < 0)
		return rc;
	memset(si, 0, sizeof(*si));
	si->cb = sizeof(*si);
	si->dwFlags = STARTF_USESTDHANDLES;
	si->hStdInput = *in;
	si->hStdOutput = *out;
	si->hStdError = *err;
	return 0;
}

int plat_spawn(const struct plat_spawn_options *options, struct plat_process **ret_process)
{
	STARTUPINFOA si;
	PROCESS_INFORMATION pi;
	HANDLE in = INVALID_HANDLE_VALUE, out = INVALID_HANDLE_VALUE, err = INVALID_HANDLE_VALUE;
	struct plat_process *p = NULL;
	char *line = NULL, *env = NULL;
	int rc;

	if (!options->argv || !options->argv[0])
		return err_set(LL_EINVAL, "No program to start.");
	line = malloc(PLAT_MAX_COMMAND_LINE + 1);
	p = calloc(1, sizeof(*p));
	if (!line || !p) {
		rc = LL_ENOMEM;
		goto out;
	}
	if ((rc = plat_win32_start_info(options, line, &env, &in, &out, &err, &si)) < 0)
		goto out;
	QueryPerformanceCounter(&p->start);
	if (!CreateProcessA(options->argv[0], line, NULL, NULL, TRUE, CREATE_NO_WINDOW, env, options->cwd,
			    &si, &pi)) {
		rc = err_set(LL_EIO, "Cannot start %s (error %lu).", options->argv[0],
			     (unsigned long)GetLastError());
		goto out;
	}
	CloseHandle(pi.hThread);
	p->process = pi.hProcess;
	p->pid = pi.dwProcessId;
	*ret_process = p;
	p = NULL;
	rc = 0;
out:
	plat_win32_close_std_handles(in, out, err);
	free(env);
	free(line);
	free(p);
	return rc;
}

int plat_wait(struct plat_process *process, long long timeout_ms, int *ret_exit_code, long long *ret_wall_us)
{
	if (process->host && !process->exited) {
		int rc = host_wait(process, timeout_ms);
		if (rc < 0)
			return rc;
	}
	if (!process->exited) {
		DWORD ms = timeout_ms < 0              ? INFINITE
			   : timeout_ms > 0x7fffffffLL ? 0x7fffffff
						       : (DWORD)timeout_ms;
		DWORD r = WaitForSingleObject(process->process, ms);
		DWORD code = 0;
		if (r == WAIT_TIMEOUT)
			return err_set(LL_ERANGE, "Process %lu still running after %lld ms.",
				       (unsigned long)process->pid, timeout_ms);
		if (r != WAIT_OBJECT_0)
			return err_set(LL_EIO, "Waiting for process %lu failed (error %lu).",
				       (unsigned long)process->pid, (unsigned long)GetLastError());
		QueryPerformanceCounter(&process->end);
		GetExitCodeProcess(process->process, &code);
		process->exit_code = (int)code;
		process->exited = true;
	}
	if (ret_exit_code)
		*ret_exit_code = process->exit_code;
	if (ret_wall_us)
		*ret_wall_us = elapsed_us(process->start, process->end);
	return 0;
}

int plat_kill(struct plat_process *process)
{
	if (process->exited)
		return 0;
	if (process->host)
		return host_kill(process);
	if (!TerminateProcess(process->process, 255) &&
	    WaitForSingleObject(process->process, 0) != WAIT_OBJECT_0)
		return err_set(LL_EIO, "Cannot end process %lu (error %lu).", (unsigned long)process->pid,
			       (unsigned long)GetLastError());
	WaitForSingleObject(process->process, 10000);
	return plat_wait(process, 0, NULL, NULL) < 0 ? LL_EIO : 0;
}

int plat_terminate(struct plat_process *process, long long grace_ms)
{
	(void)grace_ms;
	return plat_kill(process);
}

void plat_process_free(struct plat_process *process)
{
	if (!process)
		return;
	if (!process->exited)
		plat_kill(process);
	if (process->host) {
		DeleteFileA(process->marker);
		DeleteFileA(process->pid_file);
	}
	if (process->process)
		CloseHandle(process->process);
	free(process);
}

long long plat_process_id(const struct plat_process *process)
{
	return (long long)process->pid;
}

int plat_find_program(const char *name, char *out, size_t size)
{
	char found[PLAT_MAX_PATH + 1];
	DWORD n = SearchPathA(NULL, name, ".exe", sizeof(found), found, NULL);

	if (n == 0 || n >= sizeof(found))
		return err_set(LL_ENOTFOUND, "%s is not in PATH.", name);
	if (n >= size)
		return err_set(LL_ETOOBIG, "Path of %s is too long.", name);
	memcpy(out, found, n + 1);
	return 0;
}

int plat_system_dll_dir(char *out, size_t size)
{
	char dir[MAX_PATH + 1];
	UINT n = GetSystemDirectoryA(dir, sizeof(dir));

	if (n == 0 || n >= sizeof(dir))
		return err_set(LL_EIO, "Cannot find the system folder.");
	if (n >= size)
		return err_set(LL_ETOOBIG, "The system folder's path is too long.");
	memcpy(out, dir, n + 1);
	return 0;
}

const char *plat_raise_priority(void)
{
	if (SetPriorityClass(GetCurrentProcess(), HIGH_PRIORITY_CLASS))
		return "high";
	return "normal";
}

bool plat_runs_windows_programs(void)
{
	return true;
}

void plat_sleep_ms(long long ms)
{
	Sleep(ms > 0x7fffffffLL ? 0x7fffffff : (DWORD)ms);
}

/* Set with Interlocked* (a full barrier): the console handler runs on a
 * thread of its own. */
static volatile LONG stop_flag;

/* For close, logoff and shutdown Windows ends the process when the
 * handler returns, so it waits a little for the agent to give its task
 * back. */
static BOOL WINAPI on_console_event(DWORD type)
{
	InterlockedExchange(&stop_flag, 1);
	if (type == CTRL_CLOSE_EVENT || type == CTRL_LOGOFF_EVENT || type == CTRL_SHUTDOWN_EVENT)
		Sleep(4000);
	return TRUE;
}

int plat_install_stop_handler(void)
{
	if (!SetConsoleCtrlHandler(on_console_event, TRUE))
		return err_set(LL_EIO, "Cannot install the console control handler (error %lu).",
			       (unsigned long)GetLastError());
	return 0;
}

bool plat_stop_requested(void)
{
	return InterlockedCompareExchange(&stop_flag, 0, 0) != 0;
}

void plat_request_stop(void)
{
	InterlockedExchange(&stop_flag, 1);
}

void plat_host_name(char *out, size_t size)
{
	DWORD n = (DWORD)size;

	if (!GetComputerNameA(out, &n) || !*out)
		snprintf(out, size, "agent");
	out[size - 1] = '\0';
}

unsigned plat_random_seed(void)
{
	LARGE_INTEGER counter;

	QueryPerformanceCounter(&counter);
	return (unsigned)counter.LowPart ^ (unsigned)GetTickCount() * 2654435761u ^
	       (unsigned)GetCurrentProcessId() << 16;
}

struct plat_thread {
	HANDLE handle;
	void (*fn)(void *arg);
	void *arg;
};

static unsigned __stdcall thread_main(void *p)
{
	struct plat_thread *t = p;

	t->fn(t->arg);
	return 0;
}

int plat_thread_start(void (*fn)(void *arg), void *arg, struct plat_thread **ret_thread)
{
	struct plat_thread *t = calloc(1, sizeof(*t));
	uintptr_t handle;

	if (!t)
		return err_set(LL_ENOMEM, "Out of memory.");
	t->fn = fn;
	t->arg = arg;
	/* _beginthreadex, not CreateThread: the C runtime sets up its
	 * per-thread state. */
	handle = _beginthreadex(NULL, 0, thread_main, t, 0, NULL);
	if (handle == 0) {
		free(t);
		return err_set(LL_EIO, "Cannot start a thread.");
	}
	t->handle = (HANDLE)handle;
	*ret_thread = t;
	return 0;
}

void plat_thread_join(struct plat_thread *thread)
{
	if (!thread)
		return;
	WaitForSingleObject(thread->handle, INFINITE);
	CloseHandle(thread->handle);
	free(thread);
}

/* ---- Host programs under Wine (plat.h, "Host programs") ---- */

/* kernel32's wine_get_unix_file_name (Wine only): the Unix path of a DOS
 * path, allocated on the process heap. */
typedef char *(__cdecl *wine_unix_name_fn)(const WCHAR *dos_path);

bool plat_under_wine(void)
{
	HMODULE ntdll = GetModuleHandleA("ntdll.dll");
	return ntdll && GetProcAddress(ntdll, "wine_get_version") != NULL;
}

int plat_host_path(const char *path, char *out, size_t size)
{
	HMODULE kernel32 = GetModuleHandleA("kernel32.dll");
	wine_unix_name_fn unix_name = kernel32 ? (wine_unix_name_fn)(void (*)(void))GetProcAddress(
							 kernel32, "wine_get_unix_file_name")
					       : NULL;
	WCHAR *wide;
	char *name;
	size_t n;
	int rc = 0;

	if (!unix_name)
		return err_set(LL_EUNSUPPORTED, "Host (Unix) paths exist only under Wine.");
	if (strlen(path) > PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "Path %s is too long.", path);
	wide = malloc((PLAT_MAX_PATH + 1) * sizeof(*wide));
	if (!wide)
		return LL_ENOMEM;
	if (!MultiByteToWideChar(CP_ACP, 0, path, -1, wide, PLAT_MAX_PATH + 1)) {
		free(wide);
		return err_set(LL_EINVAL, "Cannot convert the path %s.", path);
	}
	name = unix_name(wide);
	free(wide);
	if (!name)
		return err_set(LL_EIO, "Wine has no Unix path for %s.", path);
	n = strlen(name);
	if (n >= size)
		rc = err_set(LL_ETOOBIG, "The Unix path of %s is too long.", path);
	else
		memcpy(out, name, n + 1);
	HeapFree(GetProcessHeap(), 0, name);
	return rc;
}

/* The host path of the file PATH: its folder converted (it must exist),
 * then the file's name, which need not exist yet. */
static int host_file_path(const char *path, char *out, size_t size)
{
	const char *slash = NULL;
	char folder[PLAT_MAX_PATH + 1];
	size_t len, name_len;
	int rc;

	for (const char *p = path; *p; p++)
		if (*p == '\\' || *p == '/')
			slash = p;
	if (!slash || slash == path || (size_t)(slash - path) > PLAT_MAX_PATH)
		return err_set(LL_EINVAL, "%s is not a full file path.", path);
	memcpy(folder, path, (size_t)(slash - path));
	folder[slash - path] = '\0';
	if (slash - path == 2 && folder[1] == ':')
		folder[2] = '\\', folder[3] = '\0'; /* "C:\" */
	if ((rc = plat_host_path(folder, out, size)) < 0)
		return rc;
	len = strlen(out);
	name_len = strlen(slash + 1);
	if (len + 1 + name_len >= size)
		return err_set(LL_ETOOBIG, "The Unix path of %s is too long.", path);
	if (len == 0 || out[len - 1] != '/')
		out[len++] = '/';
	memcpy(out + len, slash + 1, name_len + 1);
	return 0;
}

int plat_find_host_program(const char *name, char *out, size_t size)
{
	static const char *const folders[] = {"Z:\\usr\\local\\bin", "Z:\\usr\\bin", "Z:\\bin"};
	char path[MAX_PATH + 1];

	if (!plat_under_wine())
		return err_set(LL_EUNSUPPORTED, "Host programs can be run only under Wine.");
	if (strpbrk(name, "\\/:") || strlen(name) > 128)
		return err_set(LL_EINVAL, "%s is not a bare program name.", name);
	for (size_t i = 0; i < sizeof(folders) / sizeof(folders[0]); i++) {
		snprintf(path, sizeof(path), "%s\\%s", folders[i], name);
		if (!plat_file_exists(path))
			continue;
		if (strlen(path) >= size)
			return err_set(LL_ETOOBIG, "Path of %s is too long.", name);
		memcpy(out, path, strlen(path) + 1);
		return 0;
	}
	return err_set(LL_ENOTFOUND, "%s is not among the host's programs.", name);
}

/* A growing text; LL_ETOOBIG past PLAT_MAX_COMMAND_LINE. */
struct script {
	char text[PLAT_MAX_COMMAND_LINE + 1];
	size_t len;
};

static int script_raw(struct script *s, const char *text)
{
	size_t n = strlen(text);
	if (s->len + n > PLAT_MAX_COMMAND_LINE - 16)
		return err_set(LL_ETOOBIG, "The host command is too long.");
	memcpy(s->text + s->len, text, n + 1);
	s->len += n;
	return 0;
}

/* Appends WORD single-quoted for the POSIX shell (a ' inside becomes '\''),
 * so the shell gives it to the program unchanged: nothing in it expands. */
static int script_word(struct script *s, const char *word)
{
	int rc;

	if ((rc = script_raw(s, " '")) < 0)
		return rc;
	for (const char *p = word; *p; p++) {
		char one[2] = {*p, '\0'};
		if ((rc = script_raw(s, *p == '\'' ? "'\\''" : one)) < 0)
			return rc;
	}
	return script_raw(s, "'");
}

/* Appends a redirection OPERATOR to the host path of PATH (NULL: /dev/null). */
static int script_redirect(struct script *s, const char *operator, const char * path)
{
	char unix_path[PLAT_MAX_PATH + 1];
	int rc;

	if (!path)
		memcpy(unix_path, "/dev/null", sizeof("/dev/null"));
	else if ((rc = host_file_path(path, unix_path, sizeof(unix_path))) < 0)
		return rc;
	if ((rc = script_raw(s, " ")) < 0 || (rc = script_raw(s, operator)) < 0)
		return rc;
	return script_word(s, unix_path);
}

int plat_spawn_host(const struct plat_spawn_options *options, struct plat_process **ret_process)
{
	static LONG counter;
	const char *argv[4] = {NULL, "-c", NULL, NULL};
	char shell[MAX_PATH + 1], temp[MAX_PATH + 1], marker_tmp[MAX_PATH + 64], pid_tmp[MAX_PATH + 64];
	char unix_path[PLAT_MAX_PATH + 1], number[32];
	struct plat_spawn_options o = {0};
	struct plat_process *p = NULL;
	struct script *s = NULL;
	DWORD n;
	LONG id;
	int rc;

	if (!plat_under_wine())
		return err_set(LL_EUNSUPPORTED, "Host programs can be run only under Wine.");
	if (!options->argv || !options->argv[0])
		return err_set(LL_EINVAL, "No program to start.");
	if (options->env_add && options->env_add[0])
		return err_set(LL_EINVAL, "Environment additions are not supported for host programs.");
	if ((rc = plat_find_host_program("sh", shell, sizeof(shell))) < 0)
		return rc;
	n = GetTempPathA(sizeof(temp), temp);
	if (n == 0 || n >= sizeof(temp) - 1)
		return err_set(LL_EIO, "Cannot find the temporary folder.");
	if (temp[n - 1] != '\\')
		temp[n++] = '\\', temp[n] = '\0';
	id = InterlockedIncrement(&counter);
	s = malloc(sizeof(*s));
	p = calloc(1, sizeof(*p));
	if (!s || !p) {
		rc = LL_ENOMEM;
		goto out;
	}
	snprintf(p->marker, sizeof(p->marker), "%sloadlab-host-%lu-%ld.code", temp,
		 (unsigned long)GetCurrentProcessId(), (long)id);
	snprintf(marker_tmp, sizeof(marker_tmp), "%s.tmp", p->marker);
	snprintf(p->pid_file, sizeof(p->pid_file), "%sloadlab-host-%lu-%ld.pid", temp,
		 (unsigned long)GetCurrentProcessId(), (long)id);
	snprintf(pid_tmp, sizeof(pid_tmp), "%s.tmp", p->pid_file);
	DeleteFileA(p->marker);
	DeleteFileA(p->pid_file);

	/* exec <null >null 2>&1; PATH=...; cd CWD && {
	 *   timeout -k 5 MAX PROGRAM ARGS... <null >OUT 2>ERR &
	 *   echo $! >PID.tmp && mv -f PID.tmp PID; wait $!; };
	 * echo $? >CODE.tmp && mv -f CODE.tmp CODE */
	s->len = 0;
	s->text[0] = '\0';
	/* The shell's own messages ("Terminated") go nowhere, not to the
	 * streams Wine handed it. */
	if ((rc = script_raw(s, "exec </dev/null >/dev/null 2>&1; PATH=/usr/local/bin:/usr/bin:/bin; "
				"export PATH; cd")) < 0)
		goto out;
	if (options->cwd) {
		if ((rc = plat_host_path(options->cwd, unix_path, sizeof(unix_path))) < 0 ||
		    (rc = script_word(s, unix_path)) < 0)
			goto out;
	} else if ((rc = script_word(s, "/")) < 0) {
		goto out;
	}
	snprintf(number, sizeof(number), " %d", PLAT_HOST_MAX_SECONDS);
	if ((rc = script_raw(s, " && { timeout -k 5")) < 0 || (rc = script_raw(s, number)) < 0)
		goto out;
	if ((rc = plat_host_path(options->argv[0], unix_path, sizeof(unix_path))) < 0 ||
	    (rc = script_word(s, unix_path)) < 0)
		goto out;
	for (size_t i = 1; options->argv[i]; i++)
		if (i >= PLAT_MAX_ARGS || (rc = script_word(s, options->argv[i])) < 0) {
			rc = i >= PLAT_MAX_ARGS ? err_set(LL_ETOOBIG, "Too many arguments.") : rc;
			goto out;
		}
	if ((rc = script_raw(s, " </dev/null")) < 0 ||
	    (rc = script_redirect(s, ">", options->stdout_path)) < 0)
		goto out;
	if (options->stderr_path && options->stdout_path &&
	    strcmp(options->stderr_path, options->stdout_path) == 0)
		rc = script_raw(s, " 2>&1");
	else
		rc = script_redirect(s, "2>", options->stderr_path);
	if (rc < 0 || (rc = script_raw(s, " & echo $! >")) < 0 ||
	    (rc = host_file_path(pid_tmp, unix_path, sizeof(unix_path))) < 0 ||
	    (rc = script_word(s, unix_path)) < 0 || (rc = script_raw(s, " && mv -f")) < 0 ||
	    (rc = script_word(s, unix_path)) < 0 ||
	    (rc = host_file_path(p->pid_file, unix_path, sizeof(unix_path))) < 0 ||
	    (rc = script_word(s, unix_path)) < 0 || (rc = script_raw(s, "; wait $!; }; echo $? >")) < 0 ||
	    (rc = host_file_path(marker_tmp, unix_path, sizeof(unix_path))) < 0 ||
	    (rc = script_word(s, unix_path)) < 0 || (rc = script_raw(s, " && mv -f")) < 0 ||
	    (rc = script_word(s, unix_path)) < 0 ||
	    (rc = host_file_path(p->marker, unix_path, sizeof(unix_path))) < 0 ||
	    (rc = script_word(s, unix_path)) < 0)
		goto out;

	argv[0] = shell;
	argv[2] = s->text;
	o.argv = argv;
	QueryPerformanceCounter(&p->start);
	{
		struct plat_process *started = NULL;
		if ((rc = plat_spawn(&o, &started)) < 0)
			goto out;
		/* Wine gives no usable handle for a Unix program. */
		if (started->process)
			CloseHandle(started->process);
		free(started);
	}
	p->host = true;
	*ret_process = p;
	p = NULL;
	rc = 0;
out:
	free(p);
	free(s);
	return rc;
}

/* Reads the exit code the host's shell wrote to MARKER; 1 when it is
 * there, 0 when not yet. */
static int read_marker(struct plat_process *process)
{
	FILE *f;
	int code;

	if (!plat_file_exists(process->marker))
		return 0;
	f = fopen(process->marker, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &code) != 1)
		code = 255;
	fclose(f);
	QueryPerformanceCounter(&process->end);
	process->exit_code = code;
	process->exited = true;
	DeleteFileA(process->marker);
	return 1;
}

/* Polls for the marker: every 2 ms at first, then every 20 ms. */
static int host_wait(struct plat_process *process, long long timeout_ms)
{
	DWORD started = GetTickCount();

	for (unsigned polls = 0;; polls++) {
		if (read_marker(process))
			return 0;
		if (timeout_ms >= 0 && (long long)(DWORD)(GetTickCount() - started) >= timeout_ms)
			return err_set(LL_ERANGE, "Host program still running after %lld ms.", timeout_ms);
		Sleep(polls < 50 ? 2 : 20);
	}
}

/* Has the host end the program: SIGTERM to its `timeout` (which passes it
 * on), by the PID the shell wrote; then waits up to 10 s for the marker. */
static int host_kill(struct plat_process *process)
{
	DWORD started = GetTickCount();
	bool sent = false;

	while ((DWORD)(GetTickCount() - started) < 10000) {
		if (read_marker(process))
			return 0;
		if (!sent && plat_file_exists(process->pid_file)) {
			FILE *f = fopen(process->pid_file, "r");
			long pid = 0;
			if (f) {
				if (fscanf(f, "%ld", &pid) != 1)
					pid = 0;
				fclose(f);
			}
			if (pid > 1) {
				char shell[MAX_PATH + 1], command[64];
				const char *argv[] = {shell, "-c", command, NULL};
				struct plat_spawn_options o = {.argv = argv};
				struct plat_process *killer = NULL;
				snprintf(command, sizeof(command), "kill -TERM %ld", pid);
				if (plat_find_host_program("sh", shell, sizeof(shell)) == 0 &&
				    plat_spawn(&o, &killer) == 0) {
					if (killer->process)
						CloseHandle(killer->process);
					free(killer);
				}
				sent = true;
			}
		}
		Sleep(20);
	}
	return err_set(LL_EIO, "The host program did not end.");
}

#endif /* _WIN32 */
