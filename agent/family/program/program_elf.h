/*
 * program_elf.h - the `program` family for a Linux build: a program job
 * whose program section says "format": "elf" (job_spec.h), run natively
 * by a Linux agent (docs/program-elf.md). Its entry program_elf_family
 * shares the family's name and claims those jobs (family.h, "claims");
 * the PE programs stay with program_family (program_family.h).
 *
 * It reuses the PE programs' context (program_int.h: the manifest, the
 * blob cache fetch, the paths, the measured programs) and adds its own
 * variants and stages:
 *
 *	generate   program_fetch() (program_fetch.c), then the exe checked to
 *	           be an ELF file and every ELF file read with libelf
 *	           (program_elf_files.c)
 *	build      the ELF helpers that ship inside the agent
 *	           (programs/programs.h: elf_audit.so, elf_launcher,
 *	           elf_empty as the floor) written out; no compiler
 *	transform  each variant's folder WORK/v/NN, hard links to its
 *	           build's files: no variant changes a byte of them
 *	verify     program_elf_verify.c: one run under the audit library and
 *	           LD_DEBUG=statistics; every object the loader opened, from
 *	           which file, at which address; the variant's claim checked;
 *	           then per-object major faults (one object evicted a run)
 *	timing     program_elf_measure.c: each valid variant and the floor,
 *	           started as the variant says (LD_BIND_NOW, the launcher)
 *
 * A job of several builds ("program.builds", the PE programs' A/B job)
 * runs every variant once per build (program_read_variants():
 * "LABEL:PRESET"), each stage on the variant's own build
 * (program_elf_use_build()), all timed in the same shuffled passes; the
 * result names each build's files and digests.
 *
 * Linux only: elsewhere these files compile to nothing and families.c
 * leaves the entry out.
 */
#ifndef LOADLAB_AGENT_PROGRAM_ELF_H
#define LOADLAB_AGENT_PROGRAM_ELF_H

#ifdef __linux__

#include "program_int.h"

/* What the launcher waits for with until "idle": no change of the
 * program's /proc/PID/maps for this long. */
#define PROGRAM_ELF_IDLE_MS 2000
/* Runs per object of the major-fault attribution (verify). */
#define PROGRAM_ELF_FAULT_RUNS 3
/* The test-only variable (docs/program-elf.md, "Tests"): when the agent's
 * own environment has it set to 1, bind-now runs without LD_BIND_NOW, a
 * mislabelled variant that verification must refuse. */
#define PROGRAM_ELF_TEST_DROP_BIND_NOW "LOADLAB_TEST_ELF_DROP_BIND_NOW"
/* Most variables a run of an ELF program is given (program_elf_env()). */
#define PROGRAM_ELF_MAX_ENV 16

extern const struct family program_elf_family;

/* What libelf says of one ELF file of the manifest. */
struct program_elf_file {
	bool elf;           /* libelf read it as an x86-64 ELF file */
	bool shared;        /* a shared object the program ships: ET_DYN with a DT_SONAME, or named *.so* */
	bool bind_now_flag; /* DF_BIND_NOW / DF_1_NOW in the file */
	size_t jump_slots;  /* R_X86_64_JUMP_SLOT: what lazy binding resolves */
	char soname[256];   /* DT_SONAME, or "" */
	char needed[1024];  /* DT_NEEDED, ' '-separated */
	char rpath[1024];   /* DT_RPATH */
	char runpath[1024]; /* DT_RUNPATH */
};

struct program_elf_variant {
	struct program_variant base; /* name, dir, valid, invalid_reason, notes, verify, files */
	bool bind_now;               /* LD_BIND_NOW=1 */
	bool pagein;                 /* the launcher reads every file of the program first */
	cJSON *faults;               /* owned: {manifest path: [major faults per run]} */
};

/* A started program's argv and environment, in one owned block. */
struct program_elf_start {
	const char **argv;                        /* owned array; strings in STRINGS or borrowed */
	const char *env[PROGRAM_ELF_MAX_ENV + 1]; /* NULL-terminated, in STRINGS */
	char **strings;                           /* owned */
	size_t string_count, string_cap;
	char **files; /* owned, NULL-terminated: what a cold run evicts (timing only) */
};

struct program_elf_context {
	struct program_context base;
	bool idle;                          /* until "idle" */
	struct program_elf_file *elf_all;   /* owned: one per base.all_files, build after build */
	struct program_elf_file *elf_files; /* the build in use's: one per base.files */
	struct program_elf_variant *variants;
	size_t variant_count;
	char audit_so[PLAT_MAX_PATH + 1];
	char launcher[PLAT_MAX_PATH + 1];
	char empty[PLAT_MAX_PATH + 1];
	char probe_dir[PLAT_MAX_PATH + 1];                    /* WORK/probe */
	bool drop_bind_now;                                   /* PROGRAM_ELF_TEST_DROP_BIND_NOW */
	struct program_elf_start timed[MEASURE_MAX_PROGRAMS]; /* what program_elf_timing() gives */
	size_t timed_count;
};

/* ---- files (program_elf_files.c) ---- */

/* Makes build B the one in use: program_use_build() and its ELF files. */
void program_elf_use_build(struct program_elf_context *ctx, size_t b);

/* After program_fetch(): LL_EFORMAT unless every build's exe is an ELF
 * file (the message names the build of several); every manifest file of
 * every build read with libelf into ctx->elf_all; the exes and the shared
 * objects made executable. Leaves build 0 in use. */
int program_elf_read_files(struct program_elf_context *ctx);

/* The ELF helpers into WORK/tools and the floor into WORK/floor. */
int program_elf_tools(struct program_elf_context *ctx);

/* Each variant's folder WORK/v/NN: hard links to WORK/files. */
int program_elf_folders(struct program_elf_context *ctx);

/* The build in use's files as the result's "program.elf" lists them:
 * [{"file", "soname", "needed", "rpath", "runpath", "bind_now_flag",
 * "jump_slots", "shared"}] for the ELF files; NULL when out of memory. */
cJSON *program_elf_files_json(const struct program_elf_context *ctx);

/* ---- how a variant is started (program_elf_measure.c) ---- */

/* How VAR (NULL: the floor) is started: through the launcher, with
 * --pagein for pagein and --idle-ms for until "idle", LD_BIND_NOW=1 for bind-now, the loader variables
 * of the agent's own environment cleared (LD_LIBRARY_PATH, LD_PRELOAD,
 * LD_AUDIT, LD_DEBUG, LD_BIND_NOW), then the EXTRA_ENV entries (NULL
 * terminated, may be NULL; copied). Release with program_elf_start_release. */
int program_elf_start_init(const struct program_elf_context *ctx, const struct program_elf_variant *var,
			   const char *const *extra_env, struct program_elf_start *ret);
void program_elf_start_release(struct program_elf_start *start);

/* What the driver times: every valid variant and the floor. */
int program_elf_timing(struct program_elf_context *ctx, struct family_timing *ret);

/* ---- verify (program_elf_verify.c) ---- */

/* Probes every variant: its verify, files, valid and reason; then the
 * major faults per object of every valid one. */
int program_elf_verify(struct program_elf_context *ctx);

/* Adds to the variant object O's cold "modules" each module's
 * "major_faults" (the median of VAR's attribution runs) where VAR has
 * them; nothing else changes. */
int program_elf_faults_merge(const struct program_elf_context *ctx, const struct program_elf_variant *var,
			     cJSON *o);

#endif /* __linux__ */
#endif
