/*
 * churn.h - the process-churn test (DESIGN.md, Measurements: Churn; the
 * termination study of ../shared/seeds/004): create N processes that each
 * load a DLL set and wait on a shared event, time their creation until all
 * are up, then their destruction from the signal until all have exited.
 *
 * Two implementations, picked by where Windows programs run:
 *
 * - Windows programs (a Windows agent, or a Linux agent with WINE set):
 *   churn_parent.exe and churn_child.exe, compiled with mingw-w64 when
 *   the agent was built and shipped inside it (agent/programs/,
 *   programs.h; no compiler on the lab machine), are written into the
 *   work folder and checked against their recorded SHA-256 (the result's
 *   method lists both). The child LoadLibrary()s the set (user32.dll, gdi32.dll
 *   or the generated DLLs), releases a shared "ready" semaphore and waits
 *   on a shared manual-reset "go" event. The parent CreateProcess()es the
 *   children, waits for every ready signal, sets the event and waits for
 *   every child's exit (WaitForMultipleObjects, 64 handles at a time);
 *   QueryPerformanceCounter times both phases. A probe thread in the
 *   parent owns a hidden window and, at each phase's start and then every
 *   10 ms, times a PeekMessage() on it, a call that takes the window
 *   manager's lock: calls, total and
 *   longest time spent in it, per phase. The parent writes its figures to
 *   a JSON file that churn.c reads. On Linux the parent runs in a Wine
 *   session (runner/runner.h: a private WINEPREFIX below the work folder,
 *   WINEDEBUG=-all, its own wineserver stopped by PID, Wine's null display
 *   driver); the blocked times then describe Wine's wineserver,
 *   not Windows' win32k, and the result says so.
 *
 * - The Linux analog (a Linux agent without WINE): the children are this
 *   agent re-executed as `loadlab-agent churn --child LIB...`, which
 *   dlopen()s the generated shared objects (nothing for "none"), says it is
 *   ready through a shared pipe and waits for the end of file of another
 *   (plat_churn.h). There is no window-manager lock: no probe, and the
 *   result says "not measured on this platform". The sets "user32" and
 *   "user32+gdi32" exist only for Windows programs.
 *
 * Limits: 1..CHURN_MAX_PROCESSES processes; never more than
 * plat_churn_wave_cap() alive at once (at most 1000, less when
 * RLIMIT_NPROC or the free memory says so), so a larger N runs in waves
 * and the times are the waves' sums; every phase of a wave is bounded by
 * the timeout. On any failure every child started is killed by PID and
 * reaped (by the parent program for the Windows churn, whose own failure
 * or timeout ends the whole Wine prefix) before churn_run() returns.
 */
#ifndef LOADLAB_AGENT_CHURN_H
#define LOADLAB_AGENT_CHURN_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#define CHURN_MAX_PROCESSES 5000
#define CHURN_DEFAULT_PROCESSES 1000
/* Most generated libraries one child loads. */
#define CHURN_MAX_LIBS 64
/* Per phase of a wave when churn_options.timeout_ms is 0. */
#define CHURN_DEFAULT_TIMEOUT_MS 120000

struct churn_options {
	int processes;                     /* 1..CHURN_MAX_PROCESSES */
	const char *dll_set;               /* "none" | "user32" | "user32+gdi32" | "generated" */
	const char *work_dir;              /* an existing folder churn may fill */
	const char *const *generated_libs; /* "generated": NULL-terminated DLL (Windows) or
					    * shared object (Linux) paths, 1..CHURN_MAX_LIBS */
	long long timeout_ms;              /* per phase of a wave; 0: CHURN_DEFAULT_TIMEOUT_MS */
	bool wine;                         /* Linux: the Windows churn under Wine, not the
					   * Linux analog; ignored where Windows programs run */
	/* Called with 0..100 as waves finish; returning true cancels the run
	 * (LL_ESTATE) at the next wave. May be NULL. */
	bool (*progress)(void *ctx, int percent);
	void *progress_ctx;
};

/* Checks O without running anything: LL_ERANGE for a process count out of
 * bounds, LL_EINVAL for an unknown set, "generated" without libraries or
 * a missing work folder, LL_ETOOBIG past CHURN_MAX_LIBS, LL_EUNSUPPORTED for "user32" sets on
 * the Linux analog. With a message fit for one stderr line. */
int churn_options_check(const struct churn_options *o);

/* Runs the churn test for O->dll_set and gives
 *   {"dll_set", "processes", "create_us", "destroy_us", "waves", "wave_size",
 *    "blocked_total_ms", "blocked_max_ms"   (Windows programs only),
 *    "blocked": "not measured on this platform"   (Linux analog only),
 *    "probe": {...}, "method": {...}}
 * create_us and destroy_us are totals over the waves, in microseconds.
 * The caller deletes *RET. */
int churn_run(const struct churn_options *o, cJSON **ret);

/* churn_run() for each of DLL_SETS (NULL-terminated; O->dll_set is
 * ignored), sharing the build and, under Wine, one booted prefix: an
 * array of the objects above, in order. */
int churn_run_sets(const struct churn_options *o, const char *const *dll_sets, cJSON **ret_array);

/* The child side of the Linux analog (`loadlab-agent churn --child`):
 * returns its exit code. */
int churn_child_main(int argc, char **argv);

#endif
