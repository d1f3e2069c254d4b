/* The known-effect self-test's figures (loadlab/calibration.h): the paired
 * per-pass estimator on a hand-checked case with drift, the fallback to
 * the difference of medians when the samples do not pair, the intervals,
 * the JSON, and bad input. (The file name differs from the module's: the
 * server's tests/unit/server/test_calibration.c owns that target name.) */
#include "check.h"

#include "loadlab/calibration.h"
#include "loadlab/err.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static const char *const names[3] = {"d0", "d200", "d400"};

/* A result whose variants d0, d200, d400 have the given samples and
 * round sizes (JSON arrays; NULL: no "round_sizes"). */
static cJSON *result_of(const char *zero, const char *zero_rounds, const char *x, const char *x_rounds,
			const char *two_x, const char *two_x_rounds)
{
	const char *samples[3] = {zero, x, two_x}, *rounds[3] = {zero_rounds, x_rounds, two_x_rounds};
	cJSON *result = cJSON_CreateObject(), *variants = cJSON_AddArrayToObject(result, "variants");

	for (int k = 0; k < 3; k++) {
		cJSON *v = cJSON_CreateObject(), *warm;
		cJSON_AddItemToArray(variants, v);
		cJSON_AddStringToObject(v, "name", names[k]);
		warm = cJSON_AddObjectToObject(v, "warm");
		cJSON_AddItemToObject(warm, "samples_us", cJSON_Parse(samples[k]));
		if (rounds[k])
			cJSON_AddItemToObject(warm, "round_sizes", cJSON_Parse(rounds[k]));
		if (k > 0) {
			cJSON *noise = cJSON_AddObjectToObject(warm, "noise");
			cJSON_AddNumberToObject(noise, "max_other_cpu_pct", 10.0 * k);
			cJSON_AddNumberToObject(noise, "flagged", k);
			cJSON_AddNumberToObject(noise, "retaken", 1);
		}
	}
	return result;
}

/* The hand-checked case. The 0 variant drifts up by 100 µs a pass; the X
 * variant sits 210, 205, 220, 200, 200 above it (median 205), the 2X
 * variant 400, 410, 400, 390, 400 (median 400). The medians differ by
 * 520 - 300 = 220 and 700 - 300 = 400: the drift costs the unpaired
 * figure 15 µs at X. */
static const char zero[] = "[100,200,300,400,500]", x[] = "[310,405,520,600,700]",
		  two_x[] = "[500,610,700,790,900]";

static void test_paired(void)
{
	struct calibration c;
	cJSON *result = result_of(zero, "[2,2,1]", x, "[2,2,1]", two_x, "[2,2,1]"), *json = NULL;
	const cJSON *ci, *noise;

	memset(&c, 0xff, sizeof(c));
	CHECK(calibration_from_result(result, names, 200, &c) == 0);
	CHECK(c.paired);
	CHECK(NEAR(c.injected_us, 200));
	CHECK(NEAR(c.median_us[0], 300) && NEAR(c.median_us[1], 520) && NEAR(c.median_us[2], 700));
	CHECK(NEAR(c.cost[0].injected_us, 200) && NEAR(c.cost[1].injected_us, 400));
	CHECK(NEAR(c.cost[0].recovered_us, 205));
	CHECK(NEAR(c.cost[0].ratio, 1.025));
	CHECK(NEAR(c.cost[1].recovered_us, 400));
	CHECK(NEAR(c.cost[1].ratio, 1.0));
	CHECK_EQ_INT(c.runs, 5);
	CHECK_EQ_INT(c.rounds, 3);
	/* A resample's median of d lies between the smallest and the largest d. */
	CHECK(c.cost[0].have_interval && c.cost[1].have_interval);
	CHECK(c.cost[0].low_us >= 200 && c.cost[0].low_us <= 205);
	CHECK(c.cost[0].high_us >= 205 && c.cost[0].high_us <= 220);
	CHECK(c.cost[1].low_us >= 390 && c.cost[1].high_us <= 410);
	CHECK(NEAR(c.max_other_cpu_pct, 20) && NEAR(c.flagged, 3) && NEAR(c.retaken, 2));

	/* The JSON: the daemon's names, the 2X cost halved, "paired". */
	CHECK(calibration_json(&c, &json) == 0);
	CHECK(NEAR(cJSON_GetObjectItemCaseSensitive(json, "injected_us")->valuedouble, 200));
	CHECK(NEAR(cJSON_GetObjectItemCaseSensitive(json, "recovered_us")->valuedouble, 205));
	CHECK(NEAR(cJSON_GetObjectItemCaseSensitive(json, "ratio")->valuedouble, 1.025));
	CHECK(NEAR(cJSON_GetObjectItemCaseSensitive(json, "recovered_2x_us")->valuedouble, 200));
	CHECK(NEAR(cJSON_GetObjectItemCaseSensitive(json, "ratio_2x")->valuedouble, 1.0));
	CHECK(NEAR(cJSON_GetObjectItemCaseSensitive(json, "baseline_us")->valuedouble, 300));
	CHECK(NEAR(cJSON_GetObjectItemCaseSensitive(json, "runs")->valuedouble, 5));
	CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(json, "paired")));
	ci = cJSON_GetObjectItemCaseSensitive(json, "ci_us");
	CHECK(cJSON_GetArraySize(ci) == 2 && NEAR(cJSON_GetArrayItem(ci, 0)->valuedouble, c.cost[0].low_us));
	ci = cJSON_GetObjectItemCaseSensitive(json, "ci_2x_us");
	CHECK(cJSON_GetArraySize(ci) == 2 &&
	      NEAR(cJSON_GetArrayItem(ci, 1)->valuedouble, c.cost[1].high_us / 2));
	noise = cJSON_GetObjectItemCaseSensitive(json, "noise");
	CHECK(NEAR(cJSON_GetObjectItemCaseSensitive(noise, "max_other_cpu_pct")->valuedouble, 20));
	CHECK(NEAR(cJSON_GetObjectItemCaseSensitive(noise, "flagged")->valuedouble, 3));
	CHECK(NEAR(cJSON_GetObjectItemCaseSensitive(noise, "retaken")->valuedouble, 2));
	cJSON_Delete(json);

	/* Seeded: the same result, the same interval. */
	struct calibration again;
	CHECK(calibration_from_result(result, names, 200, &again) == 0);
	CHECK(again.cost[0].low_us == c.cost[0].low_us && again.cost[0].high_us == c.cost[0].high_us);
	cJSON_Delete(result);

	/* A constant per-pass difference: the interval is that difference. */
	result =
		result_of("[100,900,300,700]", NULL, "[300,1100,500,900]", NULL, "[500,1300,700,1100]", NULL);
	CHECK(calibration_from_result(result, names, 200, &c) == 0);
	CHECK(c.paired && c.rounds == 0);
	CHECK(NEAR(c.cost[0].recovered_us, 200) && NEAR(c.cost[0].low_us, 200) &&
	      NEAR(c.cost[0].high_us, 200));
	CHECK(NEAR(c.cost[1].recovered_us, 400) && NEAR(c.cost[1].low_us, 400) &&
	      NEAR(c.cost[1].high_us, 400));
	/* No noise anywhere: unknown, and nothing flagged. */
	cJSON_DeleteItemFromObject(
		cJSON_GetObjectItemCaseSensitive(
			cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(result, "variants"), 1), "warm"),
		"noise");
	cJSON_DeleteItemFromObject(
		cJSON_GetObjectItemCaseSensitive(
			cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(result, "variants"), 2), "warm"),
		"noise");
	CHECK(calibration_from_result(result, names, 200, &c) == 0);
	CHECK(c.max_other_cpu_pct < 0 && c.flagged == 0 && c.retaken == 0);
	CHECK(calibration_json(&c, &json) == 0);
	CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(json, "noise"),
							    "max_other_cpu_pct")));
	cJSON_Delete(json);
	cJSON_Delete(result);
}

static void test_unpaired(void)
{
	struct calibration c;
	cJSON *result, *json = NULL;

	/* One sample fewer in the X variant: the medians' difference,
	 * (405 + 520) / 2 - 300 = 162.5, and 700 - 300 for 2X. */
	result = result_of(zero, NULL, "[310,405,520,600]", NULL, two_x, NULL);
	CHECK(calibration_from_result(result, names, 200, &c) == 0);
	CHECK(!c.paired);
	CHECK(NEAR(c.cost[0].recovered_us, 162.5));
	CHECK(NEAR(c.cost[0].ratio, 0.8125));
	CHECK(NEAR(c.cost[1].recovered_us, 400));
	/* Each resample's medians lie within its sample's range. */
	CHECK(c.cost[0].have_interval);
	CHECK(c.cost[0].low_us <= 162.5 && c.cost[0].high_us >= 162.5);
	CHECK(c.cost[0].low_us >= 310 - 500 && c.cost[0].high_us <= 600 - 100);
	CHECK(calibration_json(&c, &json) == 0);
	CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(json, "paired")));
	cJSON_Delete(json);
	cJSON_Delete(result);

	/* Same counts, other rounds: not paired, the drift shows (220). */
	result = result_of(zero, "[2,3]", x, "[3,2]", two_x, "[2,3]");
	CHECK(calibration_from_result(result, names, 200, &c) == 0);
	CHECK(!c.paired);
	CHECK(NEAR(c.cost[0].recovered_us, 220));
	CHECK(NEAR(c.cost[1].recovered_us, 400));
	cJSON_Delete(result);

	/* Rounds that do not add up count as none, on every side: paired. */
	result = result_of(zero, "[2,2]", x, "[2,2]", two_x, "[2,2]");
	CHECK(calibration_from_result(result, names, 200, &c) == 0);
	CHECK(c.paired && c.rounds == 0);
	CHECK(NEAR(c.cost[0].recovered_us, 205));
	cJSON_Delete(result);
}

static void test_bad_input(void)
{
	struct calibration c, before;
	const char *const missing_name[3] = {"d0", NULL, "d400"};
	const char *const other_names[3] = {"d0", "d200", "d800"};
	cJSON *result = result_of(zero, NULL, x, NULL, two_x, NULL);

	memset(&c, 0x5a, sizeof(c));
	before = c;
	CHECK(calibration_from_result(result, names, 0, &c) == LL_EINVAL);
	CHECK(calibration_from_result(result, names, 50001, &c) == LL_EINVAL);
	CHECK(calibration_from_result(result, names, NAN, &c) == LL_EINVAL);
	CHECK(calibration_from_result(result, missing_name, 200, &c) == LL_EINVAL);
	CHECK(calibration_from_result(result, other_names, 200, &c) == LL_EFORMAT);
	CHECK(strstr(err_message(LL_EFORMAT), "d800") != NULL);
	CHECK(memcmp(&c, &before, sizeof(c)) == 0);
	cJSON_Delete(result);

	result = result_of(zero, NULL, "[]", NULL, two_x, NULL);
	CHECK(calibration_from_result(result, names, 200, &c) == LL_EFORMAT);
	CHECK(strstr(err_message(LL_EFORMAT), "d200") != NULL);
	cJSON_Delete(result);
	result = result_of(zero, NULL, x, NULL, "[1,\"2\",3,4,5]", NULL);
	CHECK(calibration_from_result(result, names, 200, &c) == LL_EFORMAT);
	cJSON_Delete(result);
	result = result_of(zero, NULL, x, NULL, two_x, NULL);
	cJSON_AddFalseToObject(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(result, "variants"), 0),
			       "valid");
	CHECK(calibration_from_result(result, names, 200, &c) == LL_EFORMAT);
	CHECK(memcmp(&c, &before, sizeof(c)) == 0);
	cJSON_Delete(result);
}

int main(void)
{
	test_paired();
	test_unpaired();
	test_bad_input();
	return check_finish();
}
