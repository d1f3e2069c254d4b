/*
 * program_int.h - what the `program` family's files share (its entry is
 * program_family.h): the context, variants and files of a run, each
 * stage's function, and the helpers every stage uses (program_util.c).
 *
 * The `program` family (family.h): a program loadlab
 * did not write, given as a manifest of files (each a blob named by its
 * SHA-256, job_spec.h "the program family"), measured as built and as
 * loadlab's PE toolkit can change it without a relink. Its stages:
 *
 *	generate   program_fetch.c: every file from the agent's blob cache
 *	           (blobs/blob_cache.h, fed by the task's fetch_blob hook)
 *	           into WORK/files, each path checked again and kept below it
 *	build      program_tools.c: the helper programs that ship inside
 *	           the agent (programs/programs.h: debug_probe.exe,
 *	           idle_launcher.exe, empty_program.exe as the floor)
 *	           written into WORK/tools and WORK/floor; no compiler
 *	transform  program_transform.c: each variant's folder WORK/v/NN, a
 *	           copy of the files, then its knobs applied
 *	verify     program_verify.c: the program run once under the debug
 *	           probe; every module's preferred and actual base against
 *	           the variant's claim, and where each came from
 *	           (program_modules.c: the program's DLLs from its folder,
 *	           not Wine's builtins of the same names, which the runner's
 *	           WINEDLLOVERRIDES, set after runner_start, has Wine avoid)
 *	timing     program_measure.c: each valid variant and the floor (the
 *	           empty program), as the runner starts them
 *
 * program_family.c reads the job, runs the stages, describes the result
 * and releases; the stages call program_util.c's helpers, never it.
 */
#ifndef LOADLAB_AGENT_PROGRAM_INT_H
#define LOADLAB_AGENT_PROGRAM_INT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "family/family.h"
#include "family/family_util.h"
#include "loadlab/job_spec.h"
#include "loadlab/plat.h"
#include "measure/measure.h"
#include "programs/programs.h"
#include "runner/runner.h"

/* Where the rebaser starts stacking the program's DLLs (REBASE -b), as
 * the pe family's unique bases: clear of a PE32 program at 0x400000 and a
 * PE32+ one at 0x140000000. */
#define PROGRAM_UNIQUE_BASE 0x60000000ull
/* How long the probe lets a program that waits for input (until
 * "input-idle") sit without a debug event before it ends it. */
#define PROGRAM_PROBE_QUIET_MS 3000
/* What a timed run through the idle launcher may take beyond the job's
 * timeout_s: the launcher's own start and the ending of the program. */
#define PROGRAM_LAUNCHER_SLACK_MS 10000
/* Largest probe report read back. */
#define PROGRAM_MAX_REPORT (4u * 1024u * 1024u)
/* The floor's name among the timed programs. */
#define PROGRAM_FLOOR_NAME "(floor)"

/* One file of the manifest. */
struct program_file {
	char path[JOB_SPEC_MAX_PROGRAM_PATH + 1]; /* relative, '/'-separated, checked */
	char sha256[65];
	bool pe;           /* the toolkit opened it as a PE image */
	bool dll;          /* ... with IMAGE_FILE_DLL */
	bool signed_image; /* ... with a security directory (Authenticode) */
	bool relocs_stripped;
	bool dynamic_base;
	uint64_t image_base;
	uint16_t machine;
	long long pe_size; /* bytes, when pe */
};

/* Bytes a task keeps free on its work folder's disk beyond what its
 * variants' rewritten files need (program_transform()). */
#define PROGRAM_FREE_MARGIN_BYTES (64ll * 1024 * 1024)

/* One build of the program: a job names one, or several for an A/B job
 * ("program": {"builds": [...]}, job_spec.h). Its files are a slice of the
 * context's all_files, fetched into its own folder. */
struct program_build {
	char label[JOB_SPEC_MAX_BUILD_LABEL + 1]; /* "" for a one-build job */
	struct program_file *files;               /* borrowed: within all_files */
	size_t file_count;
	size_t exe;                        /* index of its exe in files */
	char files_dir[PLAT_MAX_PATH + 1]; /* WORK/files, or WORK/files/NN of several */
};

struct program_variant {
	char name[JOB_SPEC_MAX_NAME + 1]; /* "PRESET", or "LABEL:PRESET" of several builds */
	char preset[JOB_SPEC_MAX_NAME + 1];
	size_t build;      /* index into the context's builds */
	bool unique_bases; /* bases "unique" (else "as-built") */
	bool bind;
	bool aslr_off; /* aslr "off" (else "as-built") */
	char dir[PLAT_MAX_PATH + 1];
	bool valid;
	char invalid_reason[512];
	cJSON *notes;     /* owned: ["..."], facts that are no contradiction */
	cJSON *transform; /* owned: what the transform did, for verify */
	cJSON *verify;    /* owned */
	cJSON *files;     /* owned */
	cJSON *loader;    /* owned: a PE variant's loader work (program_loader_variant()) */
};

struct program_context {
	const struct pipeline_task *task;
	char work[PLAT_MAX_PATH + 1];
	/* The build in use (program_use_build()): its files, exe and folder.
	 * Every stage works on one build at a time, a variant on its own. */
	char files_dir[PLAT_MAX_PATH + 1]; /* the program as built */
	struct program_file *files;        /* borrowed: the build's */
	size_t file_count;
	size_t exe; /* index of the program's exe in files */
	struct program_build builds[JOB_SPEC_MAX_PROGRAM_BUILDS];
	size_t build_count;
	struct program_file *all_files; /* owned: every build's files, build after build */
	size_t all_file_count;
	char tools_dir[PLAT_MAX_PATH + 1]; /* WORK/tools: the helper programs */
	char probe_exe[PLAT_MAX_PATH + 1];
	char launcher_exe[PLAT_MAX_PATH + 1];
	char floor_dir[PLAT_MAX_PATH + 1]; /* WORK/floor: empty.exe */
	const char **args;                 /* borrowed from the job, NULL-terminated */
	size_t arg_count;
	bool input_idle; /* until "input-idle" */
	long long timeout_s;
	struct program_variant *variants;
	size_t variant_count;
	/* The helper programs written out (build), for the result. */
	const struct agent_program *helpers[3];
	size_t helper_count;
	struct runner runner;
	bool runner_started;
	cJSON *dll_overrides; /* owned: {"applied", "variable", "limit", "names", "left_out", "note"}; NULL natively */
	/* The blob cache's account of this task. */
	size_t blobs_cached, blobs_fetched;
	long long bytes_fetched;
	cJSON *floor_files; /* owned */
	/* What program_timing() gives the driver. */
	struct program_measured {
		const char **argv; /* owned array, strings borrowed or in strings */
		char **strings;    /* owned, NULL-terminated */
		char **files;      /* owned, NULL-terminated */
	} measured[MEASURE_MAX_PROGRAMS];
	size_t measured_count;
};

/* ---- validate (program_family.c) ---- */

/* The program section of JOB (files, exe, args, until, timeout_s) into
 * CTX (files, exe, args, input_idle, timeout_s), each path checked again;
 * LL_EINVAL with a message. The ELF programs' validate reads it too. */
int program_read_section(struct program_context *ctx, const cJSON *job);

/* ---- generate (program_fetch.c) ---- */

/* Every file of the manifest into ctx->files_dir through the blob cache;
 * each file's PE facts into ctx->files. */
int program_fetch(struct program_context *ctx);

/* After program_fetch(): LL_EFORMAT with a message unless the exe is a PE
 * executable (not a DLL). Nothing may run it otherwise: Wine would start a
 * script or an ELF file named .exe natively, outside the probe. */
int program_check_exe(const struct program_context *ctx);

/* PATH (a manifest path, checked again with job_spec_program_path_check)
 * joined below FOLDER into OUT (PLAT_MAX_PATH + 1 bytes), its parent
 * folders made when MAKE_PARENTS. */
int program_file_path(const char *folder, const char *path, bool make_parents, char *out);

/* ---- build (program_tools.c) ---- */

/* The helper programs into ctx->tools_dir and the floor into
 * ctx->floor_dir (empty.exe), as this agent carries them (each checked
 * against its recorded SHA-256), noted in ctx->helpers. */
int program_build_tools(struct program_context *ctx);

/* ---- transform (program_transform.c) ---- */

/* Each variant's folder from ctx->files_dir, its knobs applied. */
int program_transform(struct program_context *ctx);

/* ---- verify (program_verify.c) ---- */

/* Probes every variant: fills its verify, files, valid and reason. */
int program_verify(struct program_context *ctx);

/* The manifest's files in FOLDER as [{"name","sha256","size"}]. */
int program_files_json(const struct program_context *ctx, const char *folder, cJSON **ret_files);

/* ---- helpers of every stage (program_util.c) ---- */

/* Adds to RESULT "helpers": {"used_for": USED_FOR, "source": SOURCE,
 * "programs": CTX's helper programs (agent_program_json())}, what ran
 * beside the user's program; LL_ENOMEM. */
int program_helpers_json(const struct program_context *ctx, const char *used_for, const char *source,
			 cJSON *result);

/* The job's variants, once per build (build after build, each build's in
 * the job's order), into *RET_VARIANTS (owned; *RET_COUNT of SIZE bytes
 * each, each starting with a struct program_variant): named by their
 * preset, or "LABEL:PRESET" when the job has several builds, with their
 * build and preset; KNOBS reads the rest of ITEM into VAR (the PE
 * programs' and the ELF programs' knobs differ). *RET_VARIANTS is set
 * (the caller frees it) once allocated, even when an error follows. */
int program_read_variants(const struct program_context *ctx, const cJSON *job, size_t size,
			  int (*knobs)(const cJSON *item, struct program_variant *var), void **ret_variants,
			  size_t *ret_count);

/* Makes build B (< ctx->build_count) the one in use: ctx->files,
 * file_count, exe and files_dir are its. */
void program_use_build(struct program_context *ctx, size_t b);

/* Marks VAR invalid with a reason (the first one is kept). */
void program_invalid(struct program_variant *var, const char *fmt, ...)
	__attribute__((format(gnu_printf, 2, 3)));

/* Adds the note TEXT to VAR's notes. */
int program_note(struct program_variant *var, const char *text);

/* ---- the program's own DLLs and Wine's builtins (program_modules.c) ---- */

/* The name Wine's load order knows the DLL at the manifest PATH by, as
 * WINEDLLOVERRIDES takes it: its file name without a ".dll" suffix (any
 * case; Wine strips only that one), into OUT (JOB_SPEC_MAX_PROGRAM_PATH + 1
 * bytes). LL_EINVAL with a message, OUT untouched, when the name is empty
 * or has a character outside ASCII letters, digits and ._-+~$#@!&()[]{}'^%
 * (Wine's parser splits at ';', ',' and '=', and reads '*', '/', '\'). */
int program_dll_override_name(const char *path, char *out);

/* WINEDLLOVERRIDES entries "NAME=n,b;NAME=n,b" (the program's file, then
 * Wine's builtin) for every DLL of FILES (those with IMAGE_FILE_DLL), each
 * name once in any case, in manifest order, into OUT (at most CAP bytes
 * with the NUL). *RET_RECORD (the caller's) gets {"names": [...],
 * "left_out": [{"file", "reason"}]}: a DLL whose name cannot be carried,
 * or past CAP, is left out, and the module check below still catches a
 * builtin loaded in its place. */
int program_dll_overrides(const struct program_file *files, size_t count, size_t cap, char *out,
			  cJSON **ret_record);

/* Where a program runs, as program_module_judge() reads a module's path. */
struct program_module_where {
	const char *program_dir;        /* the variant's folder as the program sees it */
	const char *const *system_dirs; /* where the loader finds system DLLs (Wine's builtins), likewise */
	size_t system_dir_count;
	bool wine; /* Wine's loader */
};

struct program_module_origin {
	long file;                /* the manifest file it is, loaded from the program's folder; or -1 */
	bool from_program_folder; /* file >= 0 */
	long manifest_file;       /* or: the manifest DLL whose file name it has, loaded from elsewhere */
	char reason[1024];        /* then why that makes the variant invalid */
};

/* Where the module at PATH (as the debug probe saw it: "\??\Z:\...",
 * "\\?\C:\..." or "C:\...", any case, '\' or '/') came from, into
 * *RET: the program's own file when PATH is WHERE->program_dir joined with
 * a manifest path; else, when its file name is a manifest DLL's, another
 * file the loader took instead (manifest_file and a reason naming the
 * path, "a Wine builtin" when it is in a system folder under Wine); else
 * a module the program did not ship (system DLLs: fine). */
void program_module_judge(const struct program_file *files, size_t count,
			  const struct program_module_where *where, const char *path,
			  struct program_module_origin *ret);

/* VAR's "loader" (program_loader.c): the loader's work for the program's
 * exe and its own DLLs in VAR's folder (family/pe/pe_loader_work.h), as
 * PROBE (the debug probe's report; NULL when it failed) saw the modules
 * placed, the files' prediction beside it ("static"); under Wine
 * "cannot_show" says what Wine's loader hides. A file the toolkit cannot
 * read gives {"source", "not_counted": why}. Only LL_ENOMEM is an error. */
int program_loader_variant(const struct program_context *ctx, struct program_variant *var,
			   const cJSON *probe);

/* ---- measure (program_measure.c) ---- */

/* What the driver times: every valid variant and the floor. */
int program_timing(struct program_context *ctx, struct family_timing *ret);

#endif
