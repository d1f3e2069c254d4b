/* The run counters compare judges (report_compare_counters.c) and every
 * row's detectable change (report_judge_detectable_pct()):
 *   - the minimum detectable change against values worked out in Python
 *     from docs/statistics.md's formula, both rules, and no figure for
 *     what is not an interval;
 *   - a result's counters per run: CPU user + system, faults minor +
 *     major or the OS's total, the agent's reason for what it did not
 *     count, series that do not match the samples, a result without
 *     counters;
 *   - through compare data (LLC5) read back: a +10 % faults candidate
 *     judged per pass over the floor (x floor), unpaired when a floor
 *     lacks the counter, not counted with the agent's reason, and the
 *     counts beside the times. */
#include "check.h"
#include "reports/report_compare_counters.h"

#include "loadlab/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b, eps) (fabs((a) - (b)) <= (eps))

static void check_detectable(void)
{
	/* python3: z=1.959963984540054, z80=0.8416212335729143,
	 * se=(ln hi-ln lo)/(2z); interval rule ln1.01+z se; per sample
	 * max(z se, ln1.01); + z80 se; 100(e^x-1) */
	CHECK(NEAR(report_judge_detectable_pct(0.98, 1.02, false), 3.9294661635406403, 1e-9));
	CHECK(NEAR(report_judge_detectable_pct(0.98, 1.02, true), 2.9004615480600515, 1e-9));
	CHECK(NEAR(report_judge_detectable_pct(0.999, 1.001, true), 1.043379381866294, 1e-9));
	CHECK(NEAR(report_judge_detectable_pct(0.999, 1.001, false), 1.1444733334974755, 1e-9));
	/* a point interval: the least effect itself */
	CHECK(NEAR(report_judge_detectable_pct(1, 1, false), 1.0, 1e-9));
	/* wider sees less */
	CHECK(report_judge_detectable_pct(0.9, 1.1, false) > report_judge_detectable_pct(0.95, 1.05, false));
	CHECK(isnan(report_judge_detectable_pct(0, 1.1, false)));
	CHECK(isnan(report_judge_detectable_pct(1.1, 1.0, false)));
	CHECK(isnan(report_judge_detectable_pct(NAN, 1.0, true)));
	CHECK(isnan(report_judge_detectable_pct(0.9, INFINITY, true)));
}

/* A warm of N samples around CENTER and its counters: CPU user and
 * system, minor and major faults around FAULTS (FAULTS 0: the OS's total
 * only, as on Windows), instructions not counted. */
static cJSON *warm_of(uint64_t *state, int n, double center, double faults, bool counters)
{
	cJSON *warm = cJSON_CreateObject(), *samples = cJSON_AddArrayToObject(warm, "samples_us");
	cJSON *rc = counters ? cJSON_AddObjectToObject(warm, "run_counters") : NULL;
	cJSON *user = NULL, *sys = NULL, *minor = NULL, *major = NULL;

	if (rc) {
		cJSON_AddArrayToObject(rc, "counters");
		cJSON_AddStringToObject(cJSON_AddObjectToObject(rc, "not_counted"), "instructions",
					"no PMU in this machine");
		user = cJSON_AddArrayToObject(rc, "cpu_user_us");
		sys = cJSON_AddArrayToObject(rc, "cpu_system_us");
		minor = cJSON_AddArrayToObject(rc, "minor_faults");
		major = cJSON_AddArrayToObject(rc, "major_faults");
	}
	for (int k = 0; k < n; k++) {
		double u = (double)(stats_random_next(state) >> 11) / 9007199254740992.0;
		double t = round(center * (1 + 0.1 * u) * 10) / 10;
		cJSON_AddItemToArray(samples, cJSON_CreateNumber(t));
		if (rc) {
			cJSON_AddItemToArray(user, cJSON_CreateNumber(round(t * 6) / 10));
			cJSON_AddItemToArray(sys, cJSON_CreateNumber(round(t * 3) / 10));
			cJSON_AddItemToArray(minor, cJSON_CreateNumber(faults + k % 3));
			cJSON_AddItemToArray(major, cJSON_CreateNumber(k == 0));
		}
	}
	return warm;
}

/* A result of variant "a" and the floor; FLOOR_COUNTERS: the floor has
 * run counters too. */
static cJSON *result_of(uint64_t *state, double faults, bool counters, bool floor_counters)
{
	cJSON *result = cJSON_CreateObject(), *variants = cJSON_AddArrayToObject(result, "variants");
	cJSON *v = cJSON_CreateObject(), *floor = cJSON_AddObjectToObject(result, "floor");

	cJSON_AddObjectToObject(result, "facts");
	cJSON_AddStringToObject(v, "name", "a");
	cJSON_AddItemToObject(v, "warm", warm_of(state, 40, 1000, faults, counters));
	cJSON_AddItemToArray(variants, v);
	cJSON_AddItemToObject(floor, "warm", warm_of(state, 40, 500, 3000, floor_counters));
	return result;
}

static void check_series(void)
{
	uint64_t state = 5;
	cJSON *warm = warm_of(&state, 4, 1000, 100, true);
	cJSON *rc = cJSON_GetObjectItemCaseSensitive(warm, "run_counters");
	const cJSON *samples = cJSON_GetObjectItemCaseSensitive(warm, "samples_us");
	const char *why = "untouched";
	double *x = NULL;

	CHECK_EQ_INT(report_counter_series(warm, REPORT_COUNTER_CPU, 4, &x, &why), 0);
	for (int k = 0; x && k < 4; k++) /* user + system: 0.9 of the time, to the rounding */
		CHECK(NEAR(x[k], 0.9 * cJSON_GetArrayItem(samples, k)->valuedouble, 0.11));
	free(x);
	x = NULL;
	CHECK_EQ_INT(report_counter_series(warm, REPORT_COUNTER_FAULTS, 4, &x, &why), 0);
	CHECK(x && x[0] == 101 && x[1] == 101 && x[2] == 102 && x[3] == 100); /* minor + major */
	free(x);
	x = NULL;
	CHECK_EQ_INT(report_counter_series(warm, REPORT_COUNTER_INSTRUCTIONS, 4, &x, &why), LL_ENOTFOUND);
	CHECK(x == NULL);
	CHECK_EQ_STR(why, "no PMU in this machine");
	/* one value fewer than the samples */
	CHECK_EQ_INT(report_counter_series(warm, REPORT_COUNTER_CPU, 5, &x, &why), LL_ENOTFOUND);
	CHECK_EQ_STR(why, "its counts do not give one number per timed run");
	CHECK_EQ_INT(report_counter_series(warm, REPORT_COUNTER_CPU, 3, &x, &why), LL_ENOTFOUND);
	/* a negative count is no count */
	cJSON_ReplaceItemInArray(cJSON_GetObjectItemCaseSensitive(rc, "cpu_system_us"), 1,
				 cJSON_CreateNumber(-1));
	CHECK_EQ_INT(report_counter_series(warm, REPORT_COUNTER_CPU, 4, &x, &why), LL_ENOTFOUND);
	/* Windows: no split, the total */
	cJSON_DeleteItemFromObjectCaseSensitive(rc, "minor_faults");
	cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(rc, "not_counted"), "minor_faults",
				"not split");
	CHECK_EQ_INT(report_counter_series(warm, REPORT_COUNTER_FAULTS, 4, &x, &why), LL_ENOTFOUND);
	CHECK_EQ_STR(why, "not split");
	cJSON *total = cJSON_AddArrayToObject(rc, "page_faults");
	for (int k = 0; k < 4; k++)
		cJSON_AddItemToArray(total, cJSON_CreateNumber(500 + k));
	CHECK_EQ_INT(report_counter_series(warm, REPORT_COUNTER_FAULTS, 4, &x, &why), 0);
	CHECK(x && x[0] == 500 && x[3] == 503);
	free(x);
	/* no counters at all: no reason of the agent's */
	cJSON_DeleteItemFromObjectCaseSensitive(warm, "run_counters");
	CHECK_EQ_INT(report_counter_series(warm, REPORT_COUNTER_CPU, 4, &x, &why), LL_ENOTFOUND);
	CHECK(why == NULL);
	cJSON_Delete(warm);
}

/* Compare data of RESULT read back into *D (its buffer in *DATA). */
static const struct report_compare_variant *read_back(const cJSON *result, bool candidate, void **data,
						      struct report_compare_data *d)
{
	struct report_sample room = {0};
	size_t len = 0;

	CHECK_EQ_INT(report_compare_data(result, "os=x", &room, data, &len), 0);
	report_sample_release(&room);
	CHECK_EQ_INT(report_compare_data_read(*data, len, candidate, d), 0);
	return report_compare_data_variant(d, "a");
}

/* Judges COUNTER of BASE against CAND into *F; the row's text in *ROW_TEXT. */
static void judge(const cJSON *base, const cJSON *cand, enum report_counter counter,
		  struct report_judge_figure *f, char *why, size_t size, cJSON **ret_row)
{
	struct report_compare_data bd = {0}, cd = {0};
	void *b = NULL, *c = NULL;
	const struct report_compare_variant *bv = read_back(base, false, &b, &bd);
	const struct report_compare_variant *cv = read_back(cand, true, &c, &cd);
	struct report_row row = {.obj = cJSON_CreateObject()};

	CHECK(bv && cv);
	if (bv && cv) {
		report_counter_figure(counter, bv, cv, &bd.floor, &cd.floor, false, 42, &row, f, why, size);
		report_counter_context(bv, cv, &row);
	}
	*ret_row = row.obj;
	report_compare_data_release(&bd);
	report_compare_data_release(&cd);
	free(b);
	free(c);
}

static void check_figures(void)
{
	uint64_t state = 9;
	cJSON *base = result_of(&state, 10000, true, true), *cand = result_of(&state, 11000, true, true);
	cJSON *bare = result_of(&state, 10000, true, false), *old = result_of(&state, 10000, false, false);
	struct report_judge_figure f;
	cJSON *row = NULL, *faults;
	char why[600];

	judge(base, cand, REPORT_COUNTER_FAULTS, &f, why, sizeof(why), &row);
	CHECK_EQ_INT(f.rc, 0);
	CHECK_EQ_STR(f.unit, "x_floor");
	CHECK(NEAR(f.change, 10, 0.1) && f.significant && f.low > 1.09 && f.high < 1.11);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(row, "faults_paired")));
	faults =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "counters"), "faults");
	CHECK(NEAR(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(faults, "delta")), 1000, 1));
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
			     cJSON_GetObjectItemCaseSensitive(
				     cJSON_GetObjectItemCaseSensitive(row, "counters"), "instructions"),
			     "not_counted")),
		     "no PMU in this machine (instructions, baseline)");
	cJSON_Delete(row);

	/* the same time, the same CPU: no change */
	judge(base, base, REPORT_COUNTER_CPU, &f, why, sizeof(why), &row);
	CHECK(f.rc == 0 && NEAR(f.change, 0, 1e-9) && !f.significant && f.low <= 1 && f.high >= 1);
	cJSON_Delete(row);

	/* a floor without counters: the sides' medians, unpaired */
	judge(bare, cand, REPORT_COUNTER_FAULTS, &f, why, sizeof(why), &row);
	CHECK(f.rc == 0 && f.significant && NEAR(f.base, 10001, 0.5));
	CHECK_EQ_STR(f.unit, "faults");
	CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(row, "faults_paired")));
	cJSON_Delete(row);

	/* not counted: the agent's reason, no figure */
	judge(base, cand, REPORT_COUNTER_INSTRUCTIONS, &f, why, sizeof(why), &row);
	CHECK_EQ_INT(f.rc, LL_ENOTFOUND);
	CHECK_EQ_STR(f.reason, "not counted: no PMU in this machine (instructions, baseline)");
	CHECK(!cJSON_GetObjectItemCaseSensitive(row, "instructions_ratio"));
	cJSON_Delete(row);

	/* a result from before the counters: said, and no counts beside the times */
	judge(old, cand, REPORT_COUNTER_CPU, &f, why, sizeof(why), &row);
	CHECK_EQ_INT(f.rc, LL_ENOTFOUND);
	CHECK(f.reason && strstr(f.reason, "the baseline's result has no run counters"));
	cJSON_Delete(row);
	judge(old, old, REPORT_COUNTER_CPU, &f, why, sizeof(why), &row);
	CHECK(!cJSON_GetObjectItemCaseSensitive(row, "counters"));
	cJSON_Delete(row);

	cJSON_Delete(base);
	cJSON_Delete(cand);
	cJSON_Delete(bare);
	cJSON_Delete(old);
}

int main(void)
{
	check_detectable();
	check_series();
	check_figures();
	CHECK_EQ_INT(report_counter_of(REPORT_METRIC_FAULTS), REPORT_COUNTER_FAULTS);
	CHECK_EQ_INT(report_counter_of(REPORT_METRIC_FLOOR_RATIO), -1);
	return check_finish();
}
