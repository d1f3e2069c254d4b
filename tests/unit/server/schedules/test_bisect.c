/* A bisection step's verdict (bisect_judge(), bisect.h) against a table
 * of intervals around the half-effect line. */
#include "check.h"
#include "schedules/bisect.h"

struct judge_case {
	double ratio, low, high, line;
	long long runs;
	int expect;
};

static const struct judge_case cases[] = {
	/* clear of the line: decided at any runs */
	{1.20, 1.15, 1.25, 1.10, 30, 1},
	{1.00, 0.97, 1.03, 1.10, 30, -1},
	/* straddling it: unsure until the last size, then the point decides */
	{1.09, 1.05, 1.14, 1.10, 30, 0},
	{1.09, 1.05, 1.14, 1.10, 120, 0},
	{1.09, 1.05, 1.14, 1.10, BISECT_MAX_RUNS, -1},
	{1.11, 1.05, 1.14, 1.10, BISECT_MAX_RUNS, 1},
	/* touching the line is not clear of it */
	{1.12, 1.10, 1.14, 1.10, 60, 0},
	{1.08, 1.06, 1.10, 1.10, 60, 0},
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct judge_case *c = &cases[i];
		CHECK_EQ_INT(bisect_judge(c->ratio, c->low, c->high, c->line, c->runs), c->expect);
	}
	return check_finish();
}
