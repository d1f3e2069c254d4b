/*
 * elf_family.h - the `elf` family (family.h): Linux shared objects built
 * with gcc and GNU ld or clang and lld (the task's cell "toolchain",
 * runner.h), run natively (docs/elf-pipeline.md). Its entry
 * elf_family (elf_family.c: reads the job, runs the stages, describes the
 * result) and its stages: generate (elf_generate.c), build and the
 * startup trace (elf_build.c), verify (elf_verify.c: the files through
 * elfutils' libelf, the loader through LD_DEBUG=statistics and the
 * probe), what the driver times (elf_measure.c).
 *
 * Linux only: on other systems every file here compiles to nothing and
 * families.c leaves the family out.
 *
 * Names in the generated program (used by every phase):
 *   library i (0-based) is "liblt<i>.so" from lt<i>.c; its function j is
 *   "lt<i>_f<j>"; its table of function addresses "lt<i>_fns"; the
 *   program is "main", the timing floor "empty". `main` with no argument
 *   is the timed program; "probe FILE" writes each loaded object's name
 *   and load address (dl_iterate_phdr); "startup" writes ELF_STARTUP_MARK
 *   to stderr and runs the startup scenario: under LD_DEBUG=bindings and
 *   lazy binding, the loader then names each function at its first call.
 */
#ifndef LOADLAB_AGENT_ELF_FAMILY_H
#define LOADLAB_AGENT_ELF_FAMILY_H

#ifdef __linux__

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "family/family.h"
#include "family/family_build.h"
#include "family/family_util.h"
#include "loadlab/job_spec.h"
#include "loadlab/plat.h"
#include "measure/measure.h"
#include "runner/runner.h"

/* Longest time one run of a generated program may take. */
#define ELF_RUN_TIMEOUT_MS 60000
/* Longest time one compile or link may take. */
#define ELF_TOOL_TIMEOUT_MS 300000
/* Largest probe, trace or loader statistics report read back. */
#define ELF_MAX_REPORT (64u * 1024u * 1024u)
/* The line `main startup` writes to stderr before the startup scenario. */
#define ELF_STARTUP_MARK "loadlab: startup scenario"
/* The empty program's name among the timed programs. */
#define ELF_FLOOR_NAME "(floor)"

/* What one object (a library or a program) holds, read with libelf
 * (elf_verify.c, elf_read_object()). */
struct elf_object_facts {
	bool bind_now;            /* DF_BIND_NOW in DT_FLAGS or DF_1_NOW in DT_FLAGS_1 */
	bool symbolic;            /* DF_SYMBOLIC in DT_FLAGS or a DT_SYMBOLIC entry */
	bool relr;                /* a DT_RELR entry */
	bool gnu_hash, sysv_hash; /* SHT_GNU_HASH, SHT_HASH sections */
	size_t relative;          /* R_X86_64_RELATIVE in .rela.dyn */
	size_t relr_words;        /* DT_RELRSZ / DT_RELRENT */
	size_t symbolic_64;       /* R_X86_64_64 */
	size_t glob_dat;          /* R_X86_64_GLOB_DAT */
	size_t jump_slot;         /* R_X86_64_JUMP_SLOT (in .rela.plt) */
	size_t other;             /* any other type */
	size_t dynsym_defined;    /* defined symbols in .dynsym (no section or file symbols) */
	size_t dynsym_functions;  /* of them, named lt<i>_f<j> */
};

struct elf_variant {
	struct family_variant base; /* name, dir, valid, invalid_reason, verify, files */
	struct job_spec_elf_knobs knobs;
	const char *toolchain; /* the kind that builds it (static text) */
};

struct elf_context {
	struct family_context base;                   /* its measured: what elf_timing() gives the driver */
	const struct runner_elf_toolchain *toolchain; /* the cell's "toolchain", else gcc+ld */
	char cc[PLAT_MAX_PATH];                       /* its compiler driver, found in PATH */
	char cc_version[64];
	struct elf_variant *variants;
	size_t variant_count;
	bool need_hidden;
};

/* The family's entry in the table (families.c). */
extern const struct family elf_family;

/* The program's file names: liblt<i>.so, main, empty (elf_build.c: below the
 * stages that use them). */
extern const struct family_names elf_names;

/* ---- generate ---- */

/* Writes every source into ctx->src: lt<i>.c, main.c, empty.c. */
int elf_generate(struct elf_context *ctx);

/* Writes lt<i>_order.c for every library: its traced functions (ctx->trace)
 * in sections ".text.sorted.<rank>", which GNU ld's default linker script
 * places first in .text, sorted by name (`*(SORT(.text.sorted.*))`, since
 * binutils 2.36), so in trace order; the other functions after them. */
int elf_generate_order(struct elf_context *ctx);

/* ---- build ---- */

/* Compiles, task->jobs at a time, every object the variants and the
 * floor need, but GNU ld's trace-ordered ones; then, with
 * ctx->need_trace, links the trace build into work/trace: the plain
 * libraries and main, bound lazily. */
int elf_build_objects(struct elf_context *ctx);

/* GNU ld's trace-ordered objects, obj/order/lt<i>.o from lt<i>_order.c
 * (after elf_generate_order()). */
int elf_build_order_objects(struct elf_context *ctx);

/* Links every variant's libraries and program into its folder (the
 * trace-ordered ones after the trace: elf_generate_order() and
 * elf_build_order_objects() for GNU ld, elf_build_order_files() for lld)
 * and the floor into work/empty. */
int elf_build_link(struct elf_context *ctx);

/* Writes obj/order-lt<i>.txt for every library: its traced functions'
 * names, one a line, in trace order (lld's --symbol-ordering-file). */
int elf_build_order_files(const struct elf_context *ctx);

/* Runs the trace build's `main startup` once under LD_DEBUG=bindings and
 * fills ctx->trace with the functions the loader bound after the mark,
 * in that order: lazy binding resolves each PLT slot at its first call. */
int elf_build_trace_run(struct elf_context *ctx);

/* ---- verify ---- */

/* Reads the ELF object PATH with libelf into *RET. LL_EFORMAT with a
 * message when it is no x86-64 ELF object libelf can read. */
int elf_read_object(const char *path, struct elf_object_facts *ret);

/* Checks what the file of a library (LIB: EXPORTS functions with GLOBALS
 * globals each, as elf_generate.c writes it) says against KNOBS: the
 * first contradiction into REASON (SIZE bytes), false; true when none.
 * With PROGRAM, LIB is the program and only binding, hash style and RELR
 * are checked. */
bool elf_check_object(const struct elf_object_facts *lib, const struct job_spec_elf_knobs *knobs,
		      bool program, int exports, int globals, char *reason, size_t size);

/* Checks that the functions of library PATH named lt<INDEX>_f<j> for the
 * TRACE_COUNT indexes TRACE come first in .text, in that order. Into
 * REASON (SIZE bytes) the first contradiction, *RET_OK false. */
int elf_check_order(const char *path, int index, const int *trace, size_t trace_count, bool *ret_ok,
		    char *reason, size_t size);

/* Verifies every variant (files, loader statistics against the floor's,
 * probe), filling its verify, files, valid and reason. */
int elf_verify(struct elf_context *ctx);

/* ---- measure ---- */

/* What the driver times (family.h): every valid variant and the floor
 * (ELF_FLOOR_NAME). Fills ctx->measured, which ctx keeps. */
int elf_timing(struct elf_context *ctx, struct family_timing *ret);

#endif /* __linux__ */
#endif
