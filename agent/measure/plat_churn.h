/*
 * plat_churn.h - the operating-system side of the process-churn test
 * (agent/measure/churn.c): how many processes may live at once, and, on
 * POSIX, one wave of the Linux analog. POSIX backend plat_churn_posix.c,
 * Win32 backend plat_churn_win32.c (XP-safe), beside it. Callers never
 * see #ifdef _WIN32.
 *
 * A wave on POSIX: COUNT children are started with posix_spawn() from
 * CHILD_ARGV, each with two pipe ends at fixed descriptors:
 *   PLAT_CHURN_READY_FD  the write end of the "ready" pipe, shared by all;
 *   PLAT_CHURN_GO_FD     the read end of the "go" pipe, shared by all.
 * A child loads what it must, writes one byte ('R' ready, 'F' failed) to
 * the ready pipe and reads the go pipe until end of file. The parent holds
 * the only write end of the go pipe: closing it is a manual-reset event
 * that wakes every child at once. The children's ready ends close when they
 * exit, so end of file on the ready pipe means every child has exited.
 * Creation time runs from just before the first spawn until COUNT 'R'
 * bytes were read; destruction time from just before the go pipe is closed
 * until every child was reaped. On any failure (a spawn refused, a child
 * that says 'F' or exits early, a phase past its timeout) every child of
 * the wave is killed by PID and reaped before the function returns.
 *
 * Windows programs run the Windows churn (generated programs, churn.c);
 * on Windows the wave and child functions are LL_EUNSUPPORTED.
 *
 * Functions return 0 or a negative LL_E* code (err.h) with a message;
 * outputs are untouched on failure.
 */
#ifndef LOADLAB_PLAT_CHURN_H
#define LOADLAB_PLAT_CHURN_H

#include <stddef.h>

/* Most processes alive at once, whatever the machine allows. */
#define PLAT_CHURN_MAX_WAVE 1000
/* Descriptors a POSIX churn child finds its pipe ends at. */
#define PLAT_CHURN_READY_FD 3
#define PLAT_CHURN_GO_FD 4

/* How many churn processes may live at once here: PLAT_CHURN_MAX_WAVE,
 * lowered to what RLIMIT_NPROC leaves once the user's current processes
 * and a margin are counted (POSIX), and to the available memory divided
 * by PER_PROCESS_BYTES (MemAvailable on Linux, GlobalMemoryStatusEx on
 * Windows). At least 1. WHY (SIZE bytes) names what set the cap, e.g.
 * "RLIMIT_NPROC 4096 with 120 in use, margin 64". Never fails. */
int plat_churn_wave_cap(long long per_process_bytes, char *why, size_t size);

/* The path of this process's own executable into OUT (SIZE bytes):
 * /proc/self/exe on Linux, GetModuleFileName on Windows. */
int plat_churn_self_path(char *out, size_t size);

/* PATH made absolute into OUT (SIZE bytes): realpath() on POSIX (PATH must
 * exist), GetFullPathName on Windows. */
int plat_churn_absolute_path(const char *path, char *out, size_t size);

struct plat_churn_wave {
	long long create_us;  /* first spawn .. every child ready */
	long long destroy_us; /* go .. every child reaped */
	long long first_pid;  /* for the logs */
};

/* Runs one wave of COUNT (1..PLAT_CHURN_MAX_WAVE) children of CHILD_ARGV
 * (argv[0] a path; stdin and stdout the null device, stderr inherited),
 * each phase bounded by TIMEOUT_MS. LL_EIO when a spawn fails or a child
 * fails to load, LL_ERANGE at a timeout; LL_EUNSUPPORTED on Windows. */
int plat_churn_wave_run(const char *const *child_argv, int count, long long timeout_ms,
			struct plat_churn_wave *ret_wave);

/* The child's side, for a program re-executed as a churn child: dlopen()s
 * each of LIBS (COUNT paths, RTLD_NOW), says 'R' (or 'F' after printing
 * dlerror() on stderr), waits for the go pipe's end of file and returns
 * the exit code (0, or 3 when a library did not load). LL_EUNSUPPORTED on
 * Windows. */
int plat_churn_child(const char *const *libs, int count);

#endif
