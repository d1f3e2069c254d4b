/* Cron expressions (cron.h): parsing, and next fire times against a table
 * of answers worked out by hand from the calendar. */
#include "check.h"
#include "schedules/cron.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <string.h>

/* Seconds since the epoch of "Y-M-D h:m" UTC. */
static long long utc(long long y, int m, int d, int h, int mi)
{
	return (cron_days_from_civil(y, m, d) * 1440 + h * 60 + mi) * 60;
}

struct case_next {
	const char *expr;
	long long after[5]; /* y, m, d, h, mi */
	long long expect[5];
};

static const struct case_next next_cases[] = {
	/* every minute: strictly after, at whole minutes */
	{"* * * * *", {2024, 1, 1, 0, 0}, {2024, 1, 1, 0, 1}},
	{"* * * * *", {2023, 12, 31, 23, 59}, {2024, 1, 1, 0, 0}},
	/* fixed times */
	{"30 4 * * *", {2024, 3, 10, 4, 29}, {2024, 3, 10, 4, 30}},
	{"30 4 * * *", {2024, 3, 10, 4, 30}, {2024, 3, 11, 4, 30}},
	{"0 0 * * *", {2024, 12, 31, 12, 0}, {2025, 1, 1, 0, 0}},
	/* ranges */
	{"10-12 * * * *", {2024, 5, 5, 7, 11}, {2024, 5, 5, 7, 12}},
	{"10-12 * * * *", {2024, 5, 5, 7, 12}, {2024, 5, 5, 8, 10}},
	{"0 9-17 * * *", {2024, 5, 5, 17, 0}, {2024, 5, 6, 9, 0}},
	/* steps */
	{"*/15 * * * *", {2024, 5, 5, 7, 14}, {2024, 5, 5, 7, 15}},
	{"*/15 * * * *", {2024, 5, 5, 7, 45}, {2024, 5, 5, 8, 0}},
	{"5/20 * * * *", {2024, 5, 5, 7, 26}, {2024, 5, 5, 7, 45}},
	{"0 1-10/3 * * *", {2024, 5, 5, 4, 0}, {2024, 5, 5, 7, 0}},
	{"0 1-10/3 * * *", {2024, 5, 5, 10, 0}, {2024, 5, 6, 1, 0}},
	/* lists */
	{"0,30 8,20 * * *", {2024, 5, 5, 8, 30}, {2024, 5, 5, 20, 0}},
	{"0,30 8,20 * * *", {2024, 5, 5, 20, 30}, {2024, 5, 6, 8, 0}},
	{"1,2,5-7/2 0 * * *", {2024, 5, 5, 0, 2}, {2024, 5, 5, 0, 5}},
	/* month ends */
	{"0 0 31 * *", {2024, 1, 31, 0, 0}, {2024, 3, 31, 0, 0}}, /* skips February */
	{"0 0 31 * *", {2024, 3, 31, 0, 0}, {2024, 5, 31, 0, 0}}, /* skips April */
	{"0 0 31 * *", {2024, 7, 31, 0, 0}, {2024, 8, 31, 0, 0}},
	{"0 0 31 * *", {2024, 8, 31, 0, 0}, {2024, 10, 31, 0, 0}},
	{"0 0 30 * *", {2024, 1, 30, 0, 0}, {2024, 3, 30, 0, 0}},
	{"59 23 30 4 *", {2024, 4, 30, 23, 58}, {2024, 4, 30, 23, 59}},
	/* Feb 29 only in leap years; 2100 is not one, 2000 was */
	{"0 12 29 2 *", {2024, 3, 1, 0, 0}, {2028, 2, 29, 12, 0}},
	{"0 12 29 2 *", {2096, 3, 1, 0, 0}, {2104, 2, 29, 12, 0}},
	{"0 12 29 2 *", {1999, 1, 1, 0, 0}, {2000, 2, 29, 12, 0}},
	{"0 0 28 2 *", {2023, 2, 28, 0, 0}, {2024, 2, 28, 0, 0}},
	{"0 0 1 3 *", {2024, 2, 28, 0, 0}, {2024, 3, 1, 0, 0}},
	/* names */
	{"0 6 * jan,jul mon", {2024, 1, 1, 6, 0}, {2024, 1, 8, 6, 0}}, /* 2024-01-01 is a Monday */
	{"0 6 * * mon-fri", {2024, 5, 3, 6, 0}, {2024, 5, 6, 6, 0}},   /* Friday -> Monday */
	{"0 6 * * SAT", {2024, 5, 3, 6, 0}, {2024, 5, 4, 6, 0}},
	{"0 0 1 DEC *", {2024, 5, 3, 6, 0}, {2024, 12, 1, 0, 0}},
	/* day of week: 0 and 7 are Sunday */
	{"0 0 * * 0", {2024, 5, 1, 0, 0}, {2024, 5, 5, 0, 0}},
	{"0 0 * * 7", {2024, 5, 1, 0, 0}, {2024, 5, 5, 0, 0}},
	/* Vixie OR rule: both restricted -> either matches */
	{"0 0 13 * 5", {2024, 9, 1, 0, 0}, {2024, 9, 6, 0, 0}}, /* Friday 6th comes before the 13th */
	{"0 0 13 * 5", {2024, 9, 6, 0, 0}, {2024, 9, 13, 0, 0}},
	{"0 0 1 * 1", {2024, 5, 28, 0, 0}, {2024, 6, 1, 0, 0}}, /* the 1st (a Saturday) */
	/* one restricted with '*' in the other: AND (the star matches all) */
	{"0 0 13 * *", {2024, 9, 1, 0, 0}, {2024, 9, 13, 0, 0}},
	{"0 0 * * 5", {2024, 9, 7, 0, 0}, {2024, 9, 13, 0, 0}},
	/* a '*' with a step still counts as '*' for the rule (Vixie): AND, so
	 * a Monday that is the 1st, 11th, 21st or 31st */
	{"0 0 */10 * 1", {2024, 9, 1, 0, 0}, {2024, 10, 21, 0, 0}},
	{"0 0 */10 * 1", {2024, 10, 21, 0, 0}, {2024, 11, 11, 0, 0}},
	/* before 1970 */
	{"0 0 1 1 *", {1969, 6, 1, 0, 0}, {1970, 1, 1, 0, 0}},
};

static void test_next_table(void)
{
	for (size_t i = 0; i < sizeof(next_cases) / sizeof(next_cases[0]); i++) {
		const struct case_next *c = &next_cases[i];
		struct cron_expr e;
		long long got = 0, want = utc(c->expect[0], (int)c->expect[1], (int)c->expect[2],
					      (int)c->expect[3], (int)c->expect[4]);
		int rc = cron_parse(c->expr, &e);
		if (rc < 0)
			fprintf(stderr, "case %zu '%s': %s\n", i, c->expr, err_message(rc));
		CHECK_EQ_INT(rc, 0);
		CHECK_EQ_INT(cron_next(&e,
				       utc(c->after[0], (int)c->after[1], (int)c->after[2], (int)c->after[3],
					   (int)c->after[4]),
				       &got),
			     0);
		if (got != want)
			fprintf(stderr, "case %zu '%s': got %lld want %lld\n", i, c->expr, got, want);
		CHECK_EQ_INT(got, want);
	}
}

static void test_seconds_inside_a_minute(void)
{
	struct cron_expr e;
	long long got;

	CHECK_EQ_INT(cron_parse("* * * * *", &e), 0);
	CHECK_EQ_INT(cron_next(&e, utc(2024, 1, 1, 0, 0) + 59, &got), 0);
	CHECK_EQ_INT(got, utc(2024, 1, 1, 0, 1));
	CHECK_EQ_INT(cron_next(&e, utc(2024, 1, 1, 0, 0) - 1, &got), 0);
	CHECK_EQ_INT(got, utc(2024, 1, 1, 0, 0));
}

/* Every minute of a leap year from a fixed walk: "0 0 * * *" fires 366 times. */
static void test_walk_counts(void)
{
	struct cron_expr e;
	long long t = utc(2024, 1, 1, 0, 0) - 60, end = utc(2025, 1, 1, 0, 0);
	int n = 0;

	CHECK_EQ_INT(cron_parse("0 0 * * *", &e), 0);
	while (cron_next(&e, t, &t) == 0 && t < end)
		n++;
	CHECK_EQ_INT(n, 366);

	CHECK_EQ_INT(cron_parse("0 0 31 * *", &e), 0);
	t = utc(2024, 1, 1, 0, 0) - 60, n = 0;
	while (cron_next(&e, t, &t) == 0 && t < end)
		n++;
	CHECK_EQ_INT(n, 7); /* Jan Mar May Jul Aug Oct Dec */

	CHECK_EQ_INT(cron_parse("*/7 * * * *", &e), 0);
	t = utc(2024, 1, 1, 0, 0) - 60, n = 0;
	while (cron_next(&e, t, &t) == 0 && t < utc(2024, 1, 1, 1, 0))
		n++;
	CHECK_EQ_INT(n, 9); /* 0 7 14 21 28 35 42 49 56 */
}

static void test_parse_errors(void)
{
	static const char *const bad[] = {
		"",
		"* * * *",
		"* * * * * *",
		"60 * * * *",
		"* 24 * * *",
		"* * 0 * *",
		"* * 32 * *",
		"* * * 13 *",
		"* * * * 8",
		"5-1 * * * *",
		"*/0 * * * *",
		"*/ * * * *",
		"a * * * *",
		"1,,2 * * * *",
		"1- * * * *",
		"* * * foo *",
		"* * * * mon-",
		"0 0 30 2 *",
		"0 0 31 4,6 *",
		"1.5 * * * *",
		"* * * janu *",
	};
	struct cron_expr e = {0}, untouched;

	memset(&untouched, 0, sizeof(untouched));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = cron_parse(bad[i], &e);
		if (rc != LL_EINVAL)
			fprintf(stderr, "'%s' was accepted\n", bad[i]);
		CHECK_EQ_INT(rc, LL_EINVAL);
		CHECK(memcmp(&e, &untouched, sizeof(e)) == 0);
	}
	/* 0 0 31 2 * never fires; 0 0 29 2 * does (leap years) */
	CHECK_EQ_INT(cron_parse("0 0 29 2 *", &e), 0);
	CHECK_EQ_INT(cron_parse("  0   0 * *   *  ", &e), 0);
}

static void test_calendar(void)
{
	long long y;
	int m, d;

	CHECK_EQ_INT(cron_days_from_civil(1970, 1, 1), 0);
	CHECK_EQ_INT(cron_days_from_civil(2000, 3, 1), 11017);
	CHECK_EQ_INT(cron_days_from_civil(1969, 12, 31), -1);
	for (long long day = -800000; day < 800000; day += 997) {
		cron_civil_from_days(day, &y, &m, &d);
		CHECK_EQ_INT(cron_days_from_civil(y, m, d), day);
	}
}

int main(void)
{
	test_next_table();
	test_seconds_inside_a_minute();
	test_walk_counts();
	test_parse_errors();
	test_calendar();
	return check_finish();
}
