/* change_points.h: the change points of histories with known steps, an
 * A/A history, the magnitude filter and bad input, against values worked
 * out independently by tests/integration/change_points_reference.py
 * (Student's t tail integrated numerically there) on the same data. */
#include "check.h"

#include "loadlab/change_points.h"

#include <math.h>
#include <stdint.h>

/* The history the Python reference draws too: LEVELS[i] times
 * 1 + AMP (u - 0.5), u from the ANSI C LCG seeded with SEED. */
static void lcg_series(const double *levels, size_t n, double amp, uint64_t seed, double *out)
{
	uint64_t x = seed;

	for (size_t i = 0; i < n; i++) {
		x = (x * 1103515245ULL + 12345ULL) % (1ULL << 31);
		out[i] = levels[i] * (1 + amp * ((double)x / (double)(1ULL << 31) - 0.5));
	}
}

static int close_to(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b);
}

static void test_t_distribution(void)
{
	CHECK(close_to(change_points_t_p_value(2.0, 10), 0.07338803477074052, 1e-9));
	CHECK(close_to(change_points_t_p_value(-5.0, 3), 0.015392438073302287, 1e-9));
	CHECK(close_to(change_points_t_p_value(30.0, 50), 1.2380022797163247e-33, 1e-6));
	CHECK(change_points_t_p_value(0, 4) == 1);
}

/* +5 % at 30 and -8 % at 55 of 80 points with +-0.5 % noise. */
static void test_two_steps(void)
{
	double levels[80], v[80];
	struct change_point cp[80];
	size_t n = 0;

	for (int i = 0; i < 80; i++)
		levels[i] = i < 30 ? 1.0 : i < 55 ? 1.05 : 1.05 * 0.92;
	lcg_series(levels, 80, 0.01, 12345, v);
	CHECK_EQ_INT(change_points_find(v, 80, NULL, cp, &n), 0);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(cp[0].index, 30);
	CHECK_EQ_INT(cp[0].n_before, 30);
	CHECK_EQ_INT(cp[0].n_after, 25);
	CHECK(close_to(cp[0].magnitude, 0.050019315548492135, 1e-9));
	CHECK(close_to(cp[0].ci_low, 0.048532621182758355, 1e-6));
	CHECK(close_to(cp[0].ci_high, 0.05150811786975581, 1e-6));
	CHECK(close_to(cp[0].p_value, 1.3061558112198763e-53, 1e-4));
	CHECK_EQ_INT(cp[1].index, 55);
	CHECK_EQ_INT(cp[1].n_before, 25);
	CHECK(close_to(cp[1].magnitude, -0.0810169775322, 1e-9));
	CHECK(close_to(cp[1].ci_low, -0.08247528556827048, 1e-6));
	CHECK(close_to(cp[1].ci_high, -0.07955635167046812, 1e-6));
	CHECK(close_to(cp[1].p_value, 9.174385285583824e-59, 1e-4));
}

static void test_none_and_filters(void)
{
	double levels[80], v[80];
	struct change_point cp[80];
	struct change_points_options o;
	size_t n = 99;

	for (int i = 0; i < 80; i++)
		levels[i] = 1.0;
	lcg_series(levels, 80, 0.01, 777, v);
	CHECK_EQ_INT(change_points_find(v, 80, NULL, cp, &n), 0);
	CHECK_EQ_INT(n, 0);
	change_points_options_default(&o);
	o.min_magnitude = 0;
	CHECK_EQ_INT(change_points_find(v, 80, &o, cp, &n), 0);
	CHECK_EQ_INT(n, 0);

	/* +0.5 %: found with no minimum magnitude, dropped at the 1 % default */
	for (int i = 0; i < 40; i++)
		levels[i] = i < 20 ? 1.0 : 1.005;
	lcg_series(levels, 40, 0.002, 99, v);
	CHECK_EQ_INT(change_points_find(v, 40, &o, cp, &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(cp[0].index, 20);
	CHECK(close_to(cp[0].magnitude, 0.004946806327886498, 1e-9));
	CHECK(close_to(cp[0].p_value, 1.9656152526939875e-27, 1e-4));
	CHECK_EQ_INT(change_points_find(v, 40, NULL, cp, &n), 0);
	CHECK_EQ_INT(n, 0);

	/* the smallest window */
	for (int i = 0; i < 12; i++)
		levels[i] = i < 6 ? 1.0 : 1.2;
	lcg_series(levels, 12, 0.01, 5, v);
	o.window = 6;
	o.min_magnitude = CHANGE_POINTS_DEFAULT_MIN_MAGNITUDE;
	CHECK_EQ_INT(change_points_find(v, 12, &o, cp, &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(cp[0].index, 6);
	CHECK(close_to(cp[0].magnitude, 0.20241517474285764, 1e-9));
	CHECK(close_to(cp[0].ci_low, 0.19865950432272675, 1e-6));
	CHECK(close_to(cp[0].ci_high, 0.20618261252499062, 1e-6));

	/* too short to split, and constant */
	CHECK_EQ_INT(change_points_find(v, 3, NULL, cp, &n), 0);
	CHECK_EQ_INT(n, 0);
	for (int i = 0; i < 10; i++)
		v[i] = 5;
	CHECK_EQ_INT(change_points_find(v, 10, NULL, cp, &n), 0);
	CHECK_EQ_INT(n, 0);
}

static void test_bad_input(void)
{
	double v[8] = {1, 1, 1, 1, 2, 2, 2, 2};
	struct change_point cp[8];
	struct change_points_options o;
	size_t n = 42;

	v[3] = 0;
	CHECK(change_points_find(v, 8, NULL, cp, &n) < 0);
	v[3] = NAN;
	CHECK(change_points_find(v, 8, NULL, cp, &n) < 0);
	v[3] = 1;
	CHECK(change_points_find(v, CHANGE_POINTS_MAX_POINTS + 1, NULL, cp, &n) < 0);
	change_points_options_default(&o);
	o.window = CHANGE_POINTS_MIN_WINDOW - 1;
	CHECK(change_points_find(v, 8, &o, cp, &n) < 0);
	change_points_options_default(&o);
	o.max_p_value = 1;
	CHECK(change_points_find(v, 8, &o, cp, &n) < 0);
	change_points_options_default(&o);
	o.min_magnitude = -0.1;
	CHECK(change_points_find(v, 8, &o, cp, &n) < 0);
	CHECK_EQ_INT(n, 42); /* untouched on failure */
	CHECK(change_points_compare(v, 2, 2, 8, &cp[0]) < 0);
}

int main(void)
{
	test_t_distribution();
	test_two_steps();
	test_none_and_filters();
	test_bad_input();
	return check_finish();
}
