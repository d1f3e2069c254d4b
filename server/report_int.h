/*
 * report_int.h - what the report's files share: summary.c (one result's
 * summary), report_job.c (a job's report), report_compare.c (two jobs
 * compared). Only they include it.
 */
#ifndef LOADLAB_SERVER_REPORT_INT_H
#define LOADLAB_SERVER_REPORT_INT_H

#include "report.h"

#include "loadlab/stats.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nesting allowed when a stored result or summary is parsed. */
#define REPORT_MAX_BODY_DEPTH 64

static inline const cJSON *get(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static inline double number(const cJSON *obj, const char *key, double fallback)
{
	const cJSON *item = get(obj, key);
	return cJSON_IsNumber(item) ? item->valuedouble : fallback;
}

static inline const char *string(const cJSON *obj, const char *key)
{
	const cJSON *item = get(obj, key);
	return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* Rounds for output: figures in microseconds to 0.1, percents to 0.01. */
static inline double round_to(double v, double step)
{
	return round(v / step) * step;
}

/* The samples of ARRAY (numbers >= 0) into a new array; LL_EINVAL when
 * ARRAY is not a non-empty list of finite non-negative numbers. */
int report_samples_of(const cJSON *array, double **ret, size_t *ret_n);

/* A seed for the bootstrap from TEXT (FNV-1a), so that a report is the
 * same every time it is made. */
uint64_t report_seed_of(const char *text);

/* stats_bootstrap_ci() and stats_bootstrap_ratio_ci() (loadlab/stats.h)
 * for STATS_MEDIAN and STATS_MIN, with the same draws and the same
 * answers, faster (report_stats.c). X and Y are valid samples (as
 * report_samples_of() gives them). KEEP: SEED will come again with the
 * same sizes (a seed from a variant's name), so its draws are kept for the
 * next call (bounded; the draws do not depend on the samples). */
int report_bootstrap_ci(const double *x, size_t n, enum stats_statistic statistic, double level,
			int resamples, uint64_t seed, bool keep, double *ret_low, double *ret_high);
int report_bootstrap_ratio_ci(const double *x, size_t nx, const double *y, size_t ny,
			      enum stats_statistic statistic, double level, int resamples,
			      uint64_t seed, bool keep, double *ret_low, double *ret_high);

/* Decides significance of candidate Y against baseline X (see report.h);
 * adds change_pct, min_change_pct, ratio, its CI, p_value and significant
 * to OUT. KEEP as for report_bootstrap_ratio_ci(). */
int report_compare_samples(const double *x, size_t nx, const double *y, size_t ny, int resamples,
			   uint64_t seed, bool keep, cJSON *out, double *ret_change, bool *ret_significant);

/* The variant named NAME in the array VARIANTS of a result, or NULL. */
const cJSON *report_find_variant(const cJSON *variants, const char *name);

/* "os=win10 disk=ssd" in the cell's key order; "any" for an empty cell. */
void report_cell_key(const cJSON *cell, char *out, size_t size);

#endif
