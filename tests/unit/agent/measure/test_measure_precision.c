/*
 * test_measure_precision.c - runs until a paired precision (issue 40,
 * measure.h's paired_precision): real warm runs of /bin/true as two
 * variants and a floor. Asked for +-50 % the pair is precise enough after
 * the first sweep, but the rule stops no earlier than
 * MEASURE_PRECISION_MIN_PASSES passes (its first, noisiest widths would
 * leave the interval covering 88-90 %: docs/statistics.md), and the result
 * says "precision"; asked for +-0.1 % it is not, and the runs go on until
 * the time is spent, which the result says too. Both well under a minute.
 */
#include "check.h"
#include "check_json.h"

#include <stdio.h>
#include <string.h>

#include "loadlab/err.h"
#include "measure/measure.h"

/* The warm result of "a", "b" and the floor, until PCT or SECONDS. */
static cJSON *measure(double pct, double seconds)
{
	static const char *argv[] = {"/bin/true", NULL};
	struct measure_program p[] = {
		{"a", {.argv = argv}, NULL}, {"b", {.argv = argv}, NULL}, {"(floor)", {.argv = argv}, NULL}};
	struct measure_options o = {.runs = 1000,
				    .warmup = 1,
				    .seed = 3,
				    .timeout_ms = 10000,
				    .rounds = 1,
				    .auto_runs = true,
				    .precision = pct / 100,
				    .paired_precision = pct / 100,
				    .max_seconds = seconds,
				    .paired_count = 2};
	cJSON *r = NULL;

	CHECK_EQ_INT(measure_warm(p, 3, &o, &r), 0);
	return r;
}

static void test_stops_when_precise(void)
{
	cJSON *r = measure(50, 60);
	const cJSON *a = member(member(member(r, "programs"), "a"), "auto");
	const cJSON *b = member(member(member(r, "programs"), "b"), "auto");

	CHECK(r != NULL);
	CHECK_EQ_STR(cJSON_GetStringValue(member(b, "stopped")), "precision");
	CHECK(cJSON_IsTrue(member(b, "reached")));
	CHECK_EQ_INT(number(b, "runs_taken"), MEASURE_PRECISION_MIN_PASSES);
	CHECK(number(b, "paired_half_width_pct") >= 0 && number(b, "paired_half_width_pct") <= 50);
	CHECK(cJSON_GetArraySize(member(b, "paired_ratio_ci")) == 2);
	CHECK(!member(a, "paired_ratio_ci")); /* the baseline is not judged against itself */
	CHECK(!member(member(member(member(r, "programs"), "(floor)"), "auto"),
		      "paired_ratio_ci")); /* nor the floor */
	CHECK(number(member(r, "method"), "precision_pct") == 50 &&
	      number(member(r, "method"), "runs") == MEASURE_PRECISION_MIN_PASSES);
	printf("+-50 %%: stopped after %g passes, half-width %.2f %%\n", number(b, "runs_taken"),
	       number(b, "paired_half_width_pct"));
	cJSON_Delete(r);
}

static void test_runs_until_the_time_is_spent(void)
{
	cJSON *r = measure(0.1, 2);
	const cJSON *b = member(member(member(r, "programs"), "b"), "auto");

	CHECK(r != NULL);
	CHECK_EQ_STR(cJSON_GetStringValue(member(b, "stopped")), "max_seconds");
	CHECK(cJSON_IsFalse(member(b, "reached")));
	CHECK(number(b, "seconds") >= 2 && number(b, "max_seconds") == 2);
	CHECK(number(b, "paired_half_width_pct") > 0.1);
	printf("+-0.1 %%: stopped after %g passes, %.1f s, half-width %.2f %%\n", number(b, "runs_taken"),
	       number(b, "seconds"), number(b, "paired_half_width_pct"));
	cJSON_Delete(r);
}

static void test_bad_options(void)
{
	static const char *argv[] = {"/bin/true", NULL};
	struct measure_program p[] = {{"a", {.argv = argv}, NULL}};
	struct measure_options o = {.runs = 10,
				    .timeout_ms = 1000,
				    .paired_precision = 0.01,
				    .max_seconds = 1,
				    .paired_count = 1};
	cJSON *r = NULL;

	CHECK_EQ_INT(measure_warm(p, 1, &o, &r), LL_EINVAL); /* not adaptive */
	o.auto_runs = true;
	o.precision = 0.01;
	o.max_seconds = 0;
	CHECK_EQ_INT(measure_warm(p, 1, &o, &r), LL_EINVAL); /* no time limit */
	o.max_seconds = 1;
	o.paired_count = 2;
	CHECK_EQ_INT(measure_warm(p, 1, &o, &r), LL_EINVAL); /* more variants than programs */
	CHECK(r == NULL);
}

int main(void)
{
	test_bad_options();
	test_stops_when_precise();
	test_runs_until_the_time_is_spent();
	return check_finish();
}
