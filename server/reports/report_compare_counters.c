/* Compare on the run counters: see report_compare_counters.h. */
#include "report_compare_counters.h"

#include "report_judge_rules.h"
#include "report_paired.h"

#include "loadlab/err.h"
#include "loadlab/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int report_counter_of(enum report_metric metric)
{
	return metric >= REPORT_METRIC_CPU && metric <= REPORT_METRIC_INSTRUCTIONS
		       ? (int)(metric - REPORT_METRIC_CPU)
		       : -1;
}

const char *report_counter_name(enum report_counter counter)
{
	return counter == REPORT_COUNTER_CPU      ? "cpu_us"
	       : counter == REPORT_COUNTER_FAULTS ? "faults"
						  : "instructions";
}

/* The agent's series NAME of COUNTERS (N values >= 0) into X, added to
 * it (X starts at 0); false, with *RET_WHY, when it was not counted. */
static bool add_series(const cJSON *counters, const char *name, size_t n, double *x, const char **ret_why)
{
	const cJSON *series = get(counters, name), *item;
	const char *why = string(get(counters, "not_counted"), name);
	size_t k = 0;

	if (!cJSON_IsArray(series)) {
		*ret_why = why ? why : "not counted in every run";
		return false;
	}
	cJSON_ArrayForEach(item, series) {
		if (k == n || !cJSON_IsNumber(item) || !(item->valuedouble >= 0) ||
		    !isfinite(item->valuedouble))
			break;
		x[k++] += item->valuedouble;
	}
	if (k != n || item) {
		*ret_why = "its counts do not give one number per timed run";
		return false;
	}
	return true;
}

int report_counter_series(const cJSON *warm, enum report_counter counter, size_t n, double **ret,
			  const char **ret_why)
{
	const cJSON *counters = get(warm, "run_counters");
	const char *reason = NULL;
	double *x;
	bool ok;

	*ret_why = NULL;
	if (!cJSON_IsObject(counters) || n == 0)
		return LL_ENOTFOUND;
	if (!(x = calloc(n, sizeof(*x)))) {
		*ret_why = "out of memory";
		return LL_ENOTFOUND;
	}
	switch (counter) {
	case REPORT_COUNTER_CPU:
		ok = add_series(counters, "cpu_user_us", n, x, &reason) &&
		     add_series(counters, "cpu_system_us", n, x, &reason);
		break;
	case REPORT_COUNTER_FAULTS:
		/* the split where the OS keeps it, else its total (Windows) */
		ok = add_series(counters, "minor_faults", n, x, &reason) &&
		     add_series(counters, "major_faults", n, x, &reason);
		if (!ok) {
			const char *total_why = NULL;
			memset(x, 0, n * sizeof(*x));
			ok = add_series(counters, "page_faults", n, x, &total_why);
		}
		break;
	default:
		ok = add_series(counters, "instructions", n, x, &reason);
		break;
	}
	if (!ok) {
		free(x);
		*ret_why = reason;
		return LL_ENOTFOUND;
	}
	*ret = x;
	return 0;
}

/* "not counted: WHY (SIDE)" into OUT. */
static const char *not_counted(const struct report_compare_variant *v, enum report_counter counter,
			       const char *side, char *out, size_t size)
{
	if (!v->has_counters)
		snprintf(out, size,
			 "not counted: the %s's result has no run counters (an agent before issue 40)", side);
	else
		snprintf(out, size, "not counted: %.*s (%s, %s)", (int)v->not_counted_len[counter],
			 v->not_counted[counter] ? v->not_counted[counter] : "", report_counter_name(counter),
			 side);
	return out;
}

/* V's counter C as a sample: with its rounds when ROUNDS. */
static struct stats_sample sample_of(const struct report_compare_variant *v, const double *x, bool rounds)
{
	return (struct stats_sample){x, v->n, rounds ? v->round_sizes : NULL, rounds ? v->rounds : 0};
}

/* Unpaired: the ratio of the sides' medians of X and Y and its interval. */
static int unpaired(const struct report_compare_variant *bv, const struct report_compare_variant *cv,
		    const double *x, const double *y, bool rounds, uint64_t seed, double *ret_base,
		    double *ret_cand, double *ret_low, double *ret_high)
{
	struct stats_sample sx = sample_of(bv, x, rounds), sy = sample_of(cv, y, rounds);

	if (stats_median(x, bv->n, ret_base) < 0 || stats_median(y, cv->n, ret_cand) < 0 || !(*ret_base > 0))
		return LL_EINVAL;
	return (rounds ? stats_bootstrap_contrast_ci(&sx, NULL, &sy, NULL, STATS_MEDIAN, 0.95,
						     REPORT_COMPARE_RESAMPLES, seed, ret_low, ret_high)
		       : report_bootstrap_ratio_ci(x, bv->n, y, cv->n, STATS_MEDIAN, 0.95,
						   REPORT_COMPARE_RESAMPLES, seed, false, ret_low,
						   ret_high)) < 0
		       ? LL_EINVAL
		       : 0;
}

/* "<name><suffix>" into OUT. */
static const char *field(enum report_counter counter, const char *suffix, char *out, size_t size)
{
	snprintf(out, size, "%s%s", counter == REPORT_COUNTER_CPU ? "cpu" : report_counter_name(counter),
		 suffix);
	return out;
}

void report_counter_figure(enum report_counter counter, const struct report_compare_variant *bv,
			   const struct report_compare_variant *cv, const struct report_compare_variant *bf,
			   const struct report_compare_variant *cf, bool rounds, uint64_t seed,
			   struct report_row *row, struct report_judge_figure *ret, char *why, size_t size)
{
	const double *x = bv->counter[counter], *y = cv->counter[counter];
	const double *xf = bf->counter[counter], *yf = cf->counter[counter];
	double base = 0, cand = 0, lo = 0, hi = 0;
	bool paired = false;
	char name[48];
	int rc = LL_ENOTFOUND;

	*ret = (struct report_judge_figure){.rc = LL_ENOTFOUND};
	if (!x || !y) {
		ret->reason = not_counted(!x ? bv : cv, counter, !x ? "baseline" : "candidate", why, size);
		return;
	}
	rounds = rounds && bv->rounds >= REPORT_MIN_ROUNDS && cv->rounds >= REPORT_MIN_ROUNDS;
	if (xf && yf)
		rc = report_paired_floor_ratio(&(struct report_paired_side){bv, bf, x, xf},
					       &(struct report_paired_side){cv, cf, y, yf}, rounds, seed,
					       &base, &cand, &lo, &hi);
	paired = rc == 0;
	if (rc == LL_ENOTFOUND)
		rc = unpaired(bv, cv, x, y, rounds, seed, &base, &cand, &lo, &hi);
	if (rc < 0) {
		ret->rc = LL_EINVAL;
		return;
	}
	*ret = (struct report_judge_figure){.base = base,
					    .cand = cand,
					    .change = (cand / base - 1) * 100,
					    .low = lo,
					    .high = hi,
					    .unit = paired ? "x_floor"
						    : counter == REPORT_COUNTER_CPU
							    ? "us"
							    : report_counter_name(counter)};
	ret->significant = report_judge_interval(lo, hi, ret->change);
	report_row_bool(row, field(counter, "_paired", name, sizeof(name)), paired);
	report_row_number(row, field(counter, "_ratio", name, sizeof(name)), round_to(cand / base, 0.0001));
	report_row_number(row, field(counter, "_ratio_ci_low", name, sizeof(name)), round_to(lo, 0.0001));
	report_row_number(row, field(counter, "_ratio_ci_high", name, sizeof(name)), round_to(hi, 0.0001));
	report_row_number(row, field(counter, "_change_pct", name, sizeof(name)),
			  round_to(ret->change, 0.01));
}

/* One counter's context into O: the sides' medians and their difference,
 * or why it was not counted; false on no memory. */
static bool context_of(const struct report_compare_variant *bv, const struct report_compare_variant *cv,
		       enum report_counter counter, cJSON *o)
{
	const double *x = bv->counter[counter], *y = cv->counter[counter];
	cJSON *c = cJSON_AddObjectToObject(o, report_counter_name(counter));
	double mx, my;
	char why[600];

	if (!c)
		return false;
	if (!x || !y || stats_median(x, bv->n, &mx) < 0 || stats_median(y, cv->n, &my) < 0) {
		not_counted(!x ? bv : cv, counter, !x ? "baseline" : "candidate", why, sizeof(why));
		return cJSON_AddStringToObject(c, "not_counted", why + strlen("not counted: ")) != NULL;
	}
	return cJSON_AddNumberToObject(c, "baseline", round_to(mx, 0.1)) &&
	       cJSON_AddNumberToObject(c, "candidate", round_to(my, 0.1)) &&
	       cJSON_AddNumberToObject(c, "delta", round_to(my - mx, 0.1)) &&
	       (mx > 0 ? cJSON_AddNumberToObject(c, "change_pct", round_to((my / mx - 1) * 100, 0.01))
		       : cJSON_AddNullToObject(c, "change_pct"));
}

void report_counter_context(const struct report_compare_variant *bv, const struct report_compare_variant *cv,
			    struct report_row *row)
{
	cJSON *o;

	if (!bv->has_counters && !cv->has_counters)
		return;
	if (!(o = cJSON_CreateObject())) {
		row->rc = row->rc ? row->rc : LL_ENOMEM;
		return;
	}
	for (int c = 0; c < REPORT_COUNTERS; c++)
		if (!context_of(bv, cv, (enum report_counter)c, o)) {
			cJSON_Delete(o);
			row->rc = row->rc ? row->rc : LL_ENOMEM;
			return;
		}
	report_row_item(row, "counters", o);
}
