/*
 * cron.h - five-field cron expressions in UTC, and their next fire time.
 *
 * Fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or
 * jan-dec), day of week (0-7, 0 and 7 both Sunday, or sun-sat). Each field
 * is a comma-separated list of "*", "N", "N-M", each optionally followed
 * by "/STEP"; "N/STEP" means N to the field's maximum by STEP. Names are
 * case-insensitive and may be used in ranges ("mon-fri").
 *
 * Day rule as in Vixie cron (crontab(5)): when both day of month and day
 * of week are restricted (neither field starts with '*'), a day matches
 * when EITHER matches; otherwise both must (the '*' one matches all).
 *
 * Pure functions: no clock, no time zone, no allocation.
 */
#ifndef LOADLAB_SERVER_CRON_H
#define LOADLAB_SERVER_CRON_H

#include <stdbool.h>
#include <stdint.h>

#define CRON_MAX_TEXT 256

struct cron_expr {
	uint64_t minutes; /* bit N: minute N */
	uint32_t hours;
	uint32_t days;      /* bit N: day of month N (1..31) */
	uint32_t months;    /* bit N: month N (1..12) */
	uint32_t weekdays;  /* bit N: day of week N (0..6, Sunday 0) */
	bool days_star;     /* the day-of-month field starts with '*' */
	bool weekdays_star; /* the day-of-week field starts with '*' */
};

/* Parses TEXT (at most CRON_MAX_TEXT bytes). LL_EINVAL with a message
 * naming the field for a bad expression, and for one that never fires
 * ("0 0 30 2 *"). *RET_EXPR is untouched on failure. */
int cron_parse(const char *text, struct cron_expr *ret_expr);

/* The first time strictly after AFTER_S (seconds since 1970-01-01 UTC,
 * may be negative) at which EXPR fires, at a whole minute. LL_ENOTFOUND
 * when there is none within 400 years (the Gregorian cycle). */
int cron_next(const struct cron_expr *expr, long long after_s, long long *ret_s);

/* Days since 1970-01-01 of the civil date Y-M-D (proleptic Gregorian),
 * and back. Exposed for tests. */
long long cron_days_from_civil(long long y, int m, int d);
void cron_civil_from_days(long long days, long long *ret_y, int *ret_m, int *ret_d);

#endif
