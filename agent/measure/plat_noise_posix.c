/*
 * plat_noise_posix.c - plat_noise.h on Linux.
 */
#ifndef _WIN32

#include "measure/plat_noise.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "loadlab/err.h"
#include "loadlab/plat.h"

static double seconds_of(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* user + nice + system + irq + softirq + steal of /proc/stat's "cpu" line, seconds. */
static int read_busy(double *ret)
{
	unsigned long long v[8] = {0};
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return err_set(LL_EIO, "Cannot read /proc/stat.");
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &v[6], &v[7]);
	fclose(f);
	if (n < 7 || hz <= 0)
		return err_set(LL_EIO, "/proc/stat has no cpu line.");
	/* v[3] idle and v[4] iowait are not busy. */
	*ret = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + (n >= 8 ? v[7] : 0)) / (double)hz;
	return 0;
}

static long long read_disk_ios(const struct plat_noise *noise)
{
	char line[512], name[64];
	unsigned long long reads, writes, skip[3];
	long long total = 0;
	unsigned major, minor;
	FILE *f;

	if (!noise->disks_known || !(f = fopen("/proc/diskstats", "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* major minor name reads merged sectors ms writes ... */
		if (sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu", &major, &minor, name, &reads,
			   &skip[0], &skip[1], &skip[2], &writes) != 8)
			continue;
		for (size_t i = 0; i < noise->disk_count; i++)
			if (strcmp(noise->disks[i], name) == 0)
				total += (long long)(reads + writes);
	}
	fclose(f);
	return total;
}

int plat_noise_open(struct plat_noise *ret)
{
	struct plat_noise n;
	char line[512], name[64], path[128];
	unsigned major, minor;
	double busy;
	FILE *f;

	memset(&n, 0, sizeof(n));
	if (read_busy(&busy) < 0) {
		snprintf(ret->source, sizeof(ret->source), "unavailable: /proc/stat cannot be read");
		ret->disks_known = false;
		ret->disk_count = 0;
		return err_set(LL_EUNSUPPORTED, "Noise unavailable: /proc/stat cannot be read.");
	}
	if ((f = fopen("/proc/diskstats", "re"))) {
		n.disks_known = true;
		while (fgets(line, sizeof(line), f) && n.disk_count < PLAT_NOISE_MAX_DISKS) {
			struct stat st;
			if (sscanf(line, "%u %u %63s", &major, &minor, name) != 3 || strlen(name) >= 32 ||
			    strncmp(name, "loop", 4) == 0 || strncmp(name, "ram", 3) == 0)
				continue;
			/* A whole disk is in /sys/block; a partition is not. */
			snprintf(path, sizeof(path), "/sys/block/%s", name);
			if (stat(path, &st) == 0)
				memcpy(n.disks[n.disk_count++], name,
				       strlen(name) + 1); /* < 32 bytes, above */
		}
		fclose(f);
	}
	snprintf(n.source, sizeof(n.source),
		 "linux /proc/stat busy time (USER_HZ ticks) - getrusage(self + children); %s",
		 n.disks_known ? "/proc/diskstats reads + writes of the whole disks"
			       : "disk I/O unavailable (no /proc/diskstats)");
	*ret = n;
	return 0;
}

void plat_noise_add_companion(struct plat_noise *noise, long long pid)
{
	size_t used = strlen(noise->source);

	if (pid <= 0 || strncmp(noise->source, "unavailable", 11) == 0)
		return;
	noise->companion_pid = pid;
	snprintf(noise->source + used, sizeof(noise->source) - used, "; companion %lld's CPU counted as ours",
		 pid);
}

int plat_noise_read(const struct plat_noise *noise, struct plat_noise_reading *ret)
{
	struct plat_noise_reading r;
	struct rusage self, children;
	struct timespec ts;
	int rc;

	if ((rc = read_busy(&r.busy_cpu_s)) < 0)
		return rc;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &children);
	r.ours_cpu_s = seconds_of(&self.ru_utime) + seconds_of(&self.ru_stime) +
		       seconds_of(&children.ru_utime) + seconds_of(&children.ru_stime);
	if (noise->companion_pid > 0)
		r.ours_cpu_s += plat_process_cpu_s(noise->companion_pid);
	r.disk_ios = read_disk_ios(noise);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r.at_ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	*ret = r;
	return 0;
}

#endif
