/* Cron expressions: see cron.h. */
#include "cron.h"

#include "loadlab/err.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct cron_field {
	const char *what;
	int min, max;
	const char *const *names; /* names[i] is value min + i, or NULL */
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
					  "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const weekday_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

static const struct cron_field fields[5] = {
	{"minute", 0, 59, NULL},
	{"hour", 0, 23, NULL},
	{"day of month", 1, 31, NULL},
	{"month", 1, 12, month_names},
	{"day of week", 0, 7, weekday_names},
};

/* A number or a name at *P; advances *P. */
static int parse_value(const struct cron_field *f, const char **p, int *ret)
{
	const char *s = *p;

	if (isdigit((unsigned char)*s)) {
		long v = 0;
		while (isdigit((unsigned char)*s)) {
			v = v * 10 + (*s++ - '0');
			if (v > 1000)
				break;
		}
		if (v < f->min || v > f->max)
			return err_set(LL_EINVAL, "Cron %s %ld is out of range %d-%d.", f->what, v, f->min,
				       f->max);
		*ret = (int)v;
		*p = s;
		return 0;
	}
	for (int i = 0; f->names && f->names[i]; i++)
		if (strncasecmp(s, f->names[i], 3) == 0 && !isalpha((unsigned char)s[3])) {
			*ret = f->min + i;
			*p = s + 3;
			return 0;
		}
	return err_set(LL_EINVAL, "Cron %s has an unexpected '%.8s'.", f->what, s);
}

/* One field's text (no spaces) into the bit set *RET_BITS. */
static int parse_field(const struct cron_field *f, const char *text, uint64_t *ret_bits)
{
	const char *p = text;
	uint64_t bits = 0;
	int rc;

	for (;;) {
		int lo, hi, step = 1;
		if (*p == '*') {
			lo = f->min;
			hi = f->max;
			p++;
		} else {
			if ((rc = parse_value(f, &p, &lo)) < 0)
				return rc;
			hi = lo;
			if (*p == '-') {
				p++;
				if ((rc = parse_value(f, &p, &hi)) < 0)
					return rc;
				if (hi < lo)
					return err_set(LL_EINVAL, "Cron %s range %d-%d is backwards.",
						       f->what, lo, hi);
			} else if (*p == '/') {
				hi = f->max;
			}
		}
		if (*p == '/') {
			long v = 0;
			p++;
			if (!isdigit((unsigned char)*p))
				return err_set(LL_EINVAL, "Cron %s step must be a number.", f->what);
			while (isdigit((unsigned char)*p) && v <= 1000)
				v = v * 10 + (*p++ - '0');
			if (v < 1 || v > f->max)
				return err_set(LL_EINVAL, "Cron %s step %ld is out of range 1-%d.", f->what,
					       v, f->max);
			step = (int)v;
		}
		for (int v = lo; v <= hi; v += step)
			bits |= 1ULL << v;
		if (*p == '\0')
			break;
		if (*p != ',')
			return err_set(LL_EINVAL, "Cron %s has an unexpected '%.8s'.", f->what, p);
		p++;
	}
	*ret_bits = bits;
	return 0;
}

int cron_parse(const char *text, struct cron_expr *ret_expr)
{
	struct cron_expr e = {0};
	char copy[CRON_MAX_TEXT + 1], *parts[5], *save = NULL, *tok;
	uint64_t bits[5];
	long long next;
	int n = 0, rc;

	if (!text || strlen(text) > CRON_MAX_TEXT)
		return err_set(LL_EINVAL, "A cron expression is 1 to %d characters.", CRON_MAX_TEXT);
	snprintf(copy, sizeof(copy), "%s", text);
	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n == 5)
			return err_set(LL_EINVAL, "A cron expression has five fields, '%s' has more.", text);
		parts[n++] = tok;
	}
	if (n != 5)
		return err_set(LL_EINVAL,
			       "A cron expression has five fields (minute hour day month weekday), "
			       "'%s' has %d.",
			       text, n);
	for (int i = 0; i < 5; i++)
		if ((rc = parse_field(&fields[i], parts[i], &bits[i])) < 0)
			return rc;
	e.minutes = bits[0];
	e.hours = (uint32_t)bits[1];
	e.days = (uint32_t)bits[2];
	e.months = (uint32_t)bits[3];
	e.weekdays = (uint32_t)((bits[4] | (bits[4] >> 7)) & 0x7f); /* 7 is Sunday */
	e.days_star = parts[2][0] == '*';
	e.weekdays_star = parts[4][0] == '*';
	if (cron_next(&e, 0, &next) < 0)
		return err_set(LL_EINVAL, "Cron expression '%s' never fires.", text);
	*ret_expr = e;
	return 0;
}

/* H. Hinnant, "chrono-Compatible Low-Level Date Algorithms", days_from_civil. */
long long cron_days_from_civil(long long y, int m, int d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The same paper, civil_from_days. */
void cron_civil_from_days(long long z, long long *ret_y, int *ret_m, int *ret_d)
{
	long long era, doe, yoe, y, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*ret_d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*ret_m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*ret_y = y + (*ret_m <= 2);
}

static long long floor_div(long long a, long long b)
{
	return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

static bool day_matches(const struct cron_expr *e, int day, int weekday)
{
	bool dom = (e->days >> day) & 1, dow = (e->weekdays >> weekday) & 1;

	if (e->days_star || e->weekdays_star)
		return dom && dow;
	return dom || dow;
}

int cron_next(const struct cron_expr *e, long long after_s, long long *ret_s)
{
	long long minute = floor_div(after_s, 60) + 1; /* strictly after, at a whole minute */
	long long day = floor_div(minute, 1440);
	int start = (int)(minute - day * 1440); /* minute of the first day to look at */

	for (long long limit = day + 146097 + 1; day < limit; day++, start = 0) {
		long long y;
		int m, d, weekday = (int)(((day % 7) + 7 + 4) % 7); /* 1970-01-01 was a Thursday */
		cron_civil_from_days(day, &y, &m, &d);
		if (!((e->months >> m) & 1) || !day_matches(e, d, weekday))
			continue;
		for (int t = start; t < 1440; t++) {
			int h = t / 60, mi = t % 60;
			if (!((e->hours >> h) & 1)) {
				t = h * 60 + 59;
				continue;
			}
			if ((e->minutes >> mi) & 1) {
				*ret_s = (day * 1440 + t) * 60;
				return 0;
			}
		}
	}
	return err_set(LL_ENOTFOUND, "The cron expression never fires.");
}
