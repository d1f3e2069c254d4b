/* An agent's calibration from a result (calibration.h): the recovered-cost
 * arithmetic on hand-made samples, the job spec's calibration field
 * (job_spec.h) and pinning by agent name. */
#include "reports/calibration.h"
#include "check.h"

#include "loadlab/err.h"
#include "loadlab/job_spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static cJSON *parse(const char *text)
{
	cJSON *v = cJSON_Parse(text);
	if (!v)
		fprintf(stderr, "bad JSON in the test: %s\n", text);
	return v;
}

static double number(const cJSON *obj, const char *key)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

/* A normalized calibration spec of X µs (names as `loadlab calibrate` gives). */
static cJSON *spec_of(int delay)
{
	char submitted[1024];
	cJSON *job, *normalized = NULL;

	snprintf(submitted, sizeof(submitted),
		 "{\"name\":\"cal\",\"family\":\"elf\",\"generator\":{\"dlls\":2,\"exports\":16},"
		 "\"variants\":[{\"name\":\"delay-2x\",\"preset\":\"default\",\"delay_us\":%d},"
		 "{\"name\":\"delay-0\",\"preset\":\"default\",\"delay_us\":0},"
		 "{\"name\":\"delay-x\",\"preset\":\"default\",\"delay_us\":%d}],"
		 "\"calibration\":{\"delay_us\":%d}}",
		 2 * delay, delay, delay);
	job = parse(submitted);
	CHECK(job_spec_normalize(job, &normalized) == 0);
	cJSON_Delete(job);
	return normalized;
}

/* A result whose variants have the given samples (JSON arrays) and rounds. */
static cJSON *result_of(const char *zero, const char *x, const char *two_x, const char *rounds)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "{\"attempt\":1,\"facts\":{},\"runner\":\"native\",\"variants\":["
		 "{\"name\":\"delay-0\",\"warm\":{\"samples_us\":%s,\"round_sizes\":%s,"
		 "\"noise\":{\"max_other_cpu_pct\":12.5,\"flagged\":1,\"retaken\":1}}},"
		 "{\"name\":\"delay-x\",\"warm\":{\"samples_us\":%s,\"round_sizes\":%s,"
		 "\"noise\":{\"max_other_cpu_pct\":40,\"flagged\":3,\"retaken\":2}}},"
		 "{\"name\":\"delay-2x\",\"warm\":{\"samples_us\":%s,\"round_sizes\":%s}}]}",
		 zero, rounds, x, rounds, two_x, rounds);
	return parse(text);
}

static void test_recovered_cost(void)
{
	cJSON *spec = spec_of(1000), *calibration = NULL;
	/* Medians: 500, 1520 (recovered 1020), 2480 (2X recovered 1980 / 2 = 990). */
	cJSON *result = result_of("[490,500,510,505,495,500]", "[1510,1520,1530,1525,1515,1520]",
				  "[2470,2480,2490,2485,2475,2480]", "[2,2,2]");
	const cJSON *ci, *noise;

	CHECK_EQ_STR(job_spec_calibration_variant(spec, 0), "delay-0");
	CHECK_EQ_STR(job_spec_calibration_variant(spec, 1), "delay-x");
	CHECK_EQ_STR(job_spec_calibration_variant(spec, 2), "delay-2x");
	CHECK(job_spec_calibration_variant(spec, 3) == NULL);
	CHECK(calibration_compute(spec, result, &calibration) == 0);
	CHECK(NEAR(number(calibration, "injected_us"), 1000));
	CHECK(NEAR(number(calibration, "baseline_us"), 500));
	CHECK(NEAR(number(calibration, "recovered_us"), 1020));
	CHECK(NEAR(number(calibration, "ratio"), 1.02));
	CHECK(NEAR(number(calibration, "recovered_2x_us"), 990));
	CHECK(NEAR(number(calibration, "ratio_2x"), 0.99));
	CHECK(NEAR(number(calibration, "runs"), 6));
	/* The variants' samples pair by pass (same counts and rounds): the
	 * per-pass differences, all 1020 (and 1980), make the figures. */
	CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(calibration, "paired")));
	ci = cJSON_GetObjectItemCaseSensitive(calibration, "ci_2x_us");
	CHECK(cJSON_GetArraySize(ci) == 2 && NEAR(cJSON_GetArrayItem(ci, 0)->valuedouble, 990) &&
	      NEAR(cJSON_GetArrayItem(ci, 1)->valuedouble, 990));
	/* The interval holds the estimate and stays within what the samples
	 * allow: medians of resamples of X lie in 1510..1530, of 0 in 490..510. */
	ci = cJSON_GetObjectItemCaseSensitive(calibration, "ci_us");
	CHECK_EQ_INT(cJSON_GetArraySize(ci), 2);
	CHECK(cJSON_GetArrayItem(ci, 0)->valuedouble <= 1020 &&
	      cJSON_GetArrayItem(ci, 1)->valuedouble >= 1020);
	CHECK(cJSON_GetArrayItem(ci, 0)->valuedouble >= 1000 - 1e-6 &&
	      cJSON_GetArrayItem(ci, 1)->valuedouble <= 1040 + 1e-6);
	noise = cJSON_GetObjectItemCaseSensitive(calibration, "noise");
	CHECK(NEAR(number(noise, "max_other_cpu_pct"), 40));
	CHECK(NEAR(number(noise, "flagged"), 4));
	CHECK(NEAR(number(noise, "retaken"), 3));
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(calibration, "family")), "elf");
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(calibration, "runner")), "native");
	cJSON_Delete(calibration);
	cJSON_Delete(result);

	/* A variant that waited less than injected: a ratio below 1, as is;
	 * rounds that do not add up are ignored (runs resampled as one). */
	result = result_of("[100,100,100]", "[700,700,700]", "[1100,1100,1100]", "[5]");
	calibration = NULL;
	CHECK(calibration_compute(spec, result, &calibration) == 0);
	CHECK(NEAR(number(calibration, "recovered_us"), 600));
	CHECK(NEAR(number(calibration, "ratio"), 0.6));
	CHECK(NEAR(number(calibration, "recovered_2x_us"), 500));
	CHECK(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(calibration, "noise"), "max_other_cpu_pct")));
	CHECK(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(calibration, "ci_us")));
	cJSON_Delete(calibration);
	cJSON_Delete(result);

	/* Counts that differ: not paired, median(X) - median(0) = 650 - 100. */
	result = result_of("[100,100,100]", "[600,700]", "[1100,1100,1100]", "[3]");
	calibration = NULL;
	CHECK(calibration_compute(spec, result, &calibration) == 0);
	CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(calibration, "paired")));
	CHECK(NEAR(number(calibration, "recovered_us"), 550));
	cJSON_Delete(calibration);
	cJSON_Delete(result);
	cJSON_Delete(spec);
}

static void test_bad_results(void)
{
	cJSON *spec = spec_of(1000), *calibration = NULL, *plain, *result;
	cJSON *submitted = parse("{\"name\":\"plain\",\"family\":\"elf\",\"generator\":{\"dlls\":1,"
				 "\"exports\":1},\"variants\":[\"default\"]}");

	/* A variant without samples, a missing variant, an invalid one. */
	result = result_of("[]", "[1]", "[2]", "[1]");
	CHECK(calibration_compute(spec, result, &calibration) == LL_EFORMAT);
	CHECK(strstr(err_message(LL_EFORMAT), "delay-0") != NULL);
	cJSON_Delete(result);
	result = parse("{\"variants\":[{\"name\":\"delay-0\",\"warm\":{\"samples_us\":[1]}}]}");
	CHECK(calibration_compute(spec, result, &calibration) == LL_EFORMAT);
	cJSON_Delete(result);
	result = result_of("[1]", "[2]", "[3]", "[1]");
	cJSON_AddFalseToObject(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(result, "variants"), 1),
			       "valid");
	CHECK(calibration_compute(spec, result, &calibration) == LL_EFORMAT);
	CHECK(calibration == NULL);
	/* A job that is no calibration. */
	CHECK(job_spec_normalize(submitted, &plain) == 0);
	CHECK(calibration_compute(plain, result, &calibration) == LL_EINVAL);
	CHECK(job_spec_calibration_variant(plain, 0) == NULL);
	cJSON_Delete(plain);
	cJSON_Delete(submitted);
	cJSON_Delete(result);
	cJSON_Delete(spec);
}

static void test_spec_field(void)
{
	static const struct {
		const char *calibration, *variants;
		int rc;
	} cases[] = {
		{"{\"delay_us\":1000}",
		 "[{\"name\":\"a\",\"delay_us\":0},{\"name\":\"b\",\"delay_us\":1000},"
		 "{\"name\":\"c\",\"delay_us\":2000}]",
		 0},
		{"{\"delay_us\":50000}",
		 "[{\"name\":\"a\"},{\"name\":\"b\",\"delay_us\":50000},"
		 "{\"name\":\"c\",\"delay_us\":100000}]",
		 0},
		{"{\"delay_us\":50001}", "[{\"name\":\"a\"}]", LL_ERANGE},
		{"{\"delay_us\":0}", "[{\"name\":\"a\"}]", LL_ERANGE},
		{"{\"delay_us\":1000}", "[{\"name\":\"a\"},{\"name\":\"b\",\"delay_us\":1000}]", LL_EINVAL},
		{"{\"delay_us\":1000,\"runs\":3}", "[{\"name\":\"a\"}]", LL_EINVAL},
		{"1000", "[{\"name\":\"a\"}]", LL_EINVAL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[1024];
		cJSON *job, *normalized = NULL;
		snprintf(text, sizeof(text),
			 "{\"name\":\"c\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
			 "\"variants\":%s,\"calibration\":%s}",
			 cases[i].variants, cases[i].calibration);
		job = parse(text);
		int rc = job_spec_normalize(job, &normalized);
		if (rc != cases[i].rc)
			fprintf(stderr, "case %zu: %s\n", i, err_message(rc));
		CHECK_EQ_INT(rc, cases[i].rc);
		if (rc == 0) {
			/* The field is kept, and the normalized spec normalizes to itself. */
			cJSON *again = NULL;
			CHECK(cJSON_GetObjectItemCaseSensitive(normalized, "calibration") != NULL);
			CHECK(job_spec_normalize(normalized, &again) == 0);
			CHECK(cJSON_Compare(normalized, again, true));
			cJSON_Delete(again);
		}
		cJSON_Delete(normalized);
		cJSON_Delete(job);
	}
}

static void test_pinning_by_name(void)
{
	cJSON *selector = parse("{\"agent\":[\"lab-1\",\"lab-3\"]}");
	cJSON *facts = parse("{\"os\":\"linux\"}"), *labels = parse("{}");
	cJSON *labelled = parse("{\"agent\":\"lab-3\"}");

	CHECK(job_spec_agent_selected(selector, "lab-1", facts, labels));
	CHECK(job_spec_agent_selected(selector, "lab-3", facts, labels));
	CHECK(!job_spec_agent_selected(selector, "lab-2", facts, labels));
	CHECK(!job_spec_agent_selected(selector, NULL, facts, labels));
	/* A label of that key still matches, as for any key. */
	CHECK(job_spec_agent_selected(selector, "lab-2", facts, labelled));
	CHECK(!job_spec_selector_matches(selector, facts, labels));
	cJSON_Delete(selector);
	cJSON_Delete(facts);
	cJSON_Delete(labels);
	cJSON_Delete(labelled);
}

/* A within-job calibration of RECOVERED with its interval LO .. HI (the 2X
 * figures halved: the same, halved). */
static cJSON *calibration_of(double recovered, double lo, double hi)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "{\"injected_us\":1000,\"recovered_us\":%.17g,\"ci_us\":[%.17g,%.17g],"
		 "\"recovered_2x_us\":%.17g,\"ci_2x_us\":[%.17g,%.17g],\"interval_scope\":\"within-job\","
		 "\"interval_us\":[%.17g,%.17g],\"interval_2x_us\":[%.17g,%.17g]}",
		 recovered, lo, hi, recovered / 2, lo / 2, hi / 2, lo, hi, lo / 2, hi / 2);
	return parse(text);
}

static double item(const cJSON *obj, const char *key, int at)
{
	return cJSON_GetNumberValue(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(obj, key), at));
}

/* Adds earlier calibrations FROM..TO-1 (VALUES[i] +- HALF[i]) to HISTORY,
 * widens C by them and checks its scope is SCOPE; C's "between_jobs". */
static const cJSON *across_jobs_with(cJSON *c, cJSON *history, const double *values, const double *half,
				     int from, int to, const char *scope)
{
	for (int i = from; i < to; i++)
		cJSON_AddItemToArray(history,
				     calibration_of(values[i], values[i] - half[i], values[i] + half[i]));
	CHECK(calibration_across_jobs(c, history) == 0);
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "interval_scope")), scope);
	return cJSON_GetObjectItemCaseSensitive(c, "between_jobs");
}

/* calibration_across_jobs(): the scope of the interval and its widening by
 * the spread of earlier calibrations, against tau^2 and the widened ends
 * worked out independently in Python (DerSimonian-Laird, one group). */
static void test_across_jobs(void)
{
	static const double values[4] = {1010, 990, 1040, 975}, half[4] = {20, 25, 18, 22};
	cJSON *history = cJSON_CreateArray(), *c = calibration_of(1002, 985, 1030);
	const cJSON *between;

	/* two earlier ones: too few, within-job, the interval as it was */
	between = across_jobs_with(c, history, values, half, 0, 2, "within-job");
	CHECK(number(between, "jobs") == 2 && !cJSON_GetObjectItemCaseSensitive(between, "sd_us"));
	CHECK(item(c, "interval_us", 0) == 985 && item(c, "interval_us", 1) == 1030);

	/* four: tau^2 = 756.7386600627009, each half widened by z^2 tau^2 */
	between = across_jobs_with(c, history, values, half, 2, 4, "within-and-between-jobs");
	CHECK(number(between, "jobs") == 4);
	CHECK(fabs(number(between, "sd_us") - 27.50888329363264) < 1e-9);
	CHECK(fabs(number(between, "sd_2x_us") - 13.75444164681632) < 1e-9);
	CHECK(fabs(item(c, "interval_us", 0) - 945.4669972435736) < 1e-9);
	CHECK(fabs(item(c, "interval_us", 1) - 1062.7534394142267) < 1e-9);
	CHECK(fabs(item(c, "interval_2x_us", 0) - 945.4669972435736 / 2) < 1e-9);
	/* the within-job interval stays where it was */
	CHECK(item(c, "ci_us", 0) == 985 && item(c, "ci_us", 1) == 1030);
	cJSON_Delete(c);

	/* earlier ones that agree better than their intervals say: tau^2 0,
	 * the scope says so and the interval stays */
	cJSON_Delete(history);
	history = cJSON_CreateArray();
	for (int i = 0; i < 3; i++)
		cJSON_AddItemToArray(history, calibration_of(1000 + i, 950 + i, 1050 + i));
	c = calibration_of(1002, 985, 1030);
	CHECK(calibration_across_jobs(c, history) == 0);
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "interval_scope")),
		     "within-and-between-jobs");
	CHECK(number(cJSON_GetObjectItemCaseSensitive(c, "between_jobs"), "sd_us") == 0);
	CHECK(fabs(item(c, "interval_us", 0) - 985) < 1e-9 && fabs(item(c, "interval_us", 1) - 1030) < 1e-9);
	cJSON_Delete(c);
	cJSON_Delete(history);
}

int main(void)
{
	test_across_jobs();
	test_recovered_cost();
	test_bad_results();
	test_spec_field();
	test_pinning_by_name();
	return check_finish();
}
