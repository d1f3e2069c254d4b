/*
 * pe_pipeline.h - the pieces of the `pe` experiment pipeline (pipeline.c
 * drives them in order): generate (pe_generate.c), build (pe_build.c),
 * transform (pe_transform.c), verify (pe_verify.c), the program runner
 * (pe_runner.c) and MSVC command generation (pe_msvc.c).
 *
 * Names in the generated program (used by every phase):
 *   DLL i (0-based) is "lt<i>.dll"; its function j is "lt<i>_f<j>",
 *   exported as ordinal j + 1 (by name, or NONAME for ordinal imports);
 *   the program is "main.exe", the timing floor "empty.exe".
 *   main.exe with no argument is the timed program; "probe FILE" writes
 *   the probe report (pe_verify.c reads it); "trace FILE" (trace build
 *   only) runs the startup scenario and writes each DLL's first-call order.
 */
#ifndef LOADLAB_AGENT_PE_PIPELINE_H
#define LOADLAB_AGENT_PE_PIPELINE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loadlab/plat.h"
#include "family/pipeline.h"

/* The base every DLL of a `same` variant asks for (the column's worst case). */
#define PE_SAME_BASE 0x10000000ull
/* Where the rebaser starts stacking DLLs for `unique` bases (REBASE -b). */
#define PE_UNIQUE_BASE 0x60000000ull
/* Longest time one run of a generated program may take. */
#define PE_RUN_TIMEOUT_MS 60000
/* Longest time one compile or link may take. */
#define PE_TOOL_TIMEOUT_MS 300000
/* Largest probe or trace report read back. */
#define PE_MAX_REPORT (64u * 1024u * 1024u)

/* One link configuration: DLLs and main.exe built with the same flags and
 * import libraries. Variants that share a set copy its files. */
struct pe_link_set {
	bool toolchain_flags; /* the linker's defaults, not PE_SAME_BASE */
	bool ordinal;         /* NONAME exports, ordinal import libraries */
	bool trace_order;     /* DLL functions in startup-trace order */
	char dir[PLAT_MAX_PATH];
};

struct pe_variant {
	char name[160];
	char bases[16];       /* "same", "unique", "toolchain" */
	bool bind;
	bool ordinal;         /* imports "ordinal" */
	bool trace_order;     /* order "trace" */
	size_t link_set;      /* index into pe_context.sets */
	size_t bind_modules_bound, bind_modules_skipped, bind_functions_bound;
	char dir[PLAT_MAX_PATH];
	bool valid;
	char invalid_reason[512];
	cJSON *verify;        /* owned */
	cJSON *files;         /* owned */
};

struct pe_runner {
	bool wine;                             /* programs run under Wine's loader */
	bool through_wine64;                   /* Linux: each started by wine64 */
	char wine64[PLAT_MAX_PATH];
	char wineserver[PLAT_MAX_PATH];
	char prefix_env[PLAT_MAX_PATH + 16];   /* "WINEPREFIX=..." */
	const char *env[5];
	struct plat_process *server;
	char system_dirs[2][PLAT_MAX_PATH];    /* where the loader finds system DLLs */
	size_t system_dir_count;
};

struct pe_toolchain {
	char gcc[PLAT_MAX_PATH];
	char version[128];
	/* The compiler is the host's (Unix) mingw-w64 and this agent a Windows
	 * build under Wine: it runs through plat_spawn_host(), and every path
	 * in its arguments is a host path (plat_host_path()). */
	bool host;
	char target[64];      /* `gcc -dumpmachine`: "x86_64-w64-mingw32", "i686-w64-mingw32" */
	bool x86;             /* 32-bit x86: the DLL entry is _DllMain@12 */
};

struct pe_context {
	const struct pipeline_task *task;
	int dlls, exports, globals;
	bool main_call;             /* generator.main "call" */
	int warm_runs, warmup;     /* measure.warm; runs 0: not asked for */
	int cold_runs;             /* measure.cold.runs; 0: not asked for */
	int churn_processes;       /* measure.churn.processes; 0: not asked for */
	const cJSON *churn_sets;   /* borrowed: measure.churn.dll_sets */
	uint64_t seed;             /* shuffles and bootstrap, from the job and cell */
	char work[PLAT_MAX_PATH];
	char src[PLAT_MAX_PATH];
	char obj[PLAT_MAX_PATH];
	struct pe_toolchain toolchain;
	struct pe_runner runner;
	struct pe_variant *variants;
	size_t variant_count;
	struct pe_link_set sets[8];
	size_t set_count;
	bool need_trace;
	/* trace[i] lists DLL i's function indexes in first-call order. */
	int **trace;
	size_t *trace_count;
	cJSON *floor_files;         /* owned */
	cJSON *warm, *cold;         /* owned: measure_warm() and measure_cold() results */
	cJSON *churn;               /* owned: churn_run_sets() result */
};

/* The empty program's name among the timed programs. */
#define PE_FLOOR_NAME "(floor)"

/* Joins A "/" B into OUT (PLAT_MAX_PATH + 1 bytes); LL_ETOOBIG when long. */
int pe_path(char *out, const char *a, const char *b);

/* Calls the task's progress callback; LL_ESTATE (with a message) when it
 * says the task was cancelled. */
int pe_progress(const struct pe_context *ctx, const char *phase, int percent);

/* ---- generate ---- */

/* Writes every source of the program into ctx->src: lt<i>.c, lt<i>.def
 * (by name), lt<i>_ordinal.def (NONAME), lt<i>_trace.def (by name plus
 * the trace export), main.c and empty.c. */
int pe_generate(struct pe_context *ctx);

/* Rewrites lt<i>_order.c for every DLL with its functions placed in
 * ".text$a_<rank>" sections in ctx->trace order (the rest after them, in
 * link order), so GNU ld's sorting of grouped sections lays them out in
 * trace order (ld sorts ".text$*" input sections by name within .text). */
int pe_generate_order(struct pe_context *ctx);

/* ---- build ---- */

/* Finds the mingw-w64 compiler: x86_64-w64-mingw32-gcc on Linux; gcc in
 * PATH on Windows, else, for a Windows agent under Wine, the host's
 * x86_64-w64-mingw32-gcc (as Z:\usr\bin\..., toolchain.host set); and
 * asks it for its target (`gcc -dumpmachine`, its answer written to a
 * file in WORK), because 32-bit x86 decorates the DLLs' stdcall entry
 * point. LL_ENOTFOUND when there is none. */
int pe_toolchain_find(const char *work, struct pe_toolchain *ret_toolchain);

/* Compiles every object (task->jobs at a time) and links every set of
 * ctx->sets whose trace_order is TRACE_ORDER (the trace-ordered sets need
 * the trace first). With TRACE_BUILD, also builds the instrumented trace
 * set into ctx->work/trace. */
int pe_build(struct pe_context *ctx, bool trace_order, bool trace_build);

/* Runs the trace build once in its startup scenario and fills ctx->trace. */
int pe_build_trace_run(struct pe_context *ctx);

/* ---- MSVC (pe_msvc.c) ---- */

/* The commands (an array of argv arrays) that would build VARIANT's DLLs
 * and program with cl and link: .def exports (NONAME for ordinal), /BASE
 * for `same`, /DYNAMICBASE:NO, /ORDER:@file for trace order. SRC and OUT
 * are folders. The caller deletes *RET_COMMANDS. */
int pe_msvc_commands(int dlls, const struct pe_variant *variant, const char *src,
		     const char *out, cJSON **ret_commands);

/* ---- transform ---- */

/* Makes each variant's folder from its link set: copies, rebases
 * (`unique`: pe_rebase_batch, 64 KiB aligned, non-overlapping) and binds
 * (pe_bind against the folder, then the runner's system folders). */
int pe_transform(struct pe_context *ctx);

/* ---- verify ---- */

/* Probes every variant, fills its verify, files, valid and reason. */
int pe_verify(struct pe_context *ctx);

/* The files of FOLDER that make up a variant (lt<i>.dll..., main.exe or
 * just empty.exe when EMPTY) as [{"name","sha256","size"}]. */
int pe_files_json(const struct pe_context *ctx, const char *folder, bool empty, cJSON **ret_files);

/* ---- measure ---- */

/* Times every valid variant and the floor, warm (when warm_runs > 0) and
 * cold (when cold_runs > 0), into ctx->warm and ctx->cold (measure.h). */
int pe_measure(struct pe_context *ctx);

/* Runs the churn test (churn.h) for every DLL set the job names, with the
 * Windows programs as the runner runs them ("generated": the first valid
 * variant's DLLs), into ctx->churn. */
int pe_churn(struct pe_context *ctx);

/* ---- runner ---- */

/* Prepares the runner: natively on Windows (a Windows agent under Wine
 * starts them the same way, and notes `wine`); under Linux a private
 * WINEPREFIX below WORK, a persistent wineserver and a booted prefix. */
int pe_runner_start(struct pe_runner *runner, const char *work);

/* Runs EXE (a path) with ARGS (NULL-terminated, may be NULL) in CWD, its
 * output to OUTPUT_PATH (may be NULL). Gives exit code and wall time. */
int pe_runner_run(struct pe_runner *runner, const char *exe, const char *const *args,
		  const char *cwd, const char *output_path, int *ret_exit_code, long long *ret_wall_us);

/* Stops the wineserver this runner started (by its PID). */
void pe_runner_stop(struct pe_runner *runner);

/* Reads a whole (small) text file into a malloc'd string, at most LIMIT
 * bytes. */
int pe_read_file(const char *path, size_t limit, char **ret_text, size_t *ret_len);

/* Writes TEXT to PATH. */
int pe_write_file(const char *path, const char *text, size_t len);

#endif
