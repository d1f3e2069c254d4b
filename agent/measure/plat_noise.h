/*
 * plat_noise.h - what else the machine did while a run was timed: the
 * CPU time of every CPU that was not idle, this process's own CPU time
 * (with its children's), and the disks' completed reads and writes, read
 * from the OS before and after each run (measure_sample.c turns them into
 * "other processes' CPU" and flags the runs taken while others were busy).
 * Two backends: plat_noise_posix.c and plat_noise_win32.c.
 *
 *	struct plat_noise n;
 *	struct plat_noise_reading a, b;
 *	if (plat_noise_open(&n) == 0) {           // n.source says how
 *		plat_noise_read(&n, &a); ...run...; plat_noise_read(&n, &b);
 *	}
 *
 * Linux: /proc/stat's "cpu" line (user + nice + system + irq + softirq +
 * steal: busy; a hypervisor's steal counts as someone else's), in USER_HZ
 * ticks (10 ms), which is why a run's figure is taken over a window of at
 * least MEASURE_NOISE_WINDOW_MS; our own time from getrusage (RUSAGE_SELF
 * + RUSAGE_CHILDREN, which holds every reaped measured program); disk
 * I/O from /proc/diskstats, the whole disks listed in /sys/block
 * (partitions would count twice), reads + writes completed.
 * Windows: GetSystemTimes (kernel + user - idle, 100 ns units, the
 * scheduler's tick), our own time from GetProcessTimes of the agent plus
 * every measured program (plat_measure_children_cpu_ns()); disk I/O is
 * not read (disk_ios -1: the disk performance counters need the
 * administrator or a PDH query per run).
 */
#ifndef LOADLAB_PLAT_NOISE_H
#define LOADLAB_PLAT_NOISE_H

#include <stdbool.h>
#include <stddef.h>

/* Whole disks plat_noise_open() found (Linux). */
#define PLAT_NOISE_MAX_DISKS 32

struct plat_noise {
	char source[200];        /* how the figures are read, or "unavailable: <why>" */
	bool disks_known;        /* disk I/O is read */
	long long companion_pid; /* plat_noise_add_companion(); 0: none */
	size_t disk_count;       /* Private: the whole disks' names (Linux). */
	char disks[PLAT_NOISE_MAX_DISKS][32];
};

struct plat_noise_reading {
	long long at_ns;    /* monotonic clock, ns */
	double busy_cpu_s;  /* every CPU's non-idle time since boot, seconds */
	double ours_cpu_s;  /* this process's and its measured programs' CPU time, seconds */
	long long disk_ios; /* reads + writes completed since boot; -1 when not read */
};

/* Finds the sources and fills *RET (source, disks). LL_EUNSUPPORTED with
 * RET->source "unavailable: <why>" when the CPU times cannot be read. */
int plat_noise_open(struct plat_noise *ret);

/* Counts the CPU time of process PID (the measured programs' companion,
 * Wine's wineserver: plat_measure_companion()) as ours, not another's:
 * Linux reads its utime + stime from /proc/PID/stat (USER_HZ ticks) and
 * says so in NOISE->source; Windows does nothing. PID <= 0: nothing. */
void plat_noise_add_companion(struct plat_noise *noise, long long pid);

/* Reads the counters now. LL_EIO when the CPU times cannot be read. */
int plat_noise_read(const struct plat_noise *noise, struct plat_noise_reading *ret);

#endif
