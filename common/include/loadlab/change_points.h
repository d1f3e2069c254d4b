/*
 * change_points.h - where a history of jobs changed level: E-Divisive means
 * with a Student-t significance test, the method of Apache Otava (formerly
 * Hunter, MongoDB's signal processing).
 *
 * The input is one figure per job in job order (a load time, or its ratio
 * over the empty program), all positive; the detector works on their
 * logarithms, so a step is a relative change and its size does not depend
 * on the unit.
 *
 * How it finds them (docs/series.md, "Change points"):
 *
 *  1. E-Divisive (Matteson and James 2014, as MongoDB implements it): in a
 *     segment of the history, every split with at least two points on each
 *     side is scored by the divergence
 *       q(t) = n1 n2 / (n1 + n2) * (2/(n1 n2) sum|x-y|
 *              - 2/(n1(n1-1)) sum|x-x'| - 2/(n2(n2-1)) sum|y-y'|)
 *     (absolute differences of the logs across and within the two sides);
 *     of the best split of every segment the best one overall is tested
 *     with the two-sided Student t-test (pooled variance) of the segment's
 *     left part against its right part. A significant split becomes a
 *     change point and its segment is split; the first split that is not
 *     significant ends the search.
 *  2. Windows (Otava): the history is searched in windows of WINDOW points
 *     that overlap by half (a window starts at the last change point found
 *     or half a window further, whichever is later), at a first-pass
 *     p-value ten times MAX_P_VALUE (twice it when MAX_P_VALUE >= 0.05).
 *  3. Confirmation (Otava): each change point is tested again between its
 *     neighbours; while one has p > MAX_P_VALUE or a relative magnitude
 *     below MIN_MAGNITUDE, the weakest (largest p, then smallest magnitude)
 *     is removed and the others tested again.
 *
 * Conventions as stats.h: pure C (libm only), inputs never modified,
 * LL_EINVAL for bad input with outputs untouched.
 */
#ifndef LOADLAB_CHANGE_POINTS_H
#define LOADLAB_CHANGE_POINTS_H

#include <stddef.h>

/* The defaults (docs/series.md says why) and the bounds of the options. */
#define CHANGE_POINTS_DEFAULT_WINDOW 50
#define CHANGE_POINTS_DEFAULT_MAX_P_VALUE 0.001
#define CHANGE_POINTS_DEFAULT_MIN_MAGNITUDE 0.01
#define CHANGE_POINTS_MIN_WINDOW 6
#define CHANGE_POINTS_MAX_WINDOW 1000
#define CHANGE_POINTS_MAX_POINTS 10000

struct change_points_options {
	size_t window;        /* CHANGE_POINTS_MIN_WINDOW..CHANGE_POINTS_MAX_WINDOW */
	double max_p_value;   /* (0, 1) */
	double min_magnitude; /* [0, 10): |exp(after - before) - 1| at least this */
};

/* One change point: the history's level moves between point INDEX - 1 and
 * point INDEX. Before and after are the points between it and its
 * neighbouring change points (or the ends of the history). */
struct change_point {
	size_t index;                   /* 1..n-1: the first point of the new level */
	size_t n_before, n_after;       /* points on each side */
	double mean_before, mean_after; /* means of the logs */
	double magnitude;               /* exp(mean_after - mean_before) - 1 */
	double ci_low, ci_high;         /* its 95 % interval (Student t, pooled) */
	double p_value;                 /* two-sided Student t-test of the two sides */
};

/* The defaults above. */
void change_points_options_default(struct change_points_options *ret);

/* The change points of VALUES[0..N) (N <= CHANGE_POINTS_MAX_POINTS, every
 * value finite and > 0) with OPTIONS (NULL: the defaults), in index order,
 * into RET_POINTS (room for N entries); their count in *RET_COUNT. Fewer
 * than 4 points have none. Deterministic: no random draws. */
int change_points_find(const double *values, size_t n, const struct change_points_options *options,
		       struct change_point *ret_points, size_t *ret_count);

/* The t-test of LOGS[START..INDEX) against LOGS[INDEX..END) (START < INDEX
 * < END), the figures of one change point (step 3 above), into *RET. */
int change_points_compare(const double *logs, size_t start, size_t index, size_t end,
			  struct change_point *ret);

/* The two-sided p-value of Student's t with DF > 0 degrees of freedom:
 * P(|T| >= |T_VALUE|). */
double change_points_t_p_value(double t_value, double df);

#endif
