/*
 * family.h - an experiment family: a table of functions that the pipeline
 * driver (pipeline.c, pipeline_run()) calls in order. The driver knows no
 * family by name: it looks the job's "family" up in families[] and calls
 *
 *	validate   read the family's parts of the (normalized) job, allocate
 *	           its per-run state
 *	generate   write the sources into the work folder
 *	build      compile and link them
 *	transform  turn what was built into the variants (and start what runs
 *	           them)
 *	verify     check every variant against its knobs: valid or not, why
 *	timing     give the programs to time (the valid variants, then the
 *	           floor) and what the churn test loads; the driver times them
 *	           itself (measure/measure.h, measure/churn.h), so timing lives
 *	           once, not per family
 *	describe   add the family's part of the result (variants, floor,
 *	           measurement, toolchain, runner)
 *	release    free the state (also after a failed stage)
 *
 * recording each stage's duration in phases_ms under the stage's name
 * (a stage may record finer phases first: family_phase_done()) and
 * reporting progress. Every stage returns 0 or a negative LL_E* code with
 * a message (err.h); the driver stops at the first failure.
 *
 * Adding a family NAME (the recipe):
 *   1. a folder agent/family/NAME/ with its stages and a header declaring
 *      `extern const struct family NAME_family;` (see pe/pe_family.h);
 *      agent/CMakeLists.txt picks its .c files up by itself;
 *   2. one line in families.c's table: &NAME_family;
 *   3. its job section in the job schema (common's job_spec) and its tests.
 * Helpers every family may use are in family_util.h; a family calls
 * nothing of pipeline.c, and the driver nothing of a family but this table.
 */
#ifndef LOADLAB_AGENT_FAMILY_H
#define LOADLAB_AGENT_FAMILY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "family/pipeline.h"
#include "measure/measure.h"

/* One run, as the driver gives it to every stage. */
struct family_run {
	const struct pipeline_task *task;
	const cJSON *job;      /* borrowed: the job, normalized (job_spec_normalize) */
	const char *work;      /* task->work_dir: an empty folder of this run */
	cJSON *phases;         /* phases_ms, owned by the driver */
	long long phase_start; /* clock_monotonic_us() of the last phase's end */
};

/* What a family gives the driver to time; everything borrowed from the
 * family's state until release. */
struct family_timing {
	struct measure_program programs[MEASURE_MAX_PROGRAMS];
	size_t count;                  /* 0..MEASURE_MAX_PROGRAMS */
	const char *const *churn_libs; /* the churn set "generated": NULL-terminated, may be NULL */
	bool churn_wine;               /* Linux: the Windows churn under Wine */
	long long timeout_ms;          /* per timed run; 0: the driver's default */
	long long companion_pid;       /* a process the programs wait on while they run (Wine's
					* wineserver): measure_options.companion_pid; 0: none */
	bool loader_statistics;        /* ELF programs started by glibc's loader: the driver runs
					* each once with LD_DEBUG=statistics after timing them
					* (measure/loader_stats.h) and adds "loader" to its
					* variant (and the floor) */
};

/* What the driver measured, for describe: measure_warm() and
 * measure_cold() results, NULL where the job asked for none. */
struct family_measured {
	const cJSON *warm;
	const cJSON *cold;
};

struct family {
	const char *name; /* the job's "family" */
	/* May be NULL: the family takes every job of its name. Else it takes
	 * only the jobs (normalized) it claims, and a family of the same name
	 * later in families[] the others (the program family's ELF programs,
	 * program/program_elf.h, before its PE programs). */
	bool (*claims)(const cJSON *job);
	int (*validate)(const struct family_run *run, void **ret_state);
	int (*generate)(struct family_run *run, void *state);
	int (*build)(struct family_run *run, void *state);
	int (*transform)(struct family_run *run, void *state);
	int (*verify)(struct family_run *run, void *state);
	int (*timing)(struct family_run *run, void *state, struct family_timing *ret);
	int (*describe)(struct family_run *run, void *state, const struct family_measured *measured,
			cJSON *result);
	void (*release)(void *state); /* STATE may be NULL */
};

/* Every family this agent runs, NULL-terminated (families.c). */
extern const struct family *const families[];

#endif
