/*
 * loader_stats.h - the ELF loader's own work, once per variant: glibc's
 * LD_DEBUG=statistics, which ld.so writes when a program starts (its
 * relocations, relative relocations, the time spent in the loader) and
 * again when it exits (the final count, lazy bindings included).
 *
 *	struct loader_stats s;
 *	if (loader_stats_parse(text, &s) == 0) ... s.relocations ...
 *	loader_stats_take(&program, "/w/ld-stats", 60000, &json);  // runs it once
 *
 * glibc 2.36 (Debian 12) writes, each line after "PID:\t":
 *
 *	runtime linker statistics:
 *	  total startup time in dynamic loader: 3145216 cycles
 *	            time needed for relocation: 124706 cycles (3.9%)
 *	                 number of relocations: 333
 *	      number of relocations from cache: 7
 *	        number of relative relocations: 267
 *	           time needed to load objects: 132066 cycles (4.1%)
 *	runtime linker statistics:
 *	           final number of relocations: 359
 *	final number of relocations from cache: 7
 *
 * Times are in the unit glibc names (on x86 "cycles": the time-stamp
 * counter, not core cycles), kept as written. Functions return 0 or a
 * negative LL_E* code with a message (err.h).
 */
#ifndef LOADLAB_AGENT_LOADER_STATS_H
#define LOADLAB_AGENT_LOADER_STATS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "measure/measure.h"

/* Most bytes of LD_DEBUG output read per run. */
#define LOADER_STATS_MAX_OUTPUT (256 * 1024)

/* One process's statistics; -1 where its output did not say. */
struct loader_stats {
	long long startup_time;    /* total startup time in dynamic loader */
	long long relocation_time; /* time needed for relocation */
	long long load_time;       /* time needed to load objects */
	char time_unit[16];        /* the unit glibc wrote ("cycles"); "" when no time */
	long long relocations;     /* number of relocations (at start-up) */
	long long relocations_from_cache;
	long long relative_relocations;
	long long final_relocations; /* at exit: lazy bindings included */
	long long final_relocations_from_cache;
	long long pid; /* the process the lines are of (the first one in TEXT) */
};

/* Parses LD_DEBUG=statistics output TEXT (the lines of the first process
 * in it; other processes' lines and other LD_DEBUG lines are skipped).
 * LL_ENOTFOUND when TEXT holds no statistics at all (a static program, or
 * not glibc's loader); LL_EFORMAT when a statistics line's number cannot be
 * read. */
int loader_stats_parse(const char *text, struct loader_stats *ret);

/* S as the result's "loader": {"source", "relocations",
 * "relative_relocations", "relocations_from_cache", "final_relocations",
 * "final_relocations_from_cache", "startup_time", "relocation_time",
 * "load_time", "time_unit"}: only what was read, never a zero for what
 * was not. */
int loader_stats_json(const struct loader_stats *s, cJSON **ret);

/* Runs P once (not timed) with LD_DEBUG=statistics and LD_DEBUG_OUTPUT in
 * DIR (created; emptied of earlier output), reads what its first process
 * wrote and returns the "loader" object; a run that failed or wrote no
 * statistics gives {"source", "not_counted": why} instead, since the
 * loader's work is a fact beside the times, not a reason to fail a task.
 * Only LL_ENOMEM and a DIR that cannot be made are errors. Linux only
 * (elsewhere {"not_counted": ...}). */
int loader_stats_take(const struct measure_program *p, const char *dir, long long timeout_ms, cJSON **ret);

#endif
