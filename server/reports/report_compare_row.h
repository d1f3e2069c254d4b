/*
 * report_compare_row.h - one row of a comparison (report_compare_row.c),
 * for report_compare.c, which pairs the sides' tasks, runs the rows on
 * threads and writes the comparison. Only the report's files include it.
 */
#ifndef LOADLAB_SERVER_REPORT_COMPARE_ROW_H
#define LOADLAB_SERVER_REPORT_COMPARE_ROW_H

#include "report_between.h"
#include "report_int.h"
#include "report_row.h"
#include "report_sides.h"

#include <stdbool.h>
#include <stdint.h>

/* Room reused row after row: zero-initialized by the caller, who frees
 * its samples (report_sample_release()) and buffers after the last row. */
struct report_row_room {
	struct report_sample base, cand;
	double *x, *y;              /* samples put back in their measured order */
	double *floor_x, *floor_y;  /* the same for over-floor */
	struct report_sample draws; /* over-floor's table of draws */
	uint32_t order[2][255];     /* ranked variants' order, widened */
	uint8_t ranks[2 * REPORT_MAX_SIDES][REPORT_MAX_RESAMPLES_RANKED];
};

/* One row, judged by METRIC (AUTO: report.h) with the between-job term
 * of BETWEEN, written to ROW; ROW's RC. *USED_BETWEEN: whether it was. */
int report_compare_row(const char *variant, const struct side_task *base, const struct side_task *cand,
		       const char *global_reason, double max_regression, enum report_metric metric,
		       const struct report_between *between, struct report_row_room *room,
		       struct report_row *row, bool *used_between);

#endif
