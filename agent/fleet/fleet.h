/*
 * fleet.h - the agent as a member of loadlabd's fleet (docs/agent.md):
 * enroll once and keep the token (identity.h), deliver spooled results
 * (spool.h), then lease tasks with a long poll, run each through
 * pipeline_run() while a second thread sends heartbeats and progress, and
 * post the result or the failure. Cancellation seen in a heartbeat or
 * progress answer stops the pipeline and nothing is posted. A server that
 * is down or restarting is retried with capped, jittered exponential
 * backoff (0.5 s doubling to 30 s, +-25 %).
 */
#ifndef LOADLAB_AGENT_FLEET_H
#define LOADLAB_AGENT_FLEET_H

#include <cjson/cJSON.h>
#include <stdbool.h>

/* Exit codes of the daemon mode. */
enum {
	FLEET_EXIT_OK = 0,          /* --once: the task succeeded; else stopped by a signal */
	FLEET_EXIT_TASK_FAILED = 1, /* --once: the task failed, was refused, cancelled or abandoned */
	FLEET_EXIT_ERROR = 2,       /* usage, enrollment, token refused, unusable data folder */
	FLEET_EXIT_RESTART = 4,     /* updated or rolled back (update/update.h): start EXE again */
};

struct fleet_options {
	const char *server;         /* http:// or https:// URL */
	const char *enroll_token;   /* needed only when DATA_DIR has no identity; may be NULL */
	const char *data_dir;       /* agent.json, spool/, work/ */
	const char *name;           /* the name to enroll with */
	const cJSON *labels;        /* borrowed: {KEY: VALUE} to enroll with */
	bool once;                  /* take one task, report it, return (a build task done
				   * first does not count: docs/builds.md) */
	long long min_free_bytes;   /* free bytes a task needs to start; 0: WORK_MIN_FREE_DEFAULT */
	long long update_check_s;   /* between update checks (update.h); 0: never */
	long long update_confirm_s; /* a new copy's time to reach the server */
};

/* Runs the agent until it is stopped (os.h) or, with --once, until one
 * task is done. Prints one line on stderr for a fatal error and returns
 * the process exit code. */
int fleet_run(const struct fleet_options *options);

#endif
