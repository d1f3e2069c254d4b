/*
 * report_int.h - what the report's files share: summary.c (one result's
 * summary), report_job.c (a job's report), report_compare.c (two jobs
 * compared), and the files below them (report_result.c, report_stats.c,
 * report_compare_data.c). Only the files of reports/ include it.
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

/* The bytes a shared build's cells ran (report_shipped.c, docs/builds.md):
 *
 * adds to the variant's summary S, from the result's variant V, "digests"
 * ({file: sha256}) and "local_files" (the files a local transform wrote). */
void report_shipped_summary(const cJSON *v, cJSON *s);

/* The report's "shipped" (schemas/report.json): per variant of NAMES,
 * whether every cell of TASKS (report_job.c's, with summaries) ran
 * identical files, and which files differ where; NULL when no result
 * names a build task (no shared build). */
cJSON *report_shipped(const cJSON *tasks, const cJSON *names);

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

/* Rounds for output: figures in microseconds to 0.1, percents to 0.01; a
 * result of -0 is 0 (so "0" is printed, not "-0"). */
static inline double round_to(double v, double step)
{
	return round(v / step) * step + 0.0;
}

/* The readers of a stored result (report_result.c, below summary.c,
 * report_job.c and report_compare_data.c, which all read results):
 *
 * the samples of ARRAY (numbers >= 0) into a new array; LL_EINVAL when
 * ARRAY is not a non-empty list of finite non-negative numbers. */
int report_samples_of(const cJSON *array, double **ret, size_t *ret_n);

/*
 * A sample sorted once and shared by every statistic of it
 * (report_stats.c): its summary, the Mann-Whitney test and the bootstraps
 * read the same sorted copy, and its buffers are reused by the next sample
 * set into it. Zero-initialize, then report_sample_set(); release with
 * report_sample_release().
 */
struct report_sample {
	const double *x; /* borrowed: the samples in their original order */
	uint32_t n, capacity;
	double *sorted, *dev;
	uint32_t *order;           /* order[k]: original position of sorted[k] */
	uint32_t *count, *scratch; /* room to draw a resample's counts */
	uint32_t *batch;           /* room for a bootstrap's draws at once */
	size_t batch_room;
	uint8_t *table; /* room for a bootstrap's table of draws (report_stats.c) */
	size_t table_room;
	uint64_t table_seed; /* what TABLE holds, when TABLE_RESAMPLES is not 0 */
	uint32_t table_n1, table_n2;
	int table_resamples;
};

/* Sorts X[0..N) (valid samples, as report_samples_of() gives them; X is
 * borrowed until the next set or the release) into S, growing S's
 * buffers when needed; LL_EINVAL for N out of 1..STATS_MAX_SAMPLES,
 * LL_ENOMEM (S then holds no sample). */
int report_sample_set(struct report_sample *s, const double *x, size_t n);
void report_sample_release(struct report_sample *s);

/* stats_summarize() of S's samples, the same figures bit for bit. */
void report_sample_summary(struct report_sample *s, struct stats_summary *ret);

/* stats_outliers()'s count for S whose summary is SUMMARY. */
size_t report_sample_outliers(const struct report_sample *s, const struct stats_summary *summary,
			      double threshold);

/* stats_mann_whitney(X, Y) on two sorted samples, merged instead of
 * sorted again: the same U and p bit for bit. */
void report_mann_whitney(const struct report_sample *x, const struct report_sample *y, double *ret_u,
			 double *ret_p);

/* stats_bootstrap_ci() and stats_bootstrap_ratio_ci() (loadlab/stats.h)
 * for STATS_MEDIAN and STATS_MIN, with the same draws and the same
 * answers, faster. KEEP: SEED will come again with the same sizes (a seed
 * from a variant's name), so its draws are kept for the next call
 * (bounded; the draws do not depend on the samples). The sample's count
 * buffers are used as scratch. */
int report_sample_bootstrap_ci(struct report_sample *s, enum stats_statistic statistic, double level,
			       int resamples, uint64_t seed, bool keep, double *ret_low, double *ret_high);
int report_sample_bootstrap_ratio_ci(struct report_sample *x, struct report_sample *y,
				     enum stats_statistic statistic, double level, int resamples,
				     uint64_t seed, bool keep, double *ret_low, double *ret_high);

/* Most resamples bootstrapped by ranks (report_stats.c), and so most
 * resamples whose ranks compare's cached data holds. */
#define REPORT_MAX_RESAMPLES_RANKED 1024

/* For compare's cached data (report_compare_data()): the rank in S's
 * sorted sample of STATISTIC (median or minimum) of each of RESAMPLES
 * resamples that report_sample_bootstrap_ratio_ci() draws for SEED with
 * a baseline and a candidate both of S's size, S being the candidate
 * (AS_CANDIDATE) or the baseline, into RET_LO[0..RESAMPLES) and RET_HI
 * (report_ranked_value()); KEEP as there. LL_EINVAL when S has more than
 * 255 samples or RESAMPLES is over REPORT_MAX_RESAMPLES_RANKED: such are
 * not cached. */
int report_sample_ratio_ranks(struct report_sample *s, enum stats_statistic statistic, int resamples,
			      uint64_t seed, bool keep, bool as_candidate, uint8_t *ret_lo, uint8_t *ret_hi);

/* The resample's STATISTIC whose ranks in the SORTED sample of N are LO
 * and HI (report_sample_ratio_ranks()): bit for bit what the bootstrap
 * computes. */
double report_ranked_value(const double *sorted, uint32_t n, enum stats_statistic statistic, uint8_t lo,
			   uint8_t hi);

/* report_sample_bootstrap_ratio_ci() of the baseline X (sorted, NX
 * samples) and the candidate Y from their ranks (as baseline and as
 * candidate, report_sample_ratio_ranks() of the same seed; RESAMPLES at
 * most REPORT_MAX_RESAMPLES_RANKED): the same interval bit for bit. */
int report_ranked_ratio_ci(const double *x, uint32_t nx, const uint8_t *x_lo, const uint8_t *x_hi,
			   const double *y, uint32_t ny, const uint8_t *y_lo, const uint8_t *y_hi,
			   enum stats_statistic statistic, double level, int resamples, double *ret_low,
			   double *ret_high);

/* A sorted sample as compare's data holds it: SORTED[0..N) and where each
 * value was measured (ORDER[k]: the measured position of SORTED[k]). */
struct report_sorted {
	const double *sorted;
	const uint32_t *order;
	uint32_t n;
};

/* The sorted S as a struct report_sorted (borrowed from S). */
static inline struct report_sorted report_sorted_of(const struct report_sample *s)
{
	return (struct report_sorted){s->sorted, s->order, s->n};
}

/* Most sides of report_median_ranks(). */
#define REPORT_MAX_SIDES 4

/* The ranks (report_ranked_value()) of the median of every resample of
 * each of the COUNT (1..REPORT_MAX_SIDES) SIDES when each of RESAMPLES
 * resamples draws a resample of every side in turn from the stream SEED,
 * as stats_bootstrap_contrast_ci() draws samples without rounds (sides X,
 * X's floor, Y, Y's floor), into RET_LO[i][0..RESAMPLES) and RET_HI[i];
 * ROOM's table and batch buffers are used (and its kept table forgotten).
 * LL_EINVAL when a side has more than 255 samples or RESAMPLES is over
 * REPORT_MAX_RESAMPLES_RANKED; LL_ENOMEM. */
int report_median_ranks(const struct report_sorted *sides, int count, int resamples, uint64_t seed,
			struct report_sample *room, uint8_t *const *ret_lo, uint8_t *const *ret_hi);

/* stats_bootstrap_contrast_ci() of the median over the floor of X (X's
 * floor XF) and Y (YF), none with rounds, from the ranks of their
 * medians (report_median_ranks() of the four, in that order): the same
 * interval bit for bit; LL_EINVAL as there. DIVIDE: instead
 * stats_bootstrap_floor_ratio_ci() of the same draws (each side divided
 * by its floor), bit for bit. */
int report_ranked_contrast_ci(const struct report_sorted *x, const struct report_sorted *xf,
			      const struct report_sorted *y, const struct report_sorted *yf,
			      const uint8_t *const *lo, const uint8_t *const *hi, bool divide, double level,
			      int resamples, double *ret_low, double *ret_high);

/* The same on arrays (each call sorts them): X and Y are valid samples. */
int report_bootstrap_ci(const double *x, size_t n, enum stats_statistic statistic, double level,
			int resamples, uint64_t seed, bool keep, double *ret_low, double *ret_high);
int report_bootstrap_ratio_ci(const double *x, size_t nx, const double *y, size_t ny,
			      enum stats_statistic statistic, double level, int resamples, uint64_t seed,
			      bool keep, double *ret_low, double *ret_high);

/* Decides significance of candidate Y against baseline X (see report.h),
 * whose summaries are SX and SY (report_sample_summary()); adds
 * change_pct, min_change_pct, ratio, its CI, p_value and significant to
 * OUT. KEEP as for report_sample_bootstrap_ratio_ci(). */
int report_compare_samples(struct report_sample *x, const struct stats_summary *sx, struct report_sample *y,
			   const struct stats_summary *sy, int resamples, uint64_t seed, bool keep,
			   cJSON *out, double *ret_change, bool *ret_significant);

/* The facts that must agree for two results to be compared. */
#define REPORT_COMPARED_FACTS 7
extern const char *const report_compared_facts[REPORT_COMPARED_FACTS];

/* The run counters' figures compare judges (report_compare_counters.h):
 * the order of the metrics REPORT_METRIC_CPU .. REPORT_METRIC_INSTRUCTIONS. */
enum report_counter {
	REPORT_COUNTER_CPU,
	REPORT_COUNTER_FAULTS,
	REPORT_COUNTER_INSTRUCTIONS,
	REPORT_COUNTERS
};

/* What compare needs of one result (report_compare_data.c), read from its
 * cached data: pointers into that data, valid while it is. */
struct report_compare_variant {
	const char *name; /* not terminated */
	uint16_t name_len;
	bool invalid;         /* "valid": false */
	uint32_t n;           /* warm samples; 0 with VALUES NULL: none valid */
	const double *values; /* RANKED: sorted, else as measured */
	bool ranked;          /* ORDER and RANKS are there */
	const uint8_t *order; /* order[k]: measured position of values[k] */
	/* the ranks of the side's role (report_compare_data_read()), each
	 * R = REPORT_COMPARE_RESAMPLES bytes: */
	const uint8_t *ranks;        /* 3 x R: the median's lo, hi, the minimum */
	const uint8_t *floor_ranks;  /* or NULL; 4 x R: the variant's lo, hi, the floor's lo, hi */
	const double *paired;        /* N per-pass ratios over the floor, sorted, or NULL */
	const uint8_t *paired_ranks; /* with PAIRED; 2 x R: lo, hi */
	uint32_t rounds;             /* warm.round_sizes' count; 0: none (or not valid) */
	const uint32_t *round_sizes;
	/* the run counters' figures (issue 40, report_compare_counters.h),
	 * per REPORT_COUNTER_*: N values in measured order, or NULL with
	 * why (not terminated; NULL too when the result has no counters) */
	bool has_counters; /* the result's warm has "run_counters" */
	const double *counter[REPORT_COUNTERS];
	const char *not_counted[REPORT_COUNTERS];
	uint16_t not_counted_len[REPORT_COUNTERS];
};

struct report_compare_data {
	const char *facts[REPORT_COMPARED_FACTS]; /* JSON text, not terminated; NULL: absent */
	size_t fact_len[REPORT_COMPARED_FACTS];
	struct report_compare_variant *variants;
	size_t count;
	struct report_compare_variant floor; /* the empty program; no values: none */
};

/* The data of the parsed result RESULT in the cell KEY (report_cell_key())
 * into a new buffer *RET_DATA of *RET_LEN bytes; S is room for a sample.
 * LL_ENOMEM. */
int report_compare_data(const cJSON *result, const char *key, struct report_sample *s, void **ret_data,
			size_t *ret_len);

/* The data holds a common part, then the ranks a side reads as baseline,
 * then those it reads as candidate (two sections of the same length). The
 * part a side in the role CANDIDATE reads of DATA (LEN bytes, any
 * alignment; the whole data, or a role's part made by this function's
 * answer): its first *RET_COMMON bytes (a multiple of 8), then
 * *RET_SECTION bytes at *RET_AT. LL_EFORMAT when it is not data of this
 * version. */
int report_compare_data_role(const void *data, size_t len, bool candidate, size_t *ret_common, size_t *ret_at,
			     size_t *ret_section);

/* Reads DATA (LEN bytes, 8-byte aligned: the whole data, or the common
 * part followed by one role's section) for a side in the role CANDIDATE
 * into RET; LL_EFORMAT when it is not data of this version (then computed
 * again from the result). */
int report_compare_data_read(const void *data, size_t len, bool candidate, struct report_compare_data *ret);
void report_compare_data_release(struct report_compare_data *d);

/* The variant named NAME in D, or NULL. */
const struct report_compare_variant *report_compare_data_variant(const struct report_compare_data *d,
								 const char *name);

/* V's samples in their measured order: its values, or put back in order
 * into *ROOM (a buffer reused call after call); NULL when out of memory. */
const double *report_compare_variant_measured(const struct report_compare_variant *v, double **room);

/* V's samples into S (in their measured order, so that any bootstrap of S
 * draws what it would from the result); ROOM is a buffer reused call
 * after call. LL_EINVAL when V has no valid samples. */
int report_compare_variant_sample(const struct report_compare_variant *v, struct report_sample *s,
				  double **room);

/* The figures of a comparison (report_compare_samples()) from the
 * summaries SX and SY, the Mann-Whitney P and the median ratio's interval
 * LO .. HI, added to OUT. */
void report_compare_figures(const struct stats_summary *sx, const struct stats_summary *sy, double p,
			    double lo, double hi, cJSON *out, double *ret_change, bool *ret_significant);

/* The variant named NAME in the array VARIANTS of a result, or NULL
 * (report_result.c). */
const cJSON *report_find_variant(const cJSON *variants, const char *name);

/* report_churn.c: the churn table of the job's TASKS (report_job.c's,
 * each with its "key" and "summary"): {"baseline": "none", "unit", "rows":
 * [{"cell", "dll_set", "processes", "create_us_per_process",
 * "destroy_us_per_process", "blocked_total_ms", "blocked_max_ms",
 * "blocked_total_us", "blocked_max_us" (or "blocked": why not), "runner",
 * "create_ratio", "destroy_ratio", "blocked_total_ratio"}]}, the ratios
 * against the set none of the same cell; NULL when no result has churn
 * figures. */
cJSON *report_churn_table(const cJSON *tasks);

/* One sentence per row of CHURN other than none, appended to FINDINGS. */
void report_churn_findings(const cJSON *churn, cJSON *findings);

/* report_annotate.c: adds to the job report REPORT of the job spec SPEC
 * each table's "unit" ("us" or "ms", report_text.h's rule) and, where a
 * figure was taken by a runner that cannot show it, the figure's "notes"
 * (a bound variant's cells timed under Wine, churn rows timed under Wine)
 * with a finding each. */
void report_annotate(cJSON *report, const cJSON *spec);

/* report_markdown.c: the job report REPORT (report_job()) as Markdown
 * appended to OUT: the tables the job measured, each in its unit, their
 * notes, then the findings. */
void report_markdown_job(const cJSON *report, struct buf *out);

/* TEXT in a Markdown table cell appended to OUT: pipes escaped, line
 * breaks as spaces. */
void report_md_escape(struct buf *out, const char *text);

/* report_compare_program.c: whether two jobs' specs have equal "generator"
 * sections (both without one, as program jobs are, counts as equal). */
bool report_same_generator(const cJSON *base_spec, const cJSON *cand_spec);

/* When both jobs are program jobs, adds to OUT (the comparison) "program":
 * {"same_program", "files": {"added": [{"path","sha256"}], "removed":
 * [{"path","sha256"}], "changed": [{"path","baseline_sha256",
 * "candidate_sha256"}], "unchanged": N} in path order, "settings_changed":
 * the names among exe, args, until and timeout_s that differ}. Else adds
 * nothing. LL_ENOMEM. */
int report_compare_program(const cJSON *base_job, const cJSON *cand_job, cJSON *out);

/* Adds to FILES "added": [{"path","sha256"}], "removed": [{"path","sha256"}],
 * "changed": [{"path","baseline_sha256","candidate_sha256"}] and
 * "unchanged": N, in path order, from the two manifests A (baseline) and
 * B (candidate), {PATH: "sha256:HEX"} (anything else: no files);
 * *RET_SAME: nothing added, removed or changed. The two jobs' comparison
 * (above) and an A/B job's builds (report_ab.c) use it. LL_ENOMEM. */
int report_program_files_diff(const cJSON *a_manifest, const cJSON *b_manifest, cJSON *files, bool *ret_same);

#endif
