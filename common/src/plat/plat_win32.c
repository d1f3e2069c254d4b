/*
 * plat_win32.c - plat.h on Windows, XP-safe (_WIN32_WINNT 0x0501): only
 * calls that Windows XP's kernel32 and advapi32 export.
 */
#ifdef _WIN32

#include "loadlab/plat.h"
#include "plat_win32_int.h"

#include <windows.h>

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

#define PUT(c)                                                                          \
	do {                                                                            \
		if (n + 2 > PLAT_MAX_COMMAND_LINE)                                      \
			return err_set(LL_ETOOBIG, "The command line is too long.");    \
		line[n++] = (c);                                                        \
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

int plat_win32_std_handles(const struct plat_spawn_options *options, HANDLE *in, HANDLE *out, HANDLE *err)
{
	*in = plat_win32_open_inheritable(NULL, false);
	*out = plat_win32_open_inheritable(options->stdout_path, true);
	if (options->stderr_path && options->stdout_path && strcmp(options->stderr_path, options->stdout_path) == 0) {
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

int plat_spawn(const struct plat_spawn_options *options, struct plat_process **ret_process)
{
	STARTUPINFOA si;
	PROCESS_INFORMATION pi;
	HANDLE in = INVALID_HANDLE_VALUE, out = INVALID_HANDLE_VALUE, err = INVALID_HANDLE_VALUE;
	struct plat_process *p = NULL;
	char *line = NULL, *env = NULL;
	size_t len = 0;
	int rc;

	if (!options->argv || !options->argv[0])
		return err_set(LL_EINVAL, "No program to start.");
	line = malloc(PLAT_MAX_COMMAND_LINE + 1);
	p = calloc(1, sizeof(*p));
	if (!line || !p) {
		rc = LL_ENOMEM;
		goto out;
	}
	line[0] = '\0';
	for (size_t i = 0; options->argv[i]; i++)
		if (i >= PLAT_MAX_ARGS || (rc = plat_win32_append_arg(line, &len, options->argv[i])) < 0) {
			rc = i >= PLAT_MAX_ARGS ? err_set(LL_ETOOBIG, "Too many arguments.") : rc;
			goto out;
		}
	if ((rc = plat_win32_environment(options->env_add, &env)) < 0)
		goto out;
	if ((rc = plat_win32_std_handles(options, &in, &out, &err)) < 0)
		goto out;
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	si.dwFlags = STARTF_USESTDHANDLES;
	si.hStdInput = in;
	si.hStdOutput = out;
	si.hStdError = err;
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
	if (in != INVALID_HANDLE_VALUE)
		CloseHandle(in);
	if (out != INVALID_HANDLE_VALUE)
		CloseHandle(out);
	if (err != INVALID_HANDLE_VALUE)
		CloseHandle(err);
	free(env);
	free(line);
	free(p);
	return rc;
}

int plat_wait(struct plat_process *process, long long timeout_ms, int *ret_exit_code,
	      long long *ret_wall_us)
{
	if (process->host && !process->exited) {
		int rc = host_wait(process, timeout_ms);
		if (rc < 0)
			return rc;
	}
	if (!process->exited) {
		DWORD ms = timeout_ms < 0 ? INFINITE : timeout_ms > 0x7fffffffLL ? 0x7fffffff : (DWORD)timeout_ms;
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
	if (!TerminateProcess(process->process, 255) && WaitForSingleObject(process->process, 0) != WAIT_OBJECT_0)
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

int plat_run(const struct plat_spawn_options *options, long long timeout_ms, int *ret_exit_code,
	     long long *ret_wall_us)
{
	struct plat_process *p;
	int rc;

	if ((rc = plat_spawn(options, &p)) < 0)
		return rc;
	rc = plat_wait(p, timeout_ms, ret_exit_code, ret_wall_us);
	plat_process_free(p);
	return rc;
}

long long plat_process_id(const struct plat_process *process)
{
	return (long long)process->pid;
}

static bool is_folder(const char *path)
{
	DWORD a = GetFileAttributesA(path);
	return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY);
}

int plat_mkdirs(const char *path)
{
	char copy[PLAT_MAX_PATH + 1];
	size_t len = strlen(path);

	if (len == 0 || len > PLAT_MAX_PATH)
		return err_set(LL_EINVAL, "Bad folder path.");
	memcpy(copy, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (copy[i] != '/' && copy[i] != '\\' && copy[i] != '\0')
			continue;
		if (i == 2 && copy[1] == ':')
			continue; /* "C:\" */
		char saved = copy[i];
		copy[i] = '\0';
		if (!CreateDirectoryA(copy, NULL) && GetLastError() != ERROR_ALREADY_EXISTS)
			return err_set(LL_EIO, "Cannot create folder %s (error %lu).", copy,
				       (unsigned long)GetLastError());
		copy[i] = saved;
	}
	if (!is_folder(path))
		return err_set(LL_EIO, "%s exists and is not a folder.", path);
	return 0;
}

static int remove_tree(const char *path, int depth)
{
	char pattern[PLAT_MAX_PATH + 1];
	WIN32_FIND_DATAA fd;
	HANDLE h;
	int rc = 0;
	DWORD a = GetFileAttributesA(path);

	if (a == INVALID_FILE_ATTRIBUTES)
		return 0;
	if (depth > 64)
		return err_set(LL_ETOOBIG, "Folder tree deeper than 64 levels.");
	/* A reparse point (junction, link) is removed itself, never entered. */
	if (!(a & FILE_ATTRIBUTE_DIRECTORY) || (a & FILE_ATTRIBUTE_REPARSE_POINT)) {
		SetFileAttributesA(path, FILE_ATTRIBUTE_NORMAL);
		if ((a & FILE_ATTRIBUTE_DIRECTORY) ? !RemoveDirectoryA(path) : !DeleteFileA(path))
			return err_set(LL_EIO, "Cannot remove %s (error %lu).", path, (unsigned long)GetLastError());
		return 0;
	}
	if ((size_t)snprintf(pattern, sizeof(pattern), "%s\\*", path) >= sizeof(pattern))
		return err_set(LL_ETOOBIG, "Path %s is too long.", path);
	h = FindFirstFileA(pattern, &fd);
	if (h != INVALID_HANDLE_VALUE) {
		do {
			char child[PLAT_MAX_PATH + 1];
			if (strcmp(fd.cFileName, ".") == 0 || strcmp(fd.cFileName, "..") == 0)
				continue;
			if ((size_t)snprintf(child, sizeof(child), "%s\\%s", path, fd.cFileName) >= sizeof(child))
				rc = err_set(LL_ETOOBIG, "Path below %s is too long.", path);
			else
				rc = remove_tree(child, depth + 1);
		} while (rc == 0 && FindNextFileA(h, &fd));
		FindClose(h);
	}
	if (rc == 0 && !RemoveDirectoryA(path))
		rc = err_set(LL_EIO, "Cannot remove folder %s (error %lu).", path, (unsigned long)GetLastError());
	return rc;
}

int plat_remove_tree(const char *path)
{
	if (strlen(path) == 0 || strlen(path) > PLAT_MAX_PATH)
		return err_set(LL_EINVAL, "Bad path to remove.");
	return remove_tree(path, 0);
}

int plat_copy_file(const char *src, const char *dst)
{
	if (!CopyFileA(src, dst, FALSE))
		return err_set(LL_EIO, "Cannot copy %s to %s (error %lu).", src, dst, (unsigned long)GetLastError());
	return 0;
}

bool plat_file_exists(const char *path)
{
	DWORD a = GetFileAttributesA(path);
	return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
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

/* SHA-256 (FIPS 180-4): XP before SP3 has no SHA-256 provider, so the
 * Windows build carries its own. */
struct sha256 {
	uint32_t h[8];
	uint64_t length;
	unsigned char block[64];
	size_t fill;
};

static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(struct sha256 *s, const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;
	int t;

	for (t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 |
		       p[4 * t + 3];
	for (t = 16; t < 64; t++) {
		uint32_t s0 = ROTR(w[t - 15], 7) ^ ROTR(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = ROTR(w[t - 2], 17) ^ ROTR(w[t - 2], 19) ^ (w[t - 2] >> 10);
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
	e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
	for (t = 0; t < 64; t++) {
		uint32_t t1 = h + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + sha256_k[t] + w[t];
		uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
	s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

static void sha256_update(struct sha256 *s, const unsigned char *p, size_t n)
{
	s->length += n;
	while (n > 0) {
		size_t take = 64 - s->fill < n ? 64 - s->fill : n;
		memcpy(s->block + s->fill, p, take);
		s->fill += take, p += take, n -= take;
		if (s->fill == 64) {
			sha256_block(s, s->block);
			s->fill = 0;
		}
	}
}

static void sha256_final(struct sha256 *s, unsigned char digest[32])
{
	uint64_t bits = s->length * 8;
	unsigned char pad[72] = {0x80};
	size_t padlen = (s->fill < 56 ? 56 : 120) - s->fill;

	for (int i = 0; i < 8; i++)
		pad[padlen + i] = (unsigned char)(bits >> (56 - 8 * i));
	sha256_update(s, pad, padlen + 8);
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 4; k++)
			digest[4 * i + k] = (unsigned char)(s->h[i] >> (24 - 8 * k));
}

int plat_file_sha256(const char *path, char ret_hex[65], long long *ret_size)
{
	static const char digits[] = "0123456789abcdef";
	struct sha256 s = {{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
			    0x5be0cd19}, 0, {0}, 0};
	unsigned char block[65536], digest[32];
	long long size = 0;
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f)
		return err_set(LL_EIO, "Cannot open %s.", path);
	while ((n = fread(block, 1, sizeof(block), f)) > 0) {
		sha256_update(&s, block, n);
		size += (long long)n;
	}
	if (ferror(f)) {
		fclose(f);
		return err_set(LL_EIO, "Cannot read %s.", path);
	}
	fclose(f);
	sha256_final(&s, digest);
	for (int i = 0; i < 32; i++) {
		ret_hex[2 * i] = digits[digest[i] >> 4];
		ret_hex[2 * i + 1] = digits[digest[i] & 15];
	}
	ret_hex[64] = '\0';
	if (ret_size)
		*ret_size = size;
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
	wine_unix_name_fn unix_name =
		kernel32 ? (wine_unix_name_fn)(void (*)(void))GetProcAddress(kernel32, "wine_get_unix_file_name")
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
static int script_redirect(struct script *s, const char *operator, const char *path)
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
	if (options->stderr_path && options->stdout_path && strcmp(options->stderr_path, options->stdout_path) == 0)
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

int plat_run_host(const struct plat_spawn_options *options, long long timeout_ms, int *ret_exit_code,
		  long long *ret_wall_us)
{
	struct plat_process *p;
	int rc;

	if ((rc = plat_spawn_host(options, &p)) < 0)
		return rc;
	rc = plat_wait(p, timeout_ms, ret_exit_code, ret_wall_us);
	plat_process_free(p);
	return rc;
}

#endif /* _WIN32 */
