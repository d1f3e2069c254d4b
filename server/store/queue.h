/*
 * queue.h - the queue's policy as pure functions: what state a job is in,
 * how long a failed task waits, when a lease has expired, what becomes of
 * a task whose attempt ended, and which agent may run which task.
 *
 * The store (store_*.c) reads and writes the rows; every decision it makes
 * about them is one of these functions, so that the rules of DESIGN.md
 * ("Data model", "Queue") can be tested without a database.
 */
#ifndef LOADLAB_SERVER_QUEUE_H
#define LOADLAB_SERVER_QUEUE_H

#include <cjson/cJSON.h>
#include <stdbool.h>

/* A task's states, in the order of queue_task_state_name(). */
enum queue_task_state {
	QUEUE_TASK_QUEUED,
	QUEUE_TASK_LEASED,
	QUEUE_TASK_DONE,
	QUEUE_TASK_DEAD,
	QUEUE_TASK_CANCELLED,
	QUEUE_TASK_STATE_COUNT
};

/* "queued", "leased", "done", "dead", "cancelled". */
const char *queue_task_state_name(enum queue_task_state state);

/* The state named NAME; -1 when NAME is no task state. */
int queue_task_state_parse(const char *name);

/* How many tasks of a job are in each state, and the highest attempt
 * number any of them reached (0: none was ever leased). */
struct queue_task_counts {
	long long by_state[QUEUE_TASK_STATE_COUNT];
	long long max_attempt;
};

/* The state of a job whose state is now CURRENT and whose tasks are
 * COUNTS (DESIGN.md, "Data model"): "cancelled" stays; all tasks done is
 * "done"; all finished (done or dead) with at least one dead is "failed";
 * any task leased, finished or retried makes it "running"; else "queued".
 * A job without tasks is "queued". Returns a static string. */
const char *queue_job_state(const char *current, const struct queue_task_counts *counts);

/* True for the job states that no longer change: done, failed, cancelled. */
bool queue_job_finished(const char *state);

/* The delay before attempt ATTEMPT + 1 after attempt ATTEMPT failed:
 * BACKOFF_MS for attempt 1 (and below), doubled for every further attempt,
 * never more than BACKOFF_MAX_MS. 0 when BACKOFF_MS is 0. */
long long queue_retry_delay(long long attempt, long long backoff_ms, long long backoff_max_ms);

/* True when a lease that runs until EXPIRES_MS has expired at NOW_MS: a
 * lease is still good at its last millisecond. */
bool queue_lease_expired(long long expires_ms, long long now_ms);

/* What becomes of a task whose attempt ATTEMPT failed or expired:
 * QUEUE_TASK_QUEUED when RETRYABLE and attempts remain (ATTEMPT <
 * MAX_ATTEMPTS), else QUEUE_TASK_DEAD. */
enum queue_task_state queue_after_attempt(long long attempt, int max_attempts, bool retryable);

/* An agent as the queue sees it. Facts, labels and name are borrowed.
 * Only queue_task_waiting() and queue_build_waiting() read NAME, ONLINE
 * and LAST_SEEN_MS. */
struct queue_agent {
	long long id;
	const cJSON *facts;  /* object */
	const cJSON *labels; /* object */
	bool quarantined;
	const char *name;       /* NULL: "agent ID" */
	bool online;            /* queue_agent_state() said "online" */
	long long last_seen_ms; /* 0: never seen */
	bool builder;           /* an admin marked it a builder (queue_build.h) */
};

/* "quarantined" when QUARANTINED, "online" when the agent was SEEN at
 * LAST_SEEN_MS no more than OFFLINE_AFTER_MS before NOW_MS, else
 * "offline". Returns a static string. */
const char *queue_agent_state(bool quarantined, bool seen, long long last_seen_ms, long long now_ms,
			      long long offline_after_ms);

/* True when AGENT may run a task with CELL (a JSON object) that is pinned
 * to agent PINNED_AGENT (0: not pinned): never when the agent is
 * quarantined; a pinned task only by its agent; any other task when its
 * cell matches the agent's facts and labels (job_spec_cell_matches()). */
bool queue_task_matches(const cJSON *cell, long long pinned_agent, const struct queue_agent *agent);

/* True when AGENT gets a task of an each_agent matrix with SELECTOR when
 * the job is submitted: not quarantined, and matching
 * (job_spec_agent_selected(): the key "agent" matches its name). Offline
 * agents are included: the task waits for them. */
bool queue_agent_selected(const cJSON *selector, const struct queue_agent *agent);

/* Longest reason queue_task_waiting() writes, with its NUL. */
#define QUEUE_WAITING_REASON_SIZE 256

/* Whether a queued task with CELL (a JSON object), pinned to agent
 * PINNED_AGENT (0: not pinned), can be leased by one of the COUNT AGENTS
 * enrolled: true when one of them matches it (queue_task_matches()) and is
 * online, and REASON is "". Else false, and REASON (QUEUE_WAITING_REASON_SIZE
 * bytes) says why, first of:
 *   "no agent has os=winxp"              (a cell value no agent has)
 *   "no agent has os=winxp, disk=ssd together"
 *   "agent 7 is not enrolled"            (a pinned task's agent is gone)
 *   "the only matching agent (NAME) is quarantined"
 *   "all 3 matching agents are quarantined"
 *   "the only matching agent (NAME) is offline since TIME"
 *   "matching agents are offline since TIME" (TIME: the latest last seen,
 *   RFC 3339; "never seen" when none was).
 * A pinned task names its agent: "agent NAME is quarantined", "agent NAME
 * is offline since TIME". */
bool queue_task_waiting(const cJSON *cell, long long pinned_agent, const struct queue_agent *agents,
			size_t count, char *reason);

/* A lease's length rounded up to seconds, as told to the agent. */
long long queue_lease_seconds(long long lease_ms);

/* How often an agent should heartbeat: three times per lease, and at
 * least once a second. */
long long queue_heartbeat_seconds(long long lease_ms);

#endif
