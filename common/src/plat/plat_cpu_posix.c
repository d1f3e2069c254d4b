/*
 * plat_cpu_posix.c - plat_process_cpu_s() (plat.h) on Linux: a process's
 * CPU time from /proc.
 */
#ifndef _WIN32

#include "loadlab/plat.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* /proc/PID/stat's utime and stime, fields 14 and 15. */
double plat_process_cpu_s(long long pid)
{
	char path[64], text[1024], *p;
	unsigned long long utime = 0, stime = 0;
	long hz = sysconf(_SC_CLK_TCK);
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%lld/stat", pid);
	if (hz <= 0 || !(f = fopen(path, "re")))
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	/* The name, in parentheses, may hold spaces: fields follow the last ')'. */
	if (!(p = strrchr(text, ')')) ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
		return 0;
	return (double)(utime + stime) / (double)hz;
}

#endif
