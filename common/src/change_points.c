/* E-Divisive means with a Student-t test over a history: see change_points.h. */
#include "loadlab/change_points.h"

#include "loadlab/err.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void change_points_options_default(struct change_points_options *ret)
{
	ret->window = CHANGE_POINTS_DEFAULT_WINDOW;
	ret->max_p_value = CHANGE_POINTS_DEFAULT_MAX_P_VALUE;
	ret->min_magnitude = CHANGE_POINTS_DEFAULT_MIN_MAGNITUDE;
}

/* The continued fraction of the regularized incomplete beta function
 * (modified Lentz; Press et al., Numerical Recipes, 6.4). */
static double beta_fraction(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2)), delta;
		d = 1 + aa * d;
		d = fabs(d) < tiny ? 1 / tiny : 1 / d;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + aa * d;
		d = fabs(d) < tiny ? 1 / tiny : 1 / d;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		delta = d * c;
		h *= delta;
		if (fabs(delta - 1) < 1e-15)
			break;
	}
	return h;
}

/* I_x(a, b), the regularized incomplete beta function. */
static double incomplete_beta(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_fraction(a, b, x) / a;
	return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double change_points_t_p_value(double t_value, double df)
{
	if (!isfinite(t_value))
		return 0;
	return incomplete_beta(df / 2, 0.5, df / (df + t_value * t_value));
}

/* The t with P(|T| >= t) = P for DF degrees of freedom, by bisection. */
static double t_quantile_two_sided(double p, double df)
{
	double lo = 0, hi = 1;

	while (change_points_t_p_value(hi, df) > p && hi < 1e12)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;
		if (change_points_t_p_value(mid, df) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

static void mean_and_squares(const double *x, size_t from, size_t to, double *ret_mean, double *ret_ss)
{
	double mean = 0, ss = 0;

	for (size_t i = from; i < to; i++)
		mean += x[i];
	mean /= (double)(to - from);
	for (size_t i = from; i < to; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	*ret_mean = mean;
	*ret_ss = ss;
}

int change_points_compare(const double *logs, size_t start, size_t index, size_t end,
			  struct change_point *ret)
{
	struct change_point cp = {0};
	double ss_before, ss_after, df, diff, half = 0;

	if (!logs || !(start < index && index < end))
		return err_set(LL_EINVAL, "A split needs points on both sides.");
	cp.index = index;
	cp.n_before = index - start;
	cp.n_after = end - index;
	mean_and_squares(logs, start, index, &cp.mean_before, &ss_before);
	mean_and_squares(logs, index, end, &cp.mean_after, &ss_after);
	diff = cp.mean_after - cp.mean_before;
	df = (double)(cp.n_before + cp.n_after) - 2;
	if (df < 1) {
		cp.p_value = 1; /* one point on each side: nothing to test */
		cp.ci_low = -1;
		cp.ci_high = INFINITY;
	} else {
		double se = sqrt((ss_before + ss_after) / df *
				 (1.0 / (double)cp.n_before + 1.0 / (double)cp.n_after));
		if (se > 0) {
			cp.p_value = change_points_t_p_value(diff / se, df);
			half = t_quantile_two_sided(0.05, df) * se;
		} else {
			cp.p_value = diff == 0 ? 1 : 0;
		}
		cp.ci_low = expm1(diff - half);
		cp.ci_high = expm1(diff + half);
	}
	cp.magnitude = expm1(diff);
	*ret = cp;
	return 0;
}

/* The best split of LOGS[A..B) by E-Divisive's q (change_points.h, step
 * 1), with at least two points each side: its index, or 0 when the
 * segment is too short. SUMS: room for 2 (B - A + 1) doubles. */
static size_t best_split(const double *logs, size_t a, size_t b, double *sums, double *ret_q)
{
	size_t len = b - a, best = 0;
	double *left = sums, *right = sums + len + 1, best_q = -INFINITY;

	if (len < 4)
		return 0;
	/* left[k]: sum |x_i - x_j| within [a, a+k); right[k]: within [a+k, b) */
	left[0] = left[1] = 0;
	for (size_t k = 1; k < len; k++) {
		double s = 0;
		for (size_t i = a; i < a + k; i++)
			s += fabs(logs[a + k] - logs[i]);
		left[k + 1] = left[k] + s;
	}
	right[len] = right[len - 1] = 0;
	for (size_t k = len - 1; k-- > 0;) {
		double s = 0;
		for (size_t j = a + k + 1; j < b; j++)
			s += fabs(logs[a + k] - logs[j]);
		right[k] = right[k + 1] + s;
	}
	for (size_t k = 2; k + 2 <= len; k++) {
		double n1 = (double)k, n2 = (double)(len - k);
		double cross = left[len] - left[k] - right[k];
		double q = n1 * n2 / (n1 + n2) *
			   (2 * cross / (n1 * n2) - 2 * left[k] / (n1 * (n1 - 1)) -
			    2 * right[k] / (n2 * (n2 - 1)));
		if (q > best_q) {
			best_q = q;
			best = a + k;
		}
	}
	*ret_q = best_q;
	return best;
}

static void insert_sorted(size_t *list, size_t *count, size_t value)
{
	size_t i = *count;

	while (i > 0 && list[i - 1] > value) {
		list[i] = list[i - 1];
		i--;
	}
	list[i] = value;
	(*count)++;
}

/* E-Divisive over LOGS[FROM..TO) at P_VALUE: appends the change points it
 * finds to FOUND (sorted within this window). */
static void divisive(const double *logs, size_t from, size_t to, double p_value, double *sums, size_t *bounds,
		     size_t *found, size_t *found_count)
{
	size_t nb = 2;

	bounds[0] = from;
	bounds[1] = to;
	for (;;) {
		size_t best = 0, seg_a = 0, seg_b = 0;
		double best_q = -INFINITY;
		struct change_point cp;
		for (size_t s = 0; s + 1 < nb; s++) {
			double q;
			size_t at = best_split(logs, bounds[s], bounds[s + 1], sums, &q);
			if (at && q > best_q) {
				best_q = q;
				best = at;
				seg_a = bounds[s];
				seg_b = bounds[s + 1];
			}
		}
		if (!best)
			return;
		change_points_compare(logs, seg_a, best, seg_b, &cp);
		if (cp.p_value > p_value)
			return;
		insert_sorted(bounds, &nb, best);
		found[(*found_count)++] = best;
	}
}

/* Step 3: tests every change point between its neighbours and removes the
 * weakest failing one until none fails. Returns the count kept. */
static size_t confirm(const double *logs, size_t n, size_t *idx, size_t count,
		      const struct change_points_options *o, struct change_point *out)
{
	for (;;) {
		size_t weakest = count;
		for (size_t i = 0; i < count; i++) {
			size_t start = i ? idx[i - 1] : 0, end = i + 1 < count ? idx[i + 1] : n;
			bool fails;
			change_points_compare(logs, start, idx[i], end, &out[i]);
			fails = out[i].p_value > o->max_p_value || fabs(out[i].magnitude) < o->min_magnitude;
			if (fails && (weakest == count || out[i].p_value > out[weakest].p_value ||
				      (out[i].p_value == out[weakest].p_value &&
				       fabs(out[i].magnitude) < fabs(out[weakest].magnitude))))
				weakest = i;
		}
		if (weakest == count)
			return count;
		memmove(idx + weakest, idx + weakest + 1, (count - weakest - 1) * sizeof(*idx));
		count--;
	}
}

int change_points_find(const double *values, size_t n, const struct change_points_options *options,
		       struct change_point *ret_points, size_t *ret_count)
{
	struct change_points_options o;
	double *logs = NULL, *sums = NULL, first_p;
	size_t *found = NULL, *bounds = NULL, count = 0, step, start = 0;
	struct change_point *out = NULL;
	int rc = 0;

	if (options)
		o = *options;
	else
		change_points_options_default(&o);
	if (!values || !ret_points || !ret_count || n > CHANGE_POINTS_MAX_POINTS)
		return err_set(LL_EINVAL, "A history has at most %d points.", CHANGE_POINTS_MAX_POINTS);
	if (o.window < CHANGE_POINTS_MIN_WINDOW || o.window > CHANGE_POINTS_MAX_WINDOW ||
	    !(o.max_p_value > 0 && o.max_p_value < 1) || !(o.min_magnitude >= 0 && o.min_magnitude < 10))
		return err_set(LL_EINVAL,
			       "The change-point window is %d..%d points, the p-value in (0, 1), the"
			       " magnitude in [0, 10).",
			       CHANGE_POINTS_MIN_WINDOW, CHANGE_POINTS_MAX_WINDOW);
	for (size_t i = 0; i < n; i++)
		if (!isfinite(values[i]) || values[i] <= 0)
			return err_set(LL_EINVAL, "Point %zu of the history is not a positive number.", i);
	if (n < 4) {
		*ret_count = 0;
		return 0;
	}
	logs = malloc(n * sizeof(*logs));
	sums = malloc(2 * (o.window + 1) * sizeof(*sums));
	found = malloc(n * sizeof(*found));
	bounds = malloc((o.window + 2) * sizeof(*bounds));
	out = malloc(n * sizeof(*out));
	if (!logs || !sums || !found || !bounds || !out) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto done;
	}
	for (size_t i = 0; i < n; i++)
		logs[i] = log(values[i]);
	first_p = o.max_p_value < 0.05  ? o.max_p_value * 10
		  : o.max_p_value < 0.5 ? o.max_p_value * 2
					: o.max_p_value;
	step = o.window / 2;
	while (start < n) {
		size_t end = start + o.window < n ? start + o.window : n, before = count, last = 0;
		divisive(logs, start, end, first_p, sums, bounds, found, &count);
		for (size_t i = before; i < count; i++)
			if (found[i] > last)
				last = found[i];
		start = last > start + step ? last : start + step;
	}
	/* the windows' finds in index order, each once */
	for (size_t i = 1; i < count; i++)
		for (size_t j = i; j > 0 && found[j - 1] > found[j]; j--) {
			size_t t = found[j];
			found[j] = found[j - 1];
			found[j - 1] = t;
		}
	{
		size_t kept = 0;
		for (size_t i = 0; i < count; i++)
			if (!kept || found[kept - 1] != found[i])
				found[kept++] = found[i];
		count = kept;
	}
	count = confirm(logs, n, found, count, &o, out);
	memcpy(ret_points, out, count * sizeof(*out));
	*ret_count = count;
done:
	free(logs);
	free(sums);
	free(found);
	free(bounds);
	free(out);
	return rc;
}
