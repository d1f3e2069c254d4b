/*
 * family_build.h - what the families that generate a program of libraries,
 * build it with a compiler driver and time it (pe/, elf/) share: the state
 * every such family keeps (struct family_context, embedded first in its
 * own), a variant's outcome (struct family_variant), the commands of a
 * build run task->jobs at a time, the files of a folder as the result
 * lists them, the programs given to the driver to time, and the parts of
 * the result (variants, floor) they describe alike. They call no stage
 * and no driver.
 */
#ifndef LOADLAB_AGENT_FAMILY_BUILD_H
#define LOADLAB_AGENT_FAMILY_BUILD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "family/family.h"
#include "loadlab/job_spec.h"
#include "loadlab/plat.h"
#include "measure/measure.h"

/* The file names of a generated program: library i is
 * LIBRARY_PREFIX i LIBRARY_SUFFIX ("lt0.dll", "liblt0.so"), the program
 * MAIN, the timing floor EMPTY. */
struct family_names {
	const char *library_prefix, *library_suffix;
	const char *main, *empty;
};

/* A program given to the driver to time: its argv and files. */
struct family_program {
	const char *argv[3];
	char exe[PLAT_MAX_PATH + 1];
	char dir[PLAT_MAX_PATH + 1]; /* its folder, the cwd it runs in */
	char **files;                /* program + libraries, NULL-terminated */
};

/* The state every such family keeps, embedded first in its context. */
struct family_context {
	const struct pipeline_task *task;
	int dlls, exports, globals; /* generator.dlls, .exports, .globals_per_function */
	bool main_call;             /* generator.main "call" */
	char work[PLAT_MAX_PATH];
	char src[PLAT_MAX_PATH];
	char obj[PLAT_MAX_PATH];
	bool need_trace;
	/* trace[i] lists library i's function indexes in first-call order. */
	int **trace;
	size_t *trace_count;
	cJSON *floor_files; /* owned */
	/* What the family's timing gives the driver. */
	struct family_program measured[MEASURE_MAX_PROGRAMS];
	size_t measured_count;
};

/* A variant's outcome, embedded first in the family's variant. */
struct family_variant {
	char name[JOB_SPEC_MAX_NAME + 1];
	char dir[PLAT_MAX_PATH];
	bool valid;
	char invalid_reason[512];
	cJSON *verify; /* owned */
	cJSON *files;  /* owned */
};

/* ---- state ---- */

/* Fills CTX's task and work folder from RUN and its generator from the
 * job's "generator" (normalized): dlls, exports, globals_per_function,
 * main. */
int family_context_init(struct family_context *ctx, const struct family_run *run);

/* Makes CTX's src and obj folders (below its work folder). */
int family_context_folders(struct family_context *ctx);

/* Frees what CTX owns (not CTX). */
void family_context_release(struct family_context *ctx);

/* Releases what each of the COUNT VARIANTS (each SIZE bytes, starting
 * with its struct family_variant) owns, then frees VARIANTS (may be
 * NULL). */
void family_variants_free(void *variants, size_t count, size_t size);

/* Reads the family's parts of JOB (normalized) into STATE, the family's
 * context. */
typedef int family_read_job(void *state, const cJSON *job);

/* A family's validate (family.h): a zeroed context of SIZE bytes (its
 * struct family_context first) into *RET_STATE, filled by
 * family_context_init() and READ_JOB; on failure freed by RELEASE. */
int family_state_new(const struct family_run *run, size_t size, family_read_job *read_job,
		     void (*release)(void *state), void **ret_state);

/* Marks VARIANT invalid with the printf-formatted reason, unless it is
 * invalid already (the first reason stays). */
void family_variant_invalid(struct family_variant *variant, const char *fmt, ...)
	__attribute__((format(gnu_printf, 2, 3)));

/* ---- sources (family_generate.c) ---- */

struct buf;

/* Whether the startup scenario calls function J of library I: every
 * function whose (7j + 3i) mod 4 is 0 (last one first), so that trace
 * order differs from link order. */
bool family_in_startup(int i, int j);

/* Writes B's text to CTX->src/NAME. */
int family_write_source(const struct family_context *ctx, const char *name, struct buf *b);

/* Appends to B function J of library I's K globals and its table of K
 * pointers to them ("static int lt<i>_g<j>_<k>;", "int *lt<i>_p<j>[K]"). */
int family_globals_source(struct buf *b, int i, int j, int globals);

/* Appends to B library I's CTX->exports functions, each after its globals
 * (family_globals_source()): "EXPORT void lt<i>_f<j>(void)", which sets
 * every one of them, placed by "__attribute__((section("...")))" in
 * section SORTED followed by RANK[j] (six digits) when RANK (may be NULL)
 * has RANK[j] >= 0, else in section LINKED followed by j (no attribute
 * when LINKED is NULL). */
int family_functions_source(const struct family_context *ctx, struct buf *b, int i, const int *rank,
			    const char *sorted, const char *linked, const char *export);

/* Appends to B ll_startup() (the startup scenario's calls, in call order)
 * and ll_rest() (every other function of every library). */
int family_calls_source(const struct family_context *ctx, struct buf *b);

/* Library I's source into B; RANK[j] >= 0 places function j at that
 * position of the trace, RANK NULL keeps link order. FAMILY is the
 * family's context. */
typedef int family_library_source(const void *family, int i, const int *rank, struct buf *b);

/* The main program's source into B. */
typedef int family_main_source(const void *family, struct buf *b);

/* Writes into CTX->src lt<i>.c for every library (LIBRARY), main.c (MAIN)
 * and empty.c (EMPTY), reporting progress "generate". */
int family_generate(const struct family_context *ctx, family_library_source *library,
		    family_main_source *main, const char *empty, const void *family);

/* Writes into CTX->src lt<i>_order.c for every library (LIBRARY), its
 * traced functions ranked in CTX->trace order. */
int family_generate_order(const struct family_context *ctx, family_library_source *library,
			  const void *family);

/* ---- build commands ---- */

/* One command: argv strings owned, its output into LOG. */
struct family_command {
	char **argv;
	size_t argc, cap;
	char log[PLAT_MAX_PATH + 1];
};

struct family_commands {
	struct family_command *items;
	size_t count, cap;
};

/* Frees LIST's commands and empties it. */
void family_commands_release(struct family_commands *list);

/* A new empty command at the end of LIST; NULL when out of memory. */
struct family_command *family_command_new(struct family_commands *list);

/* Appends to C's argv the printf-formatted argument; LL_ETOOBIG past
 * PLAT_MAX_ARGS arguments or a PLAT_MAX_PATH + 256 byte argument. */
int family_command_arg(struct family_command *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets C's log to DIR/NAME.log. */
int family_command_log(struct family_command *c, const char *dir, const char *name);

/* Runs LIST, TASK->jobs at a time (at most 64), in order of start, each
 * for at most TIMEOUT_MS, spawned as the host's programs when HOST
 * (plat_spawn_host()); stops at the first failure (LL_EIO with the first
 * lines of its log) or cancellation. Progress "build" runs from FROM to TO
 * percent. */
int family_commands_run(const struct pipeline_task *task, struct family_commands *list, bool host,
			int timeout_ms, int from, int to);

/* A build's commands, in the order they run: compile the objects, link
 * the libraries, link the programs against them. */
struct family_build {
	struct family_commands objects, libraries, programs;
};

/* Runs BUILD's objects (LINKS false), or its libraries then its programs
 * (LINKS true), through family_commands_run() with TASK, HOST and
 * TIMEOUT_MS; progress "build" runs 0-40 (objects), 40-80 (libraries) and
 * 80-90 (programs) percent, or 50-70, 70-90 and 90-100 for the
 * trace-ordered build (TRACE_ORDER). */
int family_build_run(const struct pipeline_task *task, struct family_build *build, bool links, bool host,
		     int timeout_ms, bool trace_order);

/* Frees BUILD's commands and empties it. */
void family_build_release(struct family_build *build);

/* ---- results ---- */

/* The files of FOLDER (CTX->dlls libraries and the main program, or just
 * the empty program when EMPTY), named as NAMES says, as
 * [{"name","sha256","size"}]. */
int family_files_json(const struct family_context *ctx, const struct family_names *names, const char *folder,
		      bool empty, cJSON **ret_files);

/* What the driver times (family.h): every valid one of the COUNT
 * VARIANTS (each SIZE bytes, starting with its struct family_variant),
 * then the floor FLOOR_NAME, the empty program of work/empty (its files
 * into CTX->floor_files), each run as itself in its folder with its
 * program and libraries as files. Fills CTX->measured, which CTX keeps. */
int family_timing(struct family_context *ctx, const struct family_names *names, const void *variants,
		  size_t count, size_t size, const char *floor_name, struct family_timing *ret);

/* A variant's "knobs" as the result lists them (VARIANT is the family's
 * variant); NULL when out of memory. */
typedef cJSON *family_knobs_json(const void *variant);

/* Adds to RESULT "variants": for each of the COUNT VARIANTS (each SIZE
 * bytes, starting with its struct family_variant) an object with "name",
 * the family's "knobs" (KNOBS), "valid", "invalid_reason" when not,
 * "verify" and "files" (moved out of the variant) and the warm and cold
 * figures MEASURED holds for it; then "floor": {"name": EMPTY, "files"
 * (moved out of CTX), warm and cold figures of FLOOR_NAME} and
 * "measurement". What is not moved stays where it was. */
int family_describe(cJSON *result, struct family_context *ctx, void *variants, size_t count, size_t size,
		    family_knobs_json *knobs, const char *empty, const char *floor_name,
		    const struct family_measured *measured);

#endif
