/*
 * report_between.h - compare's intervals across jobs (issue 23): what
 * varies from one job of a cell to the next, beyond what one job's rounds
 * show, estimated from earlier jobs that measured the same thing, and
 * added to a row's interval (docs/statistics.md, "Intervals across jobs").
 *
 * History: jobs of the compared jobs' family, done, created before the
 * later of the two (so a comparison gives the same answer when later jobs
 * arrive) and other than the two, of the same normalized spec as one of
 * them (report_spec_digest(): the spec without name, series, revision and
 * priority) or of the series of one of them; the REPORT_HISTORY_JOBS
 * newest, among the REPORT_HISTORY_SCAN newest jobs of the family, while
 * their tasks fit in REPORT_HISTORY_TASKS. Each
 * history job is a group of its own kind (a series, or a spec) with its
 * own mean, so two different specs' difference is no spread; a series is
 * one group across its revisions, so a series that spans real changes
 * overstates the spread (the conservative direction).
 *
 * A row's between-job variance tau^2 is the DerSimonian-Laird estimate
 * (stats_between_variance()) from the history jobs that have the row's
 * variant, in a task of the row's cell key on an agent with the same
 * facts: each job's figure of the row's metric (the log of its median,
 * minimum, median over floor or floor ratio, paired by pass when it
 * pairs) and the variance its own 95 % bootstrap interval implies
 * (REPORT_COMPARE_RESAMPLES resamples, by rounds then passes from
 * REPORT_MIN_ROUNDS rounds). It needs REPORT_MIN_HISTORY such jobs in one
 * group. The row's interval of its metric, on the log scale, then has each
 * half-width h widened to sqrt(h^2 + z^2 2 tau^2): each of the two
 * compared jobs carries its own shift.
 */
#ifndef LOADLAB_SERVER_REPORT_BETWEEN_H
#define LOADLAB_SERVER_REPORT_BETWEEN_H

#include "report_int.h"
#include "report_row.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define REPORT_HISTORY_JOBS 20
#define REPORT_HISTORY_SCAN 500
/* Tasks the history may hold in all: the newest jobs are taken while they
 * fit (compare data of a task is some 25 KB: at most about 100 MB, and
 * 20 bootstraps a row). A job of more tasks than this alone is compared
 * within-job. */
#define REPORT_HISTORY_TASKS 4096
#define REPORT_MIN_HISTORY 3

struct report_between;

/* A digest of SPEC (a normalized job spec) without "name", "series",
 * "revision" and "priority": jobs that measure the same thing share it. */
uint64_t report_spec_digest(const cJSON *spec);

/* The history of the jobs BASE_JOB and CAND_JOB (store_job_get() bodies)
 * into a new *RET (read-only once made: rows on several threads read it).
 * No history is no error: *RET then has no jobs. LL_ENOMEM, the store's
 * errors. */
int report_between_load(struct store *store, const cJSON *base_job, const cJSON *cand_job,
			struct report_between **ret);
void report_between_free(struct report_between *b);

/* The history jobs found (each may lack a row's cell or variant). */
size_t report_between_jobs(const struct report_between *b);

/* What a row judged, for report_between_judge(): its metric's change (%),
 * the ratio's within-job 95 % interval LOW .. HIGH, and its rule. */
struct report_judged {
	enum report_metric metric; /* the metric the row is judged by (never AUTO) */
	double change, low, high;
	bool per_sample; /* the median without rounds: the test's P decides too */
	double p;
	bool significant; /* as judged within-job */
};

/*
 * Judges the row of VARIANT in the cell of BASE's key KEY (FACTS: the
 * baseline task's compare data) with the between-job term of B (NULL: no
 * history) and writes to ROW "metric", "interval_scope" ("within-job" or
 * "within-and-between-jobs"), "interval_low", "interval_high" (the
 * interval the verdict used) and, when history jobs had the row, 
 * "between_jobs": {"jobs": k, "sd_pct": 100 tau (with tau^2)}. Returns
 * whether the row is significant: J's own verdict when tau^2 could not be
 * estimated or is 0, else J's rule on the widened interval (report_judge.h's
 * rules). *RET_BETWEEN: whether the between-job term was used; *RET_LOW,
 * *RET_HIGH: the interval used. Called by report_judge() only.
 */
bool report_between_judge(const struct report_between *b, const char *variant, const char *key,
			  const struct report_compare_data *facts, const struct report_judged *j,
			  struct report_row *row, bool *ret_between, double *ret_low, double *ret_high);

#endif
