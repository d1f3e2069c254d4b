/*
 * plat_measure.h - the process-level hooks the load timer needs and plat.h
 * does not have: measurement conditions (priority, CPU pinning, the
 * clock), a spawn-and-wait with as little of the timer's own cost as the
 * OS allows, per-process counters (page faults, reads) taken before the
 * process is reaped, and page-cache eviction with a residency check.
 * One interface, two backends beside it: plat_measure_posix.c (Linux) and
 * plat_measure_win32.c (Windows, XP-safe: newer APIs are looked up at run
 * time). Callers never see #ifdef _WIN32. Agent-only OS code, so it lives
 * in agent/measure/, not in common/'s plat.
 *
 *	struct plat_measure_conditions c;
 *	struct plat_measure_counters k;
 *	plat_measure_begin(&c);                      // priority + CPU, recorded
 *	rc = plat_measure_run(&spawn, 10000, false, &k); // k.wall_ns, k.exit_code
 *	plat_measure_end(&c);                        // normal scheduling again
 *
 * How it measures, per OS:
 *
 * Linux. The agent takes SCHED_FIFO priority 2 when permitted (else the
 * lowest nice it may) and pins itself to one CPU (the last one it may run
 * on, and only when it may run on more than one: a real-time program
 * spinning on the only CPU would hang the machine). A measured child
 * inherits the CPU and runs at SCHED_FIFO priority 1 with
 * SCHED_RESET_ON_FORK (its own children, such as Wine's services, run
 * normally): below the agent, so the agent's watchdog always preempts a
 * child that spins. The child is started with clone(CLONE_VM | CLONE_VFORK
 * | CLONE_PIDFD) and execve, which costs less than glibc's posix_spawn
 * (that one resets every signal's action in the child: DESIGN.md, Known
 * traps); the wall time is CLOCK_MONOTONIC read just before clone and
 * just after the wait that sees the exit. Counters come from wait4's
 * rusage (ru_majflt hard, ru_minflt soft faults) and /proc/PID/io, read
 * after waitid(WEXITED | WNOWAIT) and before the child is reaped; the
 * same rusage gives every run's CPU time (ru_utime, ru_stime) and context
 * switches (ru_nvcsw, ru_nivcsw). Where the machine has a PMU,
 * perf_event_open counts user-mode instructions and cycles: the agent
 * opens both on itself, disabled, with inherit and enable_on_exec just
 * before the clone, so they count the child (and its children) from its
 * execve; read after the reap. Without a PMU (a VM: ENOENT) or permission
 * (perf_event_paranoid) they are not counted, and the result says why. A
 * Windows program under Wine runs inside the wine64 process, so these are
 * the wine process's counters, measured from the Linux side.
 *
 * Windows. REALTIME_PRIORITY_CLASS (Windows grants HIGH without the
 * privilege; the class is read back with GetPriorityClass) and the same
 * class given to each child, pinned with SetProcessAffinityMask (children
 * inherit the mask); QueryPerformanceCounter around CreateProcess ... the
 * process signalled. With counters, the process is created suspended,
 * assigned to a job object and resumed; the job's basic and I/O
 * accounting gives read operations and bytes, GetProcessMemoryInfo (psapi
 * or kernel32's K32 entry, looked up at run time) the page faults, which
 * Windows does not split into hard and soft. Every run, after the exit
 * is seen: GetProcessTimes (user and kernel time), GetProcessMemoryInfo's
 * PageFaultCount and QueryProcessCycleTime (Vista and later, looked up at
 * run time). Windows keeps context switches per thread, not per process,
 * and has no instruction counter without a driver: not counted. Under
 * Wine those counters are zeros or Wine's own: counters_reliable is false
 * there, and none of the run counters is counted.
 *
 * Functions return 0 or a negative LL_E* code (err.h) with a message;
 * outputs are untouched on failure.
 */
#ifndef LOADLAB_PLAT_MEASURE_H
#define LOADLAB_PLAT_MEASURE_H

#include <stdbool.h>
#include <stddef.h>

#include "loadlab/plat.h"

/* The conditions a measurement ran under, as obtained and read back. The
 * text fields are NUL-terminated and go into a result's "method". */
struct plat_measure_conditions {
	char priority[64]; /* asked for: "SCHED_FIFO 1 (agent 2)", "nice -20", "REALTIME_PRIORITY_CLASS" */
	char priority_read_back[64]; /* what the OS reports afterwards, same vocabulary */
	bool realtime;               /* a real-time class was granted */
	int cpu;                     /* the CPU pinned to; -1 when not pinned */
	int cpus_available;          /* CPUs the agent could run on before pinning */
	char clock[48];              /* "CLOCK_MONOTONIC", "QueryPerformanceCounter" */
	double timer_resolution_ns;  /* clock_getres or 1e9 / QueryPerformanceFrequency */
	char spawn[80];              /* how children start: "clone(CLONE_VM|CLONE_VFORK)+execve" */
	char counters[160];          /* where counters come from (see plat_measure_counters_source) */
	bool counters_reliable;      /* false under Wine, where the Windows counters are zeros */
	long long companion_pid;     /* plat_measure_companion()'s process; 0: none */
	bool companion_pinned;       /* ... moved to the agent's CPU while measuring */
	int companion_nice;          /* ... its nice meanwhile (Linux) */
	/* Private: what plat_measure_end() restores. */
	int saved_policy, saved_priority, saved_nice;
	bool saved_affinity_valid;
	unsigned char saved_affinity[128];
	unsigned long long saved_mask;
	bool companion_saved_valid;
	int companion_saved_nice; /* restored when companion_nice differs */
	unsigned char companion_saved_affinity[128];
	bool active;
};

/* Raises the agent's priority as far as the OS allows, pins it to one CPU
 * (as described above) and fills *RET with what was obtained. Never fails
 * for want of privilege: it records what it got. Pair with
 * plat_measure_end(). */
int plat_measure_begin(struct plat_measure_conditions *ret);

/* Gives the agent back the scheduling and CPUs it had before
 * plat_measure_begin(). Fine to call twice. */
void plat_measure_end(struct plat_measure_conditions *conditions);

/* PID is a process the measured programs wait on while they run: Wine's
 * wineserver, which answers every request of a Windows program (some 800
 * round trips for one start of the pe family's program). Linux: when the
 * agent is pinned (c->cpu >= 0), PID is pinned to the same CPU until
 * plat_measure_end() gives it back the CPUs it had, so that each round trip
 * is a switch on one CPU instead of a wake-up of the other: on the 2-vCPU
 * development VM a warm run of that program went from 25-29 ms to 10-16
 * ms, and its spread (MAD) from 1.5-2.1 ms to 0.2-0.5 ms (docs/agent.md,
 * "Measurements", Wine's server). Its nice is lowered as far as permitted
 * (-20 as root), so that a busy neighbour on that CPU does not slow it:
 * with a CPU-bound process there, 1 ms came back with an interval of
 * +-390 us at nice 0 and +-55 us at -20. Its scheduling class stays
 * normal: a real-time server made the runs wider (MAD 0.44-0.48 ms).
 * Both are given back. Windows: nothing (a
 * Windows agent under Wine cannot reach the server). Records what it did
 * in C; never fails. Call after plat_measure_begin(). */
void plat_measure_companion(struct plat_measure_conditions *c, long long pid);

/* What one run of a program gave. Counters the OS does not provide are -1. */
struct plat_measure_counters {
	long long wall_ns; /* just before starting it ... its exit seen */
	int exit_code;     /* a POSIX signal N gives 128 + N */
	long long pid;
	long long page_faults; /* hard + soft (Windows: PageFaultCount) */
	long long hard_faults; /* Linux ru_majflt: faults that needed I/O */
	long long soft_faults; /* Linux ru_minflt */
	long long read_bytes;  /* Linux /proc/PID/io read_bytes: from storage; Windows ReadTransferCount */
	long long read_ops;    /* Linux syscr; Windows ReadOperationCount */
	long long read_chars;  /* Linux rchar: bytes through read syscalls, cached or not */
	/* Taken on every run (warm runs too; after the exit is seen, so they
	 * cost the timed span nothing): the run counters below. */
	long long cpu_user_ns;          /* Linux ru_utime; Windows GetProcessTimes user time */
	long long cpu_system_ns;        /* Linux ru_stime; Windows GetProcessTimes kernel time */
	long long voluntary_switches;   /* Linux ru_nvcsw (Windows: not per process, -1) */
	long long involuntary_switches; /* Linux ru_nivcsw */
	long long instructions;         /* user-mode, perf_event_open from exec (PMU only) */
	long long cycles;               /* Linux: user-mode, perf_event_open from exec (PMU only);
					 * Windows: QueryProcessCycleTime (Vista+), user and kernel */
};

/* The run counters, in the order results list them ("run_counters",
 * measure.h): the index of each in plat_measure_run_counter_names. */
enum plat_measure_run_counter {
	PLAT_COUNTER_CPU_USER_US,
	PLAT_COUNTER_CPU_SYSTEM_US,
	PLAT_COUNTER_PAGE_FAULTS,
	PLAT_COUNTER_MINOR_FAULTS,
	PLAT_COUNTER_MAJOR_FAULTS,
	PLAT_COUNTER_VOLUNTARY_SWITCHES,
	PLAT_COUNTER_INVOLUNTARY_SWITCHES,
	PLAT_COUNTER_INSTRUCTIONS,
	PLAT_COUNTER_CYCLES,
	PLAT_COUNTER_COUNT
};

/* "cpu_user_us", "cpu_system_us", "page_faults", "minor_faults",
 * "major_faults", "voluntary_switches", "involuntary_switches",
 * "instructions", "cycles". */
extern const char *const plat_measure_run_counter_names[PLAT_COUNTER_COUNT];

/* Counter C of K as a number (CPU times in microseconds), or -1 when the
 * run did not count it. */
double plat_measure_run_counter(const struct plat_measure_counters *k, enum plat_measure_run_counter c);

/* Why this machine cannot count C, in words, into OUT (SIZE bytes); ""
 * when it can (as far as known: instructions and cycles are known once a
 * run tried them). Never fails (truncates). */
void plat_measure_run_counter_why_not(enum plat_measure_run_counter c, char *out, size_t size);

/* Where the run counters come from, in words, into OUT (SIZE bytes). */
void plat_measure_run_counters_source(char *out, size_t size);

/* Counters before a run: nothing known yet, every OS counter -1 (where
 * both backends start each run from). */
static inline struct plat_measure_counters plat_measure_counters_unknown(void)
{
	return (struct plat_measure_counters){.page_faults = -1,
					      .hard_faults = -1,
					      .soft_faults = -1,
					      .read_bytes = -1,
					      .read_ops = -1,
					      .read_chars = -1,
					      .cpu_user_ns = -1,
					      .cpu_system_ns = -1,
					      .voluntary_switches = -1,
					      .involuntary_switches = -1,
					      .instructions = -1,
					      .cycles = -1};
}

/* Starts the program of OPTIONS (argv[0] a path; plat.h's spawn options:
 * environment additions, folder, output files), waits for it and fills
 * *RET. The measured child gets priority and CPU as described above when
 * plat_measure_begin() is in effect. WITH_COUNTERS collects the counters
 * (Windows: suspended start and a job object, which cost time, so warm
 * runs pass false; Linux: always cheap, /proc/PID/io only with it).
 * A program still running after TIMEOUT_MS (> 0) is killed and reaped,
 * and LL_ERANGE returned with a message naming it; LL_EIO when it cannot
 * be started. A program that exits non-zero is not an error here: see
 * RET->exit_code. */
int plat_measure_run(const struct plat_spawn_options *options, long long timeout_ms, bool with_counters,
		     struct plat_measure_counters *ret);

/* The CPU time (user + kernel, ns) of every program plat_measure_run()
 * has reaped so far in this process (Linux: getrusage(RUSAGE_CHILDREN);
 * Windows: GetProcessTimes of each, summed). plat_noise's "ours". */
long long plat_measure_children_cpu_ns(void);

/* Where plat_measure_run()'s counters come from for a program started as
 * ARGV0, in words, into OUT (SIZE bytes): "linux rusage + /proc/PID/io of
 * the wine64 process (the Windows program runs in it)" for a wine loader
 * on Linux. Never fails (truncates). */
void plat_measure_counters_source(const char *argv0, char *out, size_t size);

/* What plat_measure_evict() did. */
struct plat_measure_eviction {
	char method[96]; /* "fdatasync+posix_fadvise(DONTNEED)", "standby-list purge", "unavailable" */
	bool done;       /* the OS accepted the eviction */
	bool verified;   /* residency was checked afterwards (Linux: mincore) */
	long long resident_pages; /* pages of FILES still resident after it; -1 when unchecked */
	char note[200];           /* why it is unavailable or unverified; "" otherwise */
};

/* Evicts the NULL-terminated FILES from the OS cache and checks it.
 * Linux: for each file fdatasync (dirty pages cannot be dropped) and
 * posix_fadvise(POSIX_FADV_DONTNEED), then residency by mincore(); pages
 * still resident (mapped by a running process, or on a file system that
 * keeps them, such as tmpfs) are counted, never hidden. Windows Vista and
 * later: the whole standby list is purged (NtSetSystemInformation,
 * SystemMemoryListInformation / MemoryPurgeStandbyList) when the agent
 * holds SeProfileSingleProcessPrivilege; residency cannot be checked
 * (verified false). Elsewhere, and under Wine (which would pretend), the
 * method is "unavailable" and done false. Fails only when a file cannot
 * be opened (LL_EIO). */
int plat_measure_evict(const char *const *files, struct plat_measure_eviction *ret);

/* Pages of the file PATH resident in the OS cache (mincore on a mapping
 * of it) and its size in pages. LL_EUNSUPPORTED on Windows; LL_EIO when
 * it cannot be opened or mapped. */
int plat_measure_residency(const char *path, long long *ret_resident, long long *ret_pages);

#endif
