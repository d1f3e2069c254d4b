/* One result's summary (summary.c, report_summarize_result()): known
 * samples give known figures, a CI around the median, the change against
 * the baseline, and the same text every time. */
#include "check.h"
#include "reports/report.h"

#include "loadlab/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *at(const cJSON *obj, const char *path)
{
	char key[64];
	const char *dot;

	while (obj && (dot = strchr(path, '.'))) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		obj = cJSON_GetObjectItemCaseSensitive(obj, key);
		path = dot + 1;
	}
	return obj ? cJSON_GetObjectItemCaseSensitive(obj, path) : NULL;
}

static double num(const cJSON *obj, const char *path)
{
	const cJSON *item = at(obj, path);
	return cJSON_IsNumber(item) ? item->valuedouble : NAN;
}

static const char *str(const cJSON *obj, const char *path)
{
	const cJSON *item = at(obj, path);
	return cJSON_IsString(item) ? item->valuestring : "";
}

#define CHECK_NEAR(a, b) CHECK(fabs((a) - (b)) < 1e-6)

/* "[FROM, FROM+1, ..., FROM+COUNT-1]" plus EXTRA when not NULL. */
static void samples(char *out, size_t size, int from, int count, const char *extra)
{
	size_t len = (size_t)snprintf(out, size, "[");
	for (int i = 0; i < count; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%d", i ? "," : "", from + i);
	snprintf(out + len, size - len, "%s%s]", extra ? "," : "", extra ? extra : "");
}

/* The summary of the result BODY_FORMAT with its two "%s" filled by the
 * samples FROM_A..FROM_A+10 (and EXTRA_A when not NULL) and
 * FROM_B..FROM_B+10; NULL, and a failed check, when summarizing fails. */
static cJSON *summarize(const char *body_format, int from_a, const char *extra_a, int from_b)
{
	char a[512], b[512], body[2048];
	cJSON *summary = NULL;

	samples(a, sizeof(a), from_a, 11, extra_a);
	samples(b, sizeof(b), from_b, 11, NULL);
	snprintf(body, sizeof(body), body_format, a, b);
	CHECK_EQ_INT(report_summarize_result(body, &summary), 0);
	return summary;
}

/* Variant "default" warm 100..110, "rebase" warm 200..210. */
static const char known_body[] =
	"{\"facts\":{\"os\":\"win10\"},\"variants\":["
	"{\"name\":\"default\",\"warm\":{\"samples_us\":%s},"
	" \"cold\":{\"samples_us\":[1000,3000],\"page_faults\":[10,30],\"cold\":true,"
	"  \"method\":\"standby-purge\"}},"
	"{\"name\":\"rebase\",\"warm\":{\"samples_us\":%s},"
	" \"cold\":{\"samples_us\":[500,1500],\"page_faults\":[5,15],\"cold\":false}},"
	"{\"name\":\"broken\",\"valid\":false,\"invalid_reason\":\"exit code 3\"},"
	"{\"name\":\"empty\",\"warm\":{\"samples_us\":[]}}]}";

static void test_known_samples(void)
{
	cJSON *summary = summarize(known_body, 100, NULL, 200), *again;
	char *text1, *text2;

	if (!summary)
		return;

	CHECK_EQ_INT(num(summary, "v"), REPORT_SUMMARY_VERSION);
	CHECK_EQ_STR(str(summary, "facts.os"), "win10");
	CHECK_EQ_STR(str(summary, "warm_baseline"), "default");
	CHECK_EQ_STR(str(summary, "cold_baseline"), "rebase");

	/* Warm figures of 100..110. */
	CHECK_NEAR(num(summary, "variants.default.warm.n"), 11);
	CHECK_NEAR(num(summary, "variants.default.warm.min_us"), 100);
	CHECK_NEAR(num(summary, "variants.default.warm.median_us"), 105);
	CHECK_NEAR(num(summary, "variants.default.warm.mean_us"), 105);
	CHECK_NEAR(num(summary, "variants.default.warm.outliers"), 0);
	/* The CI of the median holds the median, inside the samples' range,
	 * and is not a point. */
	double lo = num(summary, "variants.default.warm.ci_low_us");
	double hi = num(summary, "variants.default.warm.ci_high_us");
	CHECK(lo >= 100 && lo <= 105);
	CHECK(hi >= 105 && hi <= 110);
	CHECK(hi - lo >= 1);
	CHECK(!at(summary, "variants.default.vs_baseline"));

	/* 200..210 against 100..110: +95.24 %, significant. */
	CHECK_NEAR(num(summary, "variants.rebase.warm.median_us"), 205);
	CHECK_NEAR(num(summary, "variants.rebase.vs_baseline.change_pct"), 95.24);
	CHECK_NEAR(num(summary, "variants.rebase.vs_baseline.min_change_pct"), 100);
	CHECK_NEAR(num(summary, "variants.rebase.vs_baseline.ratio"), 1.9524);
	CHECK(num(summary, "variants.rebase.vs_baseline.ratio_ci_low") > 1);
	CHECK(num(summary, "variants.rebase.vs_baseline.ratio_ci_high") >=
	      num(summary, "variants.rebase.vs_baseline.ratio"));
	CHECK(num(summary, "variants.rebase.vs_baseline.p_value") < 0.001);
	CHECK(cJSON_IsTrue(at(summary, "variants.rebase.vs_baseline.significant")));

	/* Cold figures, and the cold change against the rebase variant. */
	CHECK_NEAR(num(summary, "variants.default.cold.n"), 2);
	CHECK_NEAR(num(summary, "variants.default.cold.mean_us"), 2000);
	CHECK_NEAR(num(summary, "variants.default.cold.median_us"), 2000);
	CHECK_NEAR(num(summary, "variants.default.cold.page_faults_mean"), 20);
	CHECK(cJSON_IsTrue(at(summary, "variants.default.cold.cold")));
	CHECK_EQ_STR(str(summary, "variants.default.cold.method"), "standby-purge");
	CHECK(cJSON_IsFalse(at(summary, "variants.rebase.cold.cold")));
	CHECK_EQ_STR(str(summary, "variants.rebase.cold.method"), "unknown");
	CHECK_NEAR(num(summary, "variants.default.cold.vs_baseline.time_pct"), 200);
	CHECK_NEAR(num(summary, "variants.default.cold.vs_baseline.page_faults_pct"), 200);

	/* An invalid variant says why; one without samples has no warm. */
	CHECK(cJSON_IsFalse(at(summary, "variants.broken.valid")));
	CHECK_EQ_STR(str(summary, "variants.broken.reason"), "exit code 3");
	CHECK(cJSON_IsTrue(at(summary, "variants.empty.valid")));
	CHECK(!at(summary, "variants.empty.warm"));

	/* The bootstrap is seeded: the same body gives the same text. */
	again = summarize(known_body, 100, NULL, 200);
	text1 = cJSON_PrintUnformatted(summary);
	text2 = cJSON_PrintUnformatted(again);
	CHECK_EQ_STR(text1, text2);
	free(text1);
	free(text2);
	cJSON_Delete(summary);
	cJSON_Delete(again);
}

static void test_outlier_and_small_change(void)
{
	/* x: 100..110 and one wild sample; y: the same times without it. */
	cJSON *summary = summarize("{\"variants\":[{\"name\":\"x\",\"warm\":{\"samples_us\":%s}},"
				   "{\"name\":\"y\",\"warm\":{\"samples_us\":%s}}]}",
				   100, "100000", 100);

	if (!summary)
		return;
	/* No "default": the first variant with warm figures is the baseline. */
	CHECK_EQ_STR(str(summary, "warm_baseline"), "x");
	CHECK(cJSON_IsNull(at(summary, "cold_baseline")));
	CHECK_NEAR(num(summary, "variants.x.warm.n"), 12);
	CHECK_NEAR(num(summary, "variants.x.warm.outliers"), 1);
	CHECK_NEAR(num(summary, "variants.x.warm.median_us"), 105.5);
	CHECK(num(summary, "variants.x.warm.mean_us") > 8000);
	/* Same times: no significant change. */
	CHECK(!cJSON_IsTrue(at(summary, "variants.y.vs_baseline.significant")));
	CHECK(fabs(num(summary, "variants.y.vs_baseline.change_pct")) < 1);
	cJSON_Delete(summary);
}

static void test_bad_bodies(void)
{
	cJSON *summary = (cJSON *)1;

	CHECK(report_summarize_result("not json", &summary) < 0);
	CHECK(report_summarize_result("[1,2]", &summary) < 0);
	CHECK(summary == (cJSON *)1); /* untouched on failure */
	/* Negative or non-numeric samples are no samples. */
	summary = NULL;
	CHECK_EQ_INT(report_summarize_result("{\"variants\":[{\"name\":\"a\",\"warm\":"
					     "{\"samples_us\":[1,-2,3]}}]}",
					     &summary),
		     0);
	CHECK(summary && !at(summary, "variants.a.warm"));
	CHECK(summary && cJSON_IsNull(at(summary, "warm_baseline")));
	cJSON_Delete(summary);
}

int main(void)
{
	test_known_samples();
	test_outlier_and_small_change();
	test_bad_bodies();
	return check_finish();
}
