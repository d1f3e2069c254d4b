/*
 * store_jobs.h - what the jobs (store_jobs.c) give the other resources:
 * a job's state kept in step with its tasks'.
 */
#ifndef LOADLAB_SERVER_STORE_JOBS_H
#define LOADLAB_SERVER_STORE_JOBS_H

struct store;

/* Most build tasks one job's cells may need (distinct targets,
 * queue_build.h). */
#define STORE_MAX_BUILDS 16

/* Re-derives job JOB_ID's state from its tasks (queue_job_state()) and
 * stores it when it changed; inside a write (db.h), at once on SQLite,
 * just before the commit on PostgreSQL (db_before_commit()): the write
 * must not read the job's state back. */
int job_refresh_state(struct store *store, long long job_id, long long now);

#endif
