/*
 * family_util.h - helpers the pipeline driver and every family's stages
 * share: paths, whole small files, progress, phases, and the timer's
 * figures in a result. They call no stage and no driver.
 */
#ifndef LOADLAB_AGENT_FAMILY_UTIL_H
#define LOADLAB_AGENT_FAMILY_UTIL_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "family/family.h"

/* Joins A "/" B into OUT (PLAT_MAX_PATH + 1 bytes); LL_ETOOBIG when long. */
int family_path(char *out, const char *a, const char *b);

/* Reads a whole (small) file into a malloc'd, NUL-terminated string of
 * at most LIMIT bytes (LL_ETOOBIG past it). The caller frees *RET_TEXT.
 * plat_read_file(), under the name the families know. */
int family_read_file(const char *path, size_t limit, char **ret_text, size_t *ret_len);

/* Writes TEXT (LEN bytes) to PATH, replacing it (plat_write_file()). */
int family_write_file(const char *path, const char *text, size_t len);

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
 * "warm_reruns", "cold": method}, each where measured. */
int family_add_measurement(cJSON *result, const struct family_measured *measured);

#endif
