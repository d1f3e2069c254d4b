/*
 * scheduler.h - the daemon's background work for series: a thread that
 * creates the jobs of due schedules, checks each finished job of a series
 * against the one before (regression alerts), and hands alerts to the
 * webhook delivery pool (webhook_delivery.h).
 *
 * Every SCHEDULER's tick (--schedule-tick-ms, default 1000):
 *   1. at the first tick, open claims left by a crash are resolved
 *      (store_schedule_pending()): a claim whose job exists is closed, the
 *      others get their job now, once;
 *   2. each due schedule is claimed and its job created
 *      (store_schedule_claim(), schedule_fire());
 *   3. finished jobs of a series not yet checked are compared with the
 *      series' previous done job (report_compare() with the series'
 *      threshold); a "regression" verdict opens an alert;
 *   4. running bisections are advanced (bisect_tick(), bisect.h).
 *
 * Due times: a schedule stores its next due time; firing moves it to the
 * first due time after NOW computed from the one fired
 * (schedule_next_due()), so a daemon down for many periods, or a clock
 * stepped forward, runs a missed schedule once, and a clock stepped back
 * does not fire it again.
 *
 * Webhooks: an alert of a series with a webhook is queued in the store
 * when it is opened and posted by the pool of webhook_delivery.h (where
 * it may go: webhook_target.h). Nothing here blocks a request or the
 * store's writer.
 *
 * The folder schedules/ is what the daemon does by the clock: this
 * scheduler (scheduler.c), the cron expressions of schedules (cron.h), and
 * the lease-expiry tick that the HTTP door's sweeper runs (lease_expiry.h),
 * and the webhooks of alerts (webhook_target.h, webhook_delivery.h).
 */
#ifndef LOADLAB_SERVER_SCHEDULER_H
#define LOADLAB_SERVER_SCHEDULER_H

#include "store/store.h"

#include <cjson/cJSON.h>

struct server;
struct scheduler;

/* The clock the scheduler reads: milliseconds since the epoch (UTC).
 * Tests pass their own; NULL means clock_now_ms(). */
typedef long long (*scheduler_clock_fn)(void *context);

struct scheduler_options {
	long long tick_ms;        /* 10..60000 */
	scheduler_clock_fn clock; /* NULL: the wall clock */
	void *clock_context;
};

/* Starts the threads for SERVER (its store; its long-polls are woken
 * when jobs are created). */
int scheduler_start(struct server *server, const struct scheduler_options *options,
		    struct scheduler **ret_scheduler);

/* Runs one tick now, in the calling thread (tests; the thread calls it). */
void scheduler_tick(struct scheduler *scheduler);

/* Stops the ticker and the webhook pool (deliveries not yet made stay
 * queued in the store). NULL is fine. */
void scheduler_stop(struct scheduler *scheduler);

/* The first due time strictly after NOW_MS of a schedule whose last due
 * time is PREVIOUS_DUE_MS: for CRON (cron.h), the next fire time after
 * max(NOW_MS, PREVIOUS_DUE_MS); for INTERVAL_S, PREVIOUS_DUE_MS plus the
 * least whole number of intervals past NOW_MS. Pure. LL_EINVAL for a bad
 * cron expression or interval. */
int schedule_next_due(const char *cron, long long interval_s, long long previous_due_ms, long long now_ms,
		      long long *ret_next_ms);

/* Creates the job of CLAIM (from store_schedule_claim(), not skipped) for
 * SERVER, submitted by "schedule:ID", and closes the run. *RET_JOB_ID is
 * the job created. A job whose program names a file no longer stored is
 * not made: LL_ESTATE, the run closed with that reason, which the
 * schedule then shows its owner as "last_skip" (GET /api/v1/schedules/ID).
 * Frees CLAIM->job_text. */
int schedule_fire(struct server *server, struct store_schedule_claim *claim, long long now,
		  long long *ret_job_id);

#endif
