/*
 * plat.h - the operating-system services loadlab needs, one interface
 * (libuv's way): what is the same everywhere is written once in
 * src/plat/plat.c; each OS backend (src/plat/plat_*posix.c and
 * plat_*win32.c, the latter XP-safe: nothing newer than _WIN32_WINNT
 * 0x0501) has only what differs. Callers never see #ifdef _WIN32. Threads: plat_thread.h.
 *
 * Processes are started from an argv list (never through a shell), with
 * the parent's environment plus additions, in a chosen folder, standard
 * input from the null device and standard output and error to files (or
 * the null device). Output goes to files rather than pipes because a
 * Windows program under Wine (and a program that never reads its input)
 * must not block on a pipe nobody drains.
 *
 *	const char *argv[] = {"/usr/bin/true", NULL};
 *	struct plat_spawn_options o = {.argv = argv};
 *	int code; long long us;
 *	if (plat_run(&o, 10000, &code, &us) < 0) ... err_message() ...
 *
 * Functions return 0 or a negative LL_E* code (err.h) with a message;
 * outputs are untouched on failure.
 */
#ifndef LOADLAB_PLAT_H
#define LOADLAB_PLAT_H

#include <stdbool.h>
#include <stddef.h>

/* Longest path the layer builds or accepts, terminator excluded. */
#define PLAT_MAX_PATH 4000u
/* Most argv entries and environment additions of one process. */
#define PLAT_MAX_ARGS 4096u
/* Longest command line built for CreateProcess (Windows' own limit). */
#define PLAT_MAX_COMMAND_LINE 32767u

struct plat_spawn_options {
	const char *const *argv;    /* NULL-terminated; argv[0] is the program's path */
	const char *const *env_add; /* "KEY=VALUE" entries, NULL-terminated; replace
				     * or extend the parent's environment; may be NULL */
	const char *cwd;            /* working folder; NULL: the caller's */
	const char *stdout_path;    /* created or truncated; NULL: the null device */
	const char *stderr_path;    /* likewise; may equal stdout_path (shared file) */
};

/* A started process. Opaque. */
struct plat_process;

/* Starts a process. *RET_PROCESS must be waited for with plat_wait() (or
 * killed) and then freed with plat_process_free(). LL_EIO when the program
 * cannot be started (message names it), LL_ETOOBIG past the limits above. */
int plat_spawn(const struct plat_spawn_options *options, struct plat_process **ret_process);

/* Waits up to TIMEOUT_MS (< 0: forever) for the process to exit. Gives its
 * exit code (a POSIX signal N gives 128 + N) and the wall time from just
 * before it was started to the moment its exit was seen, in microseconds
 * of the monotonic clock (QueryPerformanceCounter on Windows). LL_ERANGE
 * when it is still running at the timeout (it is left running: kill it).
 * RET_EXIT_CODE and RET_WALL_US may be NULL. */
int plat_wait(struct plat_process *process, long long timeout_ms, int *ret_exit_code, long long *ret_wall_us);

/* Forcibly ends the process (SIGKILL, TerminateProcess) and reaps it.
 * Fine on a process that already exited. */
int plat_kill(struct plat_process *process);

/* Asks the process to end (SIGTERM; on Windows, which has no such request
 * for a console-less child, TerminateProcess), waits up to GRACE_MS for it,
 * then kills it as plat_kill() does. */
int plat_terminate(struct plat_process *process, long long grace_ms);

/* Releases the handle; a process still running is killed first.
 * plat_process_free(NULL) is fine. */
void plat_process_free(struct plat_process *process);

/* plat_spawn() then plat_wait(); a process still running at TIMEOUT_MS is
 * killed and LL_ERANGE returned. */
int plat_run(const struct plat_spawn_options *options, long long timeout_ms, int *ret_exit_code,
	     long long *ret_wall_us);

/* The process id (for logs and the result). */
long long plat_process_id(const struct plat_process *process);

/* The CPU time (user and system, seconds) process PID has used so far; 0
 * when it cannot be read (gone, or not ours to ask). */
double plat_process_cpu_s(long long pid);

/* Creates PATH and every missing parent (like mkdir -p), mode 0755 on
 * POSIX. "C:\" and "\\server\share\" prefixes are taken as existing on
 * Windows. An existing folder is fine; an existing non-folder is LL_EIO. */
int plat_mkdirs(const char *path);

/* plat_mkdirs() for the agent's own data: the folders it creates are
 * mode 0700 on POSIX (on Windows the parent's ACL applies). */
int plat_mkdirs_private(const char *path);

/* Removes PATH and everything below it; symbolic links (junctions,
 * reparse points) are removed, never followed; read-only files are
 * removed too. A missing PATH is fine. */
int plat_remove_tree(const char *path);

/* Removes the file PATH; a missing file is fine. */
int plat_remove_file(const char *path);

/* Copies the file SRC to DST (replaced). */
int plat_copy_file(const char *src, const char *dst);

/* Makes DST (replaced) a hard link to SRC where the file system allows
 * it, else a copy (another file system, no hard links, too many links).
 * *RET_LINKED (may be NULL) says which. A linked DST shares its bytes with
 * SRC: replace it (remove, then write) rather than writing it in place. */
int plat_link_file(const char *src, const char *dst, bool *ret_linked);

/* The bytes this process may still write on the file system of PATH (an
 * existing file or folder). */
int plat_free_bytes(const char *path, long long *ret_bytes);

/* True when PATH names an existing regular file (or a link to one). */
bool plat_file_exists(const char *path);

/* True when PATH names an existing file this process may execute (on
 * Windows: any existing file). */
bool plat_is_executable(const char *path);

/* Lets the owner and everyone run the file PATH (POSIX: mode 0755, a
 * program fetched as a blob; Windows: nothing to do). */
int plat_make_executable(const char *path);

/* The folder separator for paths built here: '/' on POSIX, '\\' on
 * Windows (which takes '/' too). */
extern const char plat_path_separator;

/* Writes A, the separator and B into OUT (SIZE bytes); no separator is
 * added when A is empty or already ends with one. LL_ETOOBIG (OUT
 * untouched) when the result and its NUL do not fit. */
int plat_path_join(char *out, size_t size, const char *a, const char *b);

/* Reads the whole file PATH into a malloc'd buffer with a NUL after the
 * data (so text can be used as a string); the caller frees *RET_DATA.
 * A file of exactly LIMIT bytes is fine; a larger one is LL_ETOOBIG.
 * LL_EIO when it cannot be opened or read. */
int plat_read_file(const char *path, size_t limit, char **ret_data, size_t *ret_len);

/* Creates or truncates PATH and writes LEN bytes of DATA to it. */
int plat_write_file(const char *path, const void *data, size_t len);

/* Writes LEN bytes of DATA to PATH so that readers see the old content or
 * the whole new one: a temporary file in the same folder, flushed to disk,
 * then renamed over PATH. PRIVATE_MODE makes it readable by the owner only
 * (0600 on POSIX; on Windows the folder's ACL applies). */
int plat_write_file_atomic(const char *path, const void *data, size_t len, bool private_mode);

/* Calls VISIT(CONTEXT, NAME) for each entry of folder PATH except "." and
 * "..", in no particular order; stops early when VISIT returns non-zero
 * and returns that. A missing folder has no entries. */
int plat_list_dir(const char *path, int (*visit)(void *context, const char *name), void *context);

/* Creates a new empty folder PREFIX-<unique> under the system's temporary
 * folder ($TMPDIR or /tmp; GetTempPath); the caller frees *RET_PATH. */
int plat_make_temp_dir(const char *prefix, char **ret_path);

/* Finds NAME (a bare program name; ".exe" is tried too on Windows) in the
 * folders of PATH and writes its full path to OUT (SIZE bytes).
 * LL_ENOTFOUND when absent, LL_ETOOBIG when OUT is too small. */
int plat_find_program(const char *name, char *out, size_t size);

/* The lowercase hex SHA-256 of the file at PATH (64 digits and a NUL into
 * RET_HEX) and its size in bytes (RET_SIZE may be NULL). OpenSSL's EVP on
 * POSIX; CryptoAPI's PROV_RSA_AES provider on Windows (XP SP3 and later;
 * advapi32). LL_EUNSUPPORTED when the OS has no SHA-256 provider. */
int plat_file_sha256(const char *path, char ret_hex[65], long long *ret_size);

/* The lowercase hex SHA-256 of LEN bytes at DATA into RET_HEX, as
 * plat_file_sha256(). */
int plat_sha256(const void *data, size_t len, char ret_hex[65]);

/* The operating system's own DLL folder (GetSystemDirectory) into OUT;
 * LL_EUNSUPPORTED on POSIX, where Windows programs run under Wine. */
int plat_system_dll_dir(char *out, size_t size);

/* Raises this process's scheduling priority as far as the OS lets an
 * unprivileged process; returns what it got as text ("normal", "high",
 * "nice -N"), borrowed and static. Never fails. */
const char *plat_raise_priority(void);

/* True where Windows programs run natively (a Windows build); false where
 * they run under Wine. */
bool plat_runs_windows_programs(void);

/* Sleeps MS milliseconds, whatever the stop flag says. */
void plat_sleep_ms(long long ms);

/* ---- Stopping, and facts about the host ---- */

/* Has the OS set this process's stop flag, and do nothing else, on
 * SIGTERM and SIGINT (POSIX, where SIGPIPE is also ignored so that a
 * closed connection does not kill the process) or on Ctrl-C, Ctrl-Break,
 * console close, logoff and shutdown (Windows; for the last three Windows
 * ends the process when the handler returns, so it waits 4 s first). */
int plat_install_stop_handler(void);

/* True once a stop was asked for (by the handler or plat_request_stop()).
 * The flag is atomic: any thread may read it. */
bool plat_stop_requested(void);

/* Sets the stop flag, as the handler would. */
void plat_request_stop(void);

/* Sleeps MS milliseconds, or less when a stop is requested meanwhile (it
 * looks every 100 ms). True when the whole time passed with no stop. */
bool plat_sleep_unless_stopped(long long ms);

/* The machine's host name into OUT (SIZE bytes, at least 2); "agent" when
 * the OS gives none. */
void plat_host_name(char *out, size_t size);

/* A number for seeding jitter: differs between processes and runs. */
unsigned plat_random_seed(void);

/* The value of environment variable NAME, or NULL. Borrowed. */
const char *plat_getenv(const char *name);

/* ---- Host programs (the Windows agent under Wine) ----
 *
 * A Windows build running under Wine can use the host's own programs
 * (the Unix mingw-w64 toolchain): Wine's CreateProcess starts a Unix
 * executable given as a Z:\ path, but its arguments reach it unchanged
 * (they must be Unix paths), and the handle it returns cannot be waited
 * on or asked for an exit code. So a host program is started through the
 * host's /bin/sh with `-c` and a script built here from the argv alone
 * (every word single-quoted): it changes to the Unix form of the working
 * folder, runs the program under coreutils' `timeout` with its output
 * redirected to the Unix form of the output files, and writes the exit
 * code to a marker file (to a temporary name, then `mv`, so it is never
 * seen half-written); plat_wait() polls for the marker. On POSIX these
 * are plat_spawn() and plat_find_program(): host programs are ordinary
 * programs there. */

/* True when this is a Windows build running under Wine (ntdll exports
 * wine_get_version); false everywhere else. */
bool plat_under_wine(void);

/* Writes the host's form of PATH into OUT (SIZE bytes): PATH itself on
 * POSIX; under Wine, the Unix path that kernel32's wine_get_unix_file_name
 * gives (PATH's folder must exist). LL_EUNSUPPORTED on Windows proper. */
int plat_host_path(const char *path, char *out, size_t size);

/* Finds the host program NAME and writes a path this process can start
 * it by into OUT: plat_find_program() on POSIX; under Wine, "Z:\usr\local\bin\NAME",
 * "Z:\usr\bin\NAME" or "Z:\bin\NAME", the first that exists.
 * LL_ENOTFOUND when absent, LL_EUNSUPPORTED on Windows proper. */
int plat_find_host_program(const char *name, char *out, size_t size);

/* Starts a host program as plat_spawn() does. OPTIONS->argv[0] is a path
 * from plat_find_host_program(); the other arguments are passed as they
 * are, so paths among them must already be host paths (plat_host_path());
 * cwd, stdout_path and stderr_path are this process's paths and are
 * converted here. env_add is not supported under Wine (LL_EINVAL). The
 * process is waited for with plat_wait(), and plat_kill() asks the host
 * to end it. Under Wine the wall time has the marker's polling interval
 * (a few ms) in it, and a program still running after PLAT_HOST_MAX_SECONDS
 * is ended by `timeout`. LL_EUNSUPPORTED on Windows proper. */
int plat_spawn_host(const struct plat_spawn_options *options, struct plat_process **ret_process);

/* plat_spawn_host() then plat_wait(), as plat_run(). */
int plat_run_host(const struct plat_spawn_options *options, long long timeout_ms, int *ret_exit_code,
		  long long *ret_wall_us);

/* Longest a host program started under Wine may run before the host's
 * `timeout` ends it (SIGTERM, then SIGKILL 5 s later). */
#define PLAT_HOST_MAX_SECONDS 600

#endif
