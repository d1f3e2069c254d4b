/*
 * family_util.h - helpers the pipeline driver and every family's stages
 * share: paths, whole small files, progress, phases, and the timer's
 * figures in a result. They call no stage and no driver.
 */
#ifndef LOADLAB_AGENT_FAMILY_UTIL_H
#define LOADLAB_AGENT_FAMILY_UTIL_H

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "family/family.h"
#include "loadlab/pe.h"
#include "runner/runner.h"

/* Joins A "/" B into OUT (PLAT_MAX_PATH + 1 bytes); LL_ETOOBIG when long. */
int family_path(char *out, const char *a, const char *b);

/* Frees every string of the NULL-terminated array LIST, then LIST (may be
 * NULL). */
void family_strings_free(char **list);

/* Reads a whole (small) file into a malloc'd, NUL-terminated string of
 * at most LIMIT bytes (LL_ETOOBIG past it). The caller frees *RET_TEXT.
 * plat_read_file(), under the name the families know. */
int family_read_file(const char *path, size_t limit, char **ret_text, size_t *ret_len);

/* Writes TEXT (LEN bytes) to PATH, replacing it (plat_write_file()). */
int family_write_file(const char *path, const char *text, size_t len);

struct blob_cache; /* blobs/blob_cache.h */

/* Opens TASK's blob cache into CACHE: its blob_cache_dir, else WORK/blobs,
 * with its cap and room rule, and pins the blobs PINNED (a job, a build;
 * may be NULL) names, so that the task's own files stay while it runs
 * (blob_cache.h). blob_cache_open()'s errors; needs blob_cache_close(). */
int family_blob_cache_open(const struct pipeline_task *task, const char *work, const cJSON *pinned,
			   struct blob_cache *cache);

/* Calls TASK's progress callback; LL_ESTATE (with a message) when it says
 * the task was cancelled. */
int family_progress(const struct pipeline_task *task, const char *phase, int percent);

/* Records in RUN's phases_ms PHASE's duration since the last phase ended
 * (whole milliseconds), and restarts the clock. */
int family_phase_done(struct family_run *run, const char *phase);

/* Adds to O, as KEY ("warm" or "cold"), the figures MEASURED (a
 * measure_warm() or measure_cold() result, may be NULL) holds for the
 * program NAME, with the runs (and warm-ups) asked for and the summary's
 * min_us and median_us at hand: {"runs", "samples_us", "summary", ...}.
 * Nothing when MEASURED has no such program. */
int family_add_measured(cJSON *o, const char *key, const cJSON *measured, const char *name);

/* Adds to RESULT "measurement": {"warm": method, "warm_order",
 * "warm_reruns", "cold": method, "cold_reruns"}, each where measured. */
int family_add_measurement(cJSON *result, const struct family_measured *measured);

/* The value of OBJ's member KEY, a JSON string "0x<hex>" (as the debug
 * probes report addresses); 0 when there is no such string. */
uint64_t family_hex_value(const cJSON *obj, const char *key);

/* Adds to OBJ, as KEY, VALUE as the string "0x<hex>"; LL_ENOMEM. */
int family_add_hex(cJSON *obj, const char *key, uint64_t value);

/* Appends to the array FILES {"name": NAME, "sha256", "size"} for the
 * file at PATH (plat_file_sha256()'s errors, LL_ENOMEM). */
int family_add_file(cJSON *files, const char *name, const char *path);

/* A variant's "invalid": unless *VALID is false already (the first reason
 * stays), sets it false and formats FMT with AP into REASON (SIZE bytes). */
void family_invalid_va(bool *valid, char *reason, size_t size, const char *fmt, va_list ap)
	__attribute__((format(gnu_printf, 4, 0)));

/* Adds to RESULT "toolchain": {"kind": KIND, "target": TARGET,
 * "compiler": COMPILER} and returns it for what else the family lists;
 * NULL when out of memory. */
cJSON *family_add_toolchain(cJSON *result, const char *kind, const char *target, const char *compiler);

/* Gives the variant NAME slot N of RET->programs, a timing being filled
 * variant by variant; LL_ETOOBIG (with a message) when no slot would be
 * left after it for the floor program. */
int family_timing_slot(struct family_timing *ret, size_t n, const char *name);

/* Fills OPTIONS (zeroed first) to bind the images in IMAGE_DIR as the
 * loader finds their DLLs: IMAGE_DIR, then RUNNER's system folders, whose
 * list SEARCH (2 entries, living as long as OPTIONS) holds. */
void family_bind_options(const struct runner *runner, const char *image_dir, const char *search[2],
			 struct pe_bind_options *options);

/* The header timestamp of the module NAME (as an import names it) in
 * the file the loader would use: in EXE_DIR, then RUNNER's system folders,
 * each as NAME or in lower case. True with *RET set; false (the error
 * cleared) when no folder holds a readable PE file of that name, or NAME
 * is not a bare file name (a '/' or '\\' in it). */
bool family_loader_timestamp(const struct runner *runner, const char *exe_dir, const char *name,
			     uint32_t *ret);

#endif
