/*
 * bisect.h - automatic bisection of a program series (issue 29,
 * docs/bisect.md): which revision made it slower, measured again on one
 * machine with two-build A/B jobs (report_ab(), docs/program-family.md).
 *
 * A bisection names a series, a good and a bad revision, a variant and a
 * cell. The revisions between them (inclusive) are the series' jobs in
 * submission order, each revision's build the manifest of its latest job
 * ("program.files", whose blobs must still be stored). One agent of the
 * cell runs every step (the agent that ran the bad revision's task there,
 * or the one named): each step is one A/B job pinned to it
 * ({"each_agent": {"agent": [NAME]}}), the good revision's build as the
 * base and the revision tried as the candidate.
 *
 *   1. reproduce: good against bad. Slower (report_ab()'s "slower"): its
 *      ratio is the effect E. Not slower with the interval's top below
 *      1.02, or still not slower at BISECT_MAX_RUNS runs: "not_reproduced".
 *   2. bisect: the middle revision of the range (last good, first bad)
 *      against good: bad when the interval's bottom is above the half
 *      effect 1 + (E - 1) / 2, good when its top is below it; otherwise
 *      unsure, and the step is run again with twice the runs (30, 60,
 *      120, 240, as Pinpoint grows its samples); at BISECT_MAX_RUNS the
 *      point estimate decides. The range halves each decided step.
 *   3. done when the range is two adjacent revisions: the culprit is the
 *      first bad one, its effect the ratio and interval of the step that
 *      found it bad (or of step 1).
 *
 * A job that fails or is cancelled fails the bisection. All of its state
 * is the store's document (store_bisection_*()), rewritten after every
 * change by bisect_tick(), which the scheduler's tick calls: a daemon
 * that restarts goes on where its last tick left off. A crash between a
 * step's job being created and the document naming it leaves that job
 * unwatched; the next tick makes the step's job again.
 */
#ifndef LOADLAB_SERVER_BISECT_H
#define LOADLAB_SERVER_BISECT_H

#include <cjson/cJSON.h>

struct server;

/* The bounds of a bisection (docs/bisect.md, "Limits"). */
#define BISECT_MAX_REVISIONS 256
#define BISECT_MIN_RUNS 30
#define BISECT_MAX_RUNS 240
/* Bisections one creator ("KIND:NAME" of its token) may have running at
 * once; the next is refused with LL_ECONFLICT (409 too_many_bisections). */
#define BISECT_MAX_RUNNING_PER_CREATOR 4
/* Bisections advanced per tick. */
#define BISECT_BATCH 16
/* A reproduction whose interval stays below this ratio does not grow. */
#define BISECT_NO_EFFECT_RATIO 1.02

/* Starts a bisection of SERIES for REQUEST {"good", "bad", "variant",
 * "cell" (a cell key, as the series names it; optional when the bad
 * revision's job has one cell), "agent" (optional: an agent's name,
 * job_spec_agent_name_check(), of an enrolled agent)} made by BY ("KIND:NAME"
 * of the caller's token; whether BY may bisect the series is the caller's
 * check, route_bisect.c): *RET_BISECTION its document
 * (store_bisection_get()). LL_EINVAL for a bad request (unknown member,
 * good not before bad, a revision that is not a program job of one build,
 * too many revisions, an agent's name with control characters),
 * LL_ENOTFOUND for an unknown series or revision, LL_EINVAL
 * also for an agent not enrolled, LL_ESTATE when a
 * build's blobs are gone or no agent ran the cell, LL_ECONFLICT when BY
 * has BISECT_MAX_RUNNING_PER_CREATOR running. Nothing is stored on
 * failure. */
int bisect_create(struct server *server, const char *series, const cJSON *request, const char *by,
		  cJSON **ret_bisection);

/* Advances every running bisection by what its jobs have done. */
void bisect_tick(struct server *server);

/* Cancels bisection ID (and its step's job): *RET its document.
 * LL_ECONFLICT when it is no longer running. */
int bisect_cancel(struct server *server, long long id, cJSON **ret);

/* A step's verdict from its paired ratio's interval LOW..HIGH and point
 * RATIO against the ratio LINE that splits good from bad, with RUNS runs:
 * 1 bad (LOW above LINE), -1 good (HIGH below LINE), 0 unsure; at
 * BISECT_MAX_RUNS runs never unsure (RATIO against LINE). Pure. */
int bisect_judge(double ratio, double low, double high, double line, long long runs);

#endif
