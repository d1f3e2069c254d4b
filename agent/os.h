/*
 * os.h - the few operating-system services the agent's fleet side needs,
 * one implementation per OS (agent/os_posix.c, agent/os_win32.c), so that
 * callers never see #ifdef _WIN32.
 *
 * Paths are UTF-8 / the ANSI code page as the C library takes them, with
 * '/' accepted everywhere ('\\' too on Windows). Functions return 0 or a
 * negative LL_E* code with a message (err_message()).
 */
#ifndef LOADLAB_AGENT_OS_H
#define LOADLAB_AGENT_OS_H

#include <stdbool.h>
#include <stddef.h>

/* The folder separator for paths the agent builds. */
extern const char os_path_separator;

/* Asks the OS to call nothing but set the agent's stop flag on SIGTERM,
 * SIGINT (POSIX) or Ctrl-C, Ctrl-Break, console close, logoff and
 * shutdown (Windows). */
int os_install_stop_handler(void);

/* True once a stop was asked for (by the handler or os_request_stop()). */
bool os_stop_requested(void);

/* Sets the stop flag, as the handler would. */
void os_request_stop(void);

/* Sleeps MS milliseconds, or less when a stop is requested meanwhile.
 * Returns true when the whole time passed without a stop request. */
bool os_sleep_ms(long long ms);

/* Sleeps MS milliseconds whatever the stop flag says. */
void os_nap_ms(long long ms);

/* Creates folder PATH (mode 0700 on POSIX) and its missing parents; an
 * existing folder is fine. */
int os_make_dirs(const char *path);

/* Removes PATH and, when it is a folder, everything below it, without
 * following symbolic links. A missing PATH is fine. */
int os_remove_tree(const char *path);

/* Removes the file PATH; a missing file is fine. */
int os_remove_file(const char *path);

/* True when PATH names an existing regular file (or a link to one). */
bool os_file_exists(const char *path);

/* True when PATH names an existing file the agent may execute. */
bool os_is_executable(const char *path);

/* Writes LEN bytes of DATA to PATH so that readers see the old content or
 * the whole new one: a temporary file in the same folder, flushed to disk,
 * then renamed over PATH. PRIVATE_MODE makes it readable by the owner only
 * (0600 on POSIX; on Windows the folder's ACL applies). */
int os_write_file_atomic(const char *path, const void *data, size_t len, bool private_mode);

/* Calls VISIT(CONTEXT, NAME) for each entry of folder PATH except "." and
 * "..", in no particular order; stops early when VISIT returns non-zero
 * and returns that. A missing folder has no entries. */
int os_list_dir(const char *path, int (*visit)(void *context, const char *name), void *context);

/* A new empty folder for the agent's scratch work, under the system's
 * temporary folder; the caller frees *RET_PATH. */
int os_make_temp_dir(const char *prefix, char **ret_path);

/* The machine's host name into OUT (SIZE bytes, at least 2); "agent" when
 * the OS has none. */
void os_host_name(char *out, size_t size);

/* A number for seeding jitter: differs between processes and runs. */
unsigned os_random_seed(void);

/* The value of environment variable NAME, or NULL. Borrowed. */
const char *os_getenv(const char *name);

/* A thread running FN(ARG); os_thread_join() waits for it and frees it. */
struct os_thread;
int os_thread_start(void (*fn)(void *arg), void *arg, struct os_thread **ret_thread);
void os_thread_join(struct os_thread *thread);

#endif
