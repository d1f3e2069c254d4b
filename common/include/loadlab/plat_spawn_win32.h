/*
 * plat_spawn_win32.h - building blocks of the Win32 backend's spawn
 * (src/plat/plat_win32.c) for code that starts processes its own way, such
 * as the agent's load timer (agent/measure/plat_measure_win32.c: suspended
 * start in a job object). Windows builds only; callers are themselves
 * Windows-only backends.
 */
#ifndef LOADLAB_PLAT_SPAWN_WIN32_H
#define LOADLAB_PLAT_SPAWN_WIN32_H

#include <windows.h>
#include <stdbool.h>
#include <stddef.h>

/* Appends ARG to LINE (PLAT_MAX_COMMAND_LINE bytes), after a space when
 * LINE is not empty, quoted the way the C runtime's argv parser splits it.
 * LL_ETOOBIG past the limit. */
int plat_win32_append_arg(char *line, size_t *len, const char *arg);

/* This process's environment block with ADD ("KEY=VALUE", NULL-terminated,
 * may be NULL) applied, for CreateProcess; the caller frees it. */
int plat_win32_environment(const char *const *add, char **ret_block);

/* PATH (NULL: the null device) opened as an inheritable handle for a
 * child's standard input (WRITE false) or output. */
HANDLE plat_win32_open_inheritable(const char *path, bool write);

struct plat_spawn_options;

/* Closes each of IN, OUT and ERR that is not INVALID_HANDLE_VALUE. */
void plat_win32_close_std_handles(HANDLE in, HANDLE out, HANDLE err);

/* A child's standard handles per OPTIONS: input from the null device,
 * output and error to their files (one handle duplicated when both name
 * the same file). On failure every handle not opened is
 * INVALID_HANDLE_VALUE and LL_EIO is returned; the caller closes the
 * others either way. */
int plat_win32_std_handles(const struct plat_spawn_options *options, HANDLE *in, HANDLE *out, HANDLE *err);

/* What CreateProcessA needs to start OPTIONS->argv: the command line in
 * LINE (PLAT_MAX_COMMAND_LINE + 1 bytes; LL_ETOOBIG past PLAT_MAX_ARGS
 * arguments or the line's limit), the environment block with
 * OPTIONS->env_add (*RET_ENV, which the caller frees), and SI with the
 * standard handles (plat_win32_std_handles(): the caller closes IN, OUT
 * and ERR either way). */
int plat_win32_start_info(const struct plat_spawn_options *options, char *line, char **ret_env, HANDLE *in,
			  HANDLE *out, HANDLE *err, STARTUPINFOA *si);

#endif
