/*
 * job_spec.h - what a job may ask for, checked the same way on the server
 * (at submission) and on the agent (before it builds anything).
 *
 * Bounds (docs/rest-bodies.md, "POST /api/v1/jobs"):
 *   generator.dlls 1..256, exports 1..4096, dlls*exports <= 100000,
 *   globals_per_function 0..64, main "reference" | "call" | "startup"
 *   (startup: pe only); pe only, each kept in the normalized spec only
 *   when given: function_bytes 0..65536 with dlls*exports*function_bytes
 *   <= 256 MiB, startup_share 0.001..1, file_alignment 512 | 1024 |
 *   2048 | 4096, crt and strip_debug true | false (docs/pe-pipeline.md);
 *   variants 1..32, distinct names;
 *   warm.runs 1..1000 or "auto", warm.warmup 0..100, cold.runs 1..200,
 *   warm.rounds and cold.rounds 1..20 (default 1) and no more than the
 *   runs; with warm.runs "auto" (only then): warm.max_runs 1..1000
 *   (default 200, no fewer than the rounds) and warm.precision
 *   0.001..0.5 (default 0.02); warm.precision_pct 0.1..50 (issue 40:
 *   stop once every variant's paired interval against the first variant
 *   is within +-precision_pct %) implies runs "auto" (a number of runs or
 *   "precision" beside it is refused), with warm.max_seconds 1..3600
 *   (default 300; only with precision_pct) and max_runs as above;
 *   a pe or elf variant's delay_us 0..100000 (default 0, kept only when
 *   not 0; an elf variant then is {"name", "preset", "delay_us"});
 *   calibration (optional, pe and elf): {"delay_us": X}, X 1..50000, and
 *   the job then has variants with delay_us 0, X and 2X (kept only when
 *   given; the daemon records the agent's calibration from its results);
 *   churn.processes 1..5000, churn.dll_sets 1..8;
 *   matrix: at most 8 keys, 16 values per key, 256 cells; priority -100..100;
 *   series (optional): 1..128 printable ASCII characters without spaces
 *   ("ci/main"); revision (optional): 1..128 characters, no control
 *   characters. Both are kept in the normalized spec only when given.
 */
#ifndef LOADLAB_JOB_SPEC_H
#define LOADLAB_JOB_SPEC_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#define JOB_SPEC_MAX_DLLS 256
#define JOB_SPEC_MAX_EXPORTS 4096
#define JOB_SPEC_MAX_TOTAL_EXPORTS 100000
#define JOB_SPEC_MAX_GLOBALS 64
#define JOB_SPEC_MAX_FUNCTION_BYTES 65536
#define JOB_SPEC_MAX_CODE_BYTES (256ll * 1024 * 1024)
#define JOB_SPEC_MIN_STARTUP_SHARE 0.001
#define JOB_SPEC_MAX_VARIANTS 32
#define JOB_SPEC_MAX_WARM_RUNS 1000
#define JOB_SPEC_MAX_WARMUP 100
#define JOB_SPEC_MAX_COLD_RUNS 200
#define JOB_SPEC_MAX_ROUNDS 20
/* measure.warm/cold.round_gap_ms: the pause between two rounds */
#define JOB_SPEC_MIN_ROUND_GAP_MS 100
#define JOB_SPEC_MAX_ROUND_GAP_MS 10000
#define JOB_SPEC_DEFAULT_ROUND_GAP_MS 500
/* measure.noise.max_retakes: most retakes of a run flagged as noisy, per
 * program and measurement (the agent's MEASURE_NOISE_MAX_RETAKES) */
#define JOB_SPEC_MAX_NOISE_RETAKES 10
#define JOB_SPEC_RUNS_AUTO (-1) /* normalize's code for warm.runs "auto" */
#define JOB_SPEC_MAX_AUTO_RUNS 1000
#define JOB_SPEC_DEFAULT_AUTO_RUNS 200
#define JOB_SPEC_MIN_PRECISION 0.001
#define JOB_SPEC_MAX_PRECISION 0.5
#define JOB_SPEC_DEFAULT_PRECISION 0.02
#define JOB_SPEC_MIN_PRECISION_PCT 0.1
#define JOB_SPEC_MAX_PRECISION_PCT 50.0
#define JOB_SPEC_MAX_SECONDS 3600
#define JOB_SPEC_DEFAULT_MAX_SECONDS 300
#define JOB_SPEC_MAX_DELAY_US 100000
#define JOB_SPEC_MAX_CALIBRATION_DELAY_US (JOB_SPEC_MAX_DELAY_US / 2)
#define JOB_SPEC_MAX_CHURN_PROCESSES 5000
#define JOB_SPEC_MAX_MATRIX_KEYS 8
#define JOB_SPEC_MAX_MATRIX_VALUES 16
#define JOB_SPEC_MAX_CELLS 256
#define JOB_SPEC_MAX_NAME 128
#define JOB_SPEC_MAX_SERIES 128
#define JOB_SPEC_MAX_REVISION 128

/* The program family (see job_spec_normalize_program()). */
#define JOB_SPEC_MAX_PROGRAM_FILES 4096
#define JOB_SPEC_MAX_PROGRAM_PATH 260
#define JOB_SPEC_MAX_PROGRAM_ARGS 64
#define JOB_SPEC_MAX_PROGRAM_ARGS_BYTES 8192
#define JOB_SPEC_MAX_PROGRAM_TIMEOUT 3600
/* A two-build (A/B) program job: "program": {"builds": [...]}. */
#define JOB_SPEC_MIN_PROGRAM_BUILDS 2
#define JOB_SPEC_MAX_PROGRAM_BUILDS 4
#define JOB_SPEC_MAX_BUILD_LABEL 32
/* The largest job body (POST /api/v1/jobs) the daemon reads: room for
 * JOB_SPEC_MAX_PROGRAM_FILES files whose paths average up to 170 bytes
 * (each entry is its path and 75 bytes of "sha256:HEX", quotes and
 * separators). The CLI checks it before it uploads anything. */
#define JOB_SPEC_MAX_BODY (1024 * 1024)

/* What an elf preset builds (DESIGN.md, "Experiments"; the agent's elf
 * family, docs/elf-pipeline.md). An elf variant is named by its preset
 * only: the normalized spec holds {"name"}, and the agent reads the knobs
 * here. */
struct job_spec_elf_knobs {
	const char *name; /* "default", "now", "relr", "hidden", "symbolic",
			       * "symbolic+relr", "reorder", "sysv-hash" */
	bool bind_now;    /* -z now: every symbol bound at load, none lazily */
	bool relr;        /* -z pack-relative-relocs: RELATIVE relocations as DT_RELR */
	bool hidden;      /* -fvisibility=hidden, only the functions exported */
	bool symbolic;    /* -Bsymbolic: a library's own symbols bound inside it */
	bool trace_order; /* functions in startup-trace order, first in .text */
	bool sysv_hash;   /* --hash-style=sysv: .hash, no .gnu.hash */
};

/* The knobs of the elf preset NAME into *RET; LL_EINVAL (with a message)
 * when there is no such preset. */
int job_spec_elf_preset(const char *name, struct job_spec_elf_knobs *ret);

/* Checks a submitted job (a parsed JSON object) against every rule and
 * bound, and returns its normalized form: all defaults present, every
 * variant expanded to its knobs ({"name","bases","bind","imports","order"}
 * for pe, {"name"} for elf), "matrix" always present as {"cells": {...}}
 * or {"each_agent": {...}}. LL_EINVAL / LL_ERANGE with a message naming
 * the field. The caller deletes *RET_NORMALIZED. */
int job_spec_normalize(const cJSON *submitted, cJSON **ret_normalized);

/* job_spec_expand_cells() and the three matches below it: a normalized
 * spec's cells and the agents they select (job_spec_cells.c). */

/* The cells of a normalized spec's "cells" matrix: an array of objects
 * {KEY: VALUE}, the cartesian product in key order (one empty object for
 * an empty matrix). For an "each_agent" matrix, LL_EINVAL. */
int job_spec_expand_cells(const cJSON *normalized, cJSON **ret_cells);

/* True when an agent with FACTS and LABELS (objects) may run a task of
 * CELL ({KEY: VALUE}): for every KEY, the label or the fact of that name
 * equals VALUE. A fact that is an array matches when one element does;
 * numbers compare by their shortest decimal text, booleans as
 * "true"/"false". */
bool job_spec_cell_matches(const cJSON *cell, const cJSON *facts, const cJSON *labels);

/* True when an agent matches an each_agent SELECTOR ({KEY: [VALUE...]}):
 * for every KEY, one of the VALUEs matches as in job_spec_cell_matches. */
bool job_spec_selector_matches(const cJSON *selector, const cJSON *facts, const cJSON *labels);

/* job_spec_selector_matches() for the agent named NAME (may be NULL):
 * besides a label or fact, the key "agent" matches the agent's name, so
 * that {"each_agent": {"agent": ["lab-1"]}} pins a job to one agent. */
bool job_spec_agent_selected(const cJSON *selector, const char *name, const cJSON *facts,
			     const cJSON *labels);

/* The name of the variant of a calibration job (normalized spec with a
 * "calibration" section) that waits MULTIPLE (0, 1 or 2) times its
 * delay_us (borrowed), or NULL when NORMALIZED is no calibration job. */
const char *job_spec_calibration_variant(const cJSON *normalized, int multiple);

/* True when a variant of the normalized spec NORMALIZED has a delay_us
 * above 0: its generator then writes the waiting entry point (the
 * known-effect self-test, `loadlab-agent calibrate`). */
bool job_spec_has_delay(const cJSON *normalized);

/* True when NAME is a valid series name (see the bounds above). */
bool job_spec_series_valid(const char *name);

/* True when NAME is a valid matrix, fact or label key:
 * ^[a-z][a-z0-9_]{0,31}$. */
bool job_spec_key_valid(const char *name);

/* An agent's name (its enrollment, POST /api/v1/agents/enroll; a
 * bisection's "agent"): 1 to JOB_SPEC_MAX_AGENT_NAME bytes, no control
 * character (job_spec_text_valid()). 0 when NAME is one; else LL_EINVAL
 * with a message naming FIELD. */
#define JOB_SPEC_MAX_AGENT_NAME 64
int job_spec_agent_name_check(const char *name, const char *field);

/* True when S holds no control character (below 0x20, or 0x7f): the rule
 * of a job's names, revisions and matrix values. */
bool job_spec_text_valid(const char *s);

/* --- the matrix (job_spec_matrix.c) --- */

/* Checks the submitted MATRIX (NULL: none) and adds its normalized copy
 * to OUT: {"cells": {KEY: [VALUE...]}} or {"each_agent": {...}}, at most
 * JOB_SPEC_MAX_MATRIX_KEYS keys, JOB_SPEC_MAX_MATRIX_VALUES values a key
 * and JOB_SPEC_MAX_CELLS cells. LL_EINVAL / LL_ERANGE with a message. */
int job_spec_normalize_matrix(const cJSON *matrix, cJSON *out);

/* An ELF program runs natively on Linux only (docs/program-elf.md, "Which
 * agents run it"): gives the normalized MATRIX "os": ["linux"] when it
 * names no "os"; LL_ERANGE when that would be one key too many. */
int job_spec_matrix_linux_only(cJSON *matrix);

/* --- the program family (job_spec_program.c) ---
 *
 * A job {"family": "program", "program": {...}, "variants": [...], ...}
 * has no "generator"; its "program" section, normalized:
 *   {"files": {PATH: "sha256:HEX", ...},  1..4096 files, order kept
 *    "exe": PATH,                         one of files, ends in .exe (any case)
 *    "args": [STRING...],                 0..64, 8192 bytes in all, no control characters
 *    "until": "exit" | "input-idle",      default "exit" ("idle" instead of
 *                                         "input-idle" for an ELF program)
 *    "timeout_s": N,                      1..3600, default 60
 *    "format": "elf"}                     given "pe" (the default) or "elf"; kept
 *                                         only for "elf", whose exe needs no .exe
 * or, for an A/B job of several builds of the program measured in one
 * task (docs/program-family.md, "Two builds in one job"), instead of
 * "files" and "exe":
 *    "builds": [{"label", "files", "exe"}, ...]  2..4 builds, labels
 *                                     ^[a-z][a-z0-9_-]{0,31}$ and distinct,
 *                                     each build's files and exe as above
 * (nested in "program": the job document's own "builds" are its shared
 * build tasks, docs/builds.md). The first build is the base.
 * Its variants are preset names only, normalized to
 *   {"name", "bases": "as-built"|"unique", "bind": bool, "aslr": "as-built"|"off"}:
 *   as-built {as-built,false,as-built}, rebase {unique,false,off},
 *   bind {unique,true,off}, aslr-off {as-built,false,off}.
 * An ELF program's variants (job_spec_program_elf_variant()) are
 *   {"name", "bind_now": bool, "pagein": bool}: as-built {false,false},
 *   bind-now {true,false}, pagein {false,true} (docs/program-elf.md).
 * measure.churn is refused for it. */

/* 0 when PATH may name a program file, else LL_EINVAL with a message
 * naming PATH and the rule, and *RET_RULE (may be NULL) the rule alone
 * (static text). A path is '/'-separated and relative: not empty, at most
 * JOB_SPEC_MAX_PROGRAM_PATH bytes, no leading '/' or '\\' (so no UNC), no
 * backslash, no ':' (drive letters, streams), no control character or
 * any of < > " | ? *, no empty, "." or ".." component, no component
 * ending in a dot or space, no Windows device name as a component (CON,
 * PRN, AUX, NUL, COM0-9, LPT0-9, CONIN$, CONOUT$, CLOCK$; any case, with
 * or without an extension). Case collisions need the whole manifest: see
 * job_spec_normalize_program(). */
int job_spec_program_path_check(const char *path, const char **ret_rule);

/* True when REF is "sha256:" and 64 lowercase hex digits; the digits go
 * to RET_HEX (may be NULL). */
bool job_spec_blob_ref_valid(const char *ref, char ret_hex[65]);

/* Checks the "program" section PROGRAM and adds its normalized members to
 * the object OUT (see above). Beyond each path's rules, two paths may not
 * differ only in ASCII case and no path may also be a folder of another
 * ("bin" and "bin/app.exe"). LL_EINVAL / LL_ERANGE with a message naming
 * the path or field; OUT may then hold part of the section. */
int job_spec_normalize_program(const cJSON *program, cJSON *out);

/* The build INDEX of the normalized program section PROGRAM: the object
 * holding its "files" and "exe" (PROGRAM itself for a one-build job, whose
 * only INDEX is 0, with *RET_LABEL NULL), or NULL past the last build.
 * *RET_LABEL (may be NULL) is borrowed from PROGRAM. */
const cJSON *job_spec_program_build(const cJSON *program, int index, const char **ret_label);

/* Appends the normalized program variant ITEM to the array OUT: ITEM is a
 * preset name, or an already normalized variant whose knobs are exactly
 * its preset's (so that a normalized spec normalizes to itself). LL_EINVAL
 * for anything else. */
int job_spec_program_variant(const cJSON *item, cJSON *out);

/* True when the (normalized) program section PROGRAM is an ELF
 * program's ("format": "elf"). */
bool job_spec_program_is_elf(const cJSON *program);

/* As job_spec_program_variant(), for an ELF program's presets (above). */
int job_spec_program_elf_variant(const cJSON *item, cJSON *out);

#endif
