/* The one judge (report_judge.h): the rules, the metric a row is judged
 * by, the between-job term, and the verdict with the figures it used. */
#include "report_judge.h"

#include "report_int.h"

#include "loadlab/err.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Why a row has no figure of METRIC (its rc RC), for not_comparable. */
static const char *no_figure(enum report_metric metric, int rc, bool base_floor)
{
	switch (metric) {
	case REPORT_METRIC_MIN:
		return "the minimum's interval could not be drawn";
	case REPORT_METRIC_OVER_FLOOR:
	case REPORT_METRIC_FLOOR_RATIO:
		if (rc == LL_ENOTFOUND)
			return base_floor ? "the candidate has no floor samples"
					  : "the baseline has no floor samples";
		return metric == REPORT_METRIC_OVER_FLOOR ? "the baseline's median is not above its floor"
							  : "the floor ratio's interval could not be drawn";
	case REPORT_METRIC_CPU:
	case REPORT_METRIC_FAULTS:
	case REPORT_METRIC_INSTRUCTIONS:
		return "the counters' interval could not be drawn";
	default:
		return "the baseline's times are zero";
	}
}

/* "judged": the figures of the metric that judged, as V holds them. */
static cJSON *judged_json(const struct report_verdict *v)
{
	const bool ratio = strcmp(v->unit, "x_floor") == 0;
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddStringToObject(o, "metric", report_metric_name(v->metric)) ||
	    !cJSON_AddStringToObject(o, "unit", v->unit) ||
	    !cJSON_AddNumberToObject(o, "baseline", round_to(v->base, ratio ? 0.0001 : 0.1)) ||
	    !cJSON_AddNumberToObject(o, "candidate", round_to(v->cand, ratio ? 0.0001 : 0.1)) ||
	    !cJSON_AddNumberToObject(o, "ratio", round_to(v->ratio, 0.0001)) ||
	    !cJSON_AddNumberToObject(o, "change_pct", round_to(v->change_pct, 0.01)) ||
	    !cJSON_AddNumberToObject(o, "ci_low", round_to(v->low, 0.0001)) ||
	    !cJSON_AddNumberToObject(o, "ci_high", round_to(v->high, 0.0001)) ||
	    !(v->has_p ? cJSON_AddNumberToObject(o, "p_value", v->p) : cJSON_AddNullToObject(o, "p_value")) ||
	    !cJSON_AddStringToObject(o, "scope", v->across_jobs ? "within-and-between-jobs" : "within-job")) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* What the row could have seen (report_judge_rules.h): "detectable_pct"
 * from the interval V used, and the words when that is above the gate's
 * threshold and the row found no change (a row that found one saw it:
 * a 15 % regression is never "underpowered"). */
static void add_detectable(const struct report_judge_case *c, struct report_row *row,
			   struct report_verdict *v)
{
	char note[96];

	v->detectable_pct = report_judge_detectable_pct(v->low, v->high, v->has_p);
	if (!isfinite(v->detectable_pct))
		return;
	report_row_number(row, "detectable_pct", round_to(v->detectable_pct, 0.01));
	if (v->significant || !(v->detectable_pct > c->max_regression_pct))
		return;
	v->underpowered = true;
	snprintf(note, sizeof(note), "this row could only see changes above %.1f %%", v->detectable_pct);
	report_row_bool(row, "underpowered", true);
	report_row_string(row, "detectable_note", note);
}

void report_judge(const struct report_judge_case *c, struct report_row *row, struct report_verdict *v)
{
	enum report_metric metric = c->asked;
	const struct report_judge_figure *f;
	struct report_judged j;
	bool used_between = false;
	cJSON *judged;

	*v = (struct report_verdict){.status = "not_comparable"};
	if (metric == REPORT_METRIC_AUTO) /* floor-ratio where it could be drawn, else the median */
		metric = c->floors && c->figure[REPORT_METRIC_FLOOR_RATIO].rc == 0 ? REPORT_METRIC_FLOOR_RATIO
										   : REPORT_METRIC_MEDIAN;
	f = &c->figure[metric];
	if (f->rc < 0) {
		v->reason = f->reason ? f->reason : no_figure(metric, f->rc, c->base_floor);
		return;
	}
	j = (struct report_judged){.metric = metric,
				   .change = f->change,
				   .low = f->low,
				   .high = f->high,
				   .per_sample = f->per_sample,
				   .p = f->p,
				   .significant = f->significant};
	v->metric = metric;
	v->unit = f->unit ? f->unit : metric == REPORT_METRIC_FLOOR_RATIO ? "x_floor" : "us";
	v->base = f->base;
	v->cand = f->cand;
	v->ratio = f->base > 0 ? f->cand / f->base : 1 + f->change / 100;
	v->change_pct = f->change;
	v->has_p = f->per_sample;
	v->p = f->p;
	v->significant = report_between_judge(c->between, c->variant, c->key, c->facts, &j, row,
					      &used_between, &v->low, &v->high);
	v->across_jobs = used_between;
	if ((judged = judged_json(v)))
		report_row_item(row, "judged", judged);
	else
		row->rc = row->rc ? row->rc : LL_ENOMEM;
	if (metric != REPORT_METRIC_MEDIAN || v->significant != f->significant)
		report_row_set_significant(row, v->significant);
	v->status = !v->significant ? "no_significant_change" : f->change > 0 ? "slower" : "faster";
	v->regression = v->significant && f->change > 0 && f->change > c->max_regression_pct;
	report_row_string(row, "status", v->status);
	report_row_bool(row, "regression", v->regression);
	add_detectable(c, row, v);
}
