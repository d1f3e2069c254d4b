/*
 * pe_family.h - the `pe` family (family.h): its entry pe_family
 * (pe_family.c: reads the job, runs the stages, describes the result) and
 * its stages: generate (pe_generate.c), build (pe_build.c), transform
 * (pe_transform.c), verify (pe_verify.c), what the driver times
 * (pe_measure.c) and MSVC command generation (pe_msvc.c). Programs run
 * through the runner and are built by the toolchain of runner/runner.h.
 *
 * Names in the generated program (used by every phase):
 *   DLL i (0-based) is "lt<i>.dll"; its function j is "lt<i>_f<j>",
 *   exported as ordinal j + 1 (by name, or NONAME for ordinal imports);
 *   the program is "main.exe", the timing floor "empty.exe".
 *   main.exe with no argument is the timed program; "probe FILE" writes
 *   the probe report (pe_verify.c reads it); "trace FILE" (trace build
 *   only) runs the startup scenario and writes each DLL's first-call order.
 */
#ifndef LOADLAB_AGENT_PE_FAMILY_H
#define LOADLAB_AGENT_PE_FAMILY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loadlab/plat.h"
#include "family/family.h"
#include "family/family_build.h"
#include "family/family_util.h"
#include "measure/churn.h"
#include "measure/measure.h"
#include "runner/runner.h"

/* The base every DLL of a `same` variant asks for (the column's worst case). */
#define PE_SAME_BASE 0x10000000ull
/* Where the rebaser starts stacking DLLs for `unique` bases (REBASE -b). */
#define PE_UNIQUE_BASE 0x60000000ull
/* Longest time one run of a generated program may take. */
#define PE_RUN_TIMEOUT_MS RUNNER_RUN_TIMEOUT_MS
/* Longest time one compile or link may take. */
#define PE_TOOL_TIMEOUT_MS 300000
/* The FileAlignment GNU ld gives a PE image when not told (0x200). */
#define PE_LINKER_FILE_ALIGNMENT 512
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
	struct family_variant base; /* name, dir, valid, invalid_reason, verify, files */
	char bases[16];             /* "same", "unique", "toolchain" */
	bool bind;
	bool ordinal;     /* imports "ordinal" */
	bool trace_order; /* order "trace" */
	size_t link_set;  /* index into pe_context.sets */
	size_t bind_modules_bound, bind_modules_skipped, bind_functions_bound;
	cJSON *loader; /* owned: variants[].loader (pe_loader_variant()), moved into the result */
};

/* The generator's pe-only build knobs (job_spec.h; docs/pe-pipeline.md). */
struct pe_knobs {
	int function_bytes;   /* NOP bytes each function executes (0: none) */
	double startup_share; /* share of each DLL's functions at startup; 0: the fixed quarter */
	bool main_startup;    /* generator.main "startup": the timed program calls the startup set only */
	int file_alignment;   /* --file-alignment for every link; 0: the linker's (512) */
	bool crt;             /* DLLs linked with the CRT (DllMainCRTStartup), not -nostdlib */
	bool strip_debug;     /* DLLs linked with --strip-debug: no .debug_* sections */
};

struct pe_context {
	struct family_context base; /* its measured: what pe_timing() gives the driver */
	struct pe_knobs knobs;
	struct runner_toolchain toolchain;
	struct runner runner;
	struct pe_variant *variants;
	size_t variant_count;
	struct pe_link_set sets[8];
	size_t set_count;
	char *churn_libs[CHURN_MAX_LIBS + 1]; /* the first valid variant's DLLs */
};

/* The family's entry in the table (families.c). */
extern const struct family pe_family;

/* The empty program's name among the timed programs. */
#define PE_FLOOR_NAME "(floor)"

/* The program's file names: lt<i>.dll, main.exe, empty.exe (pe_build.c:
 * below the stages that use them). */
extern const struct family_names pe_names;

/* ---- generate ---- */

/* Writes every source of the program into ctx->src: lt<i>.c, lt<i>.def
 * (by name), lt<i>_ordinal.def (NONAME), lt<i>_trace.def (by name plus
 * the trace export), main.c and empty.c. */
int pe_generate(struct pe_context *ctx);

/* Whether function J of DLL I is on the startup path: with a startup
 * share S, round(S * exports) functions (at least 1) spread evenly over
 * the DLL, offset by I; without one, family_in_startup(). */
bool pe_in_startup(const struct pe_context *ctx, int i, int j);

/* Rewrites lt<i>_order.c for every DLL with its functions placed in
 * ".text$a_<rank>" sections in ctx->trace order (the rest after them, in
 * link order), so GNU ld's sorting of grouped sections lays them out in
 * trace order (ld sorts ".text$*" input sections by name within .text). */
int pe_generate_order(struct pe_context *ctx);

/* ---- build ---- */

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
int pe_msvc_commands(int dlls, const struct pe_variant *variant, const char *src, const char *out,
		     cJSON **ret_commands);

/* ---- transform ---- */

/* Makes each variant's folder from its link set: copies, rebases
 * (`unique`: pe_rebase_batch, 64 KiB aligned, non-overlapping) and binds
 * (pe_bind against the folder, then the runner's system folders) when
 * BIND (a build task binds nothing: docs/builds.md). */
int pe_transform(struct pe_context *ctx, bool bind);

/* Binds every variant that asks for it in its folder (a shared build's
 * files, fetched there): the transform that depends on this machine. */
int pe_transform_bind(struct pe_context *ctx);

/* ---- verify ---- */

/* Probes every variant, fills its verify, files, valid and reason, and
 * its loader (pe_loader_variant()). */
int pe_verify(struct pe_context *ctx);

/* VAR's "loader" (pe_loader.c): the loader's work for main.exe and its
 * DLLs in VAR's folder (pe_loader_work.h), as PROBE (the probe report;
 * NULL when the probe failed) saw the modules placed, with the static
 * count beside it ("static"); under Wine, "cannot_show" says what Wine's
 * loader hides. A file the toolkit cannot read gives {"source",
 * "not_counted": why}. Only LL_ENOMEM is an error. */
int pe_loader_variant(const struct pe_context *ctx, struct pe_variant *var, const cJSON *probe);

/* ---- measure ---- */

/* What the driver times (family.h): every valid variant and the floor
 * (PE_FLOOR_NAME, the empty program), as the runner starts them, and for
 * the churn test's "generated" set the DLLs of the first valid variant.
 * Fills ctx->measured and ctx->churn_libs, which ctx keeps. */
int pe_timing(struct pe_context *ctx, struct family_timing *ret);

#endif
