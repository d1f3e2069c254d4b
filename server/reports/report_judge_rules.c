/* The one judge's rules (report_judge_rules.h). */
#include "report_judge_rules.h"

#include "report.h"

#include <math.h>

bool report_judge_per_sample(double p, double low, double high, double change_pct)
{
	return p < REPORT_ALPHA && (low > 1 || high < 1) && fabs(change_pct) >= REPORT_MIN_EFFECT_PCT;
}

bool report_judge_interval(double low, double high, double change_pct)
{
	return (low > 1 + REPORT_MIN_EFFECT || high < 1 - REPORT_MIN_EFFECT) &&
	       fabs(change_pct) >= REPORT_MIN_EFFECT_PCT;
}

double report_judge_detectable_pct(double low, double high, bool per_sample)
{
	const double least = log(1 + REPORT_MIN_EFFECT);
	double se, reach;

	if (!(low > 0) || !(high >= low) || !isfinite(high))
		return NAN;
	se = (log(high) - log(low)) / (2 * REPORT_Z95);
	reach = per_sample ? fmax(REPORT_Z95 * se, least) : least + REPORT_Z95 * se;
	return 100 * (exp(reach + REPORT_Z_POWER80 * se) - 1);
}
