#include "fleet.h"
#include "task_room.h"
#include "work_folders.h"

#include "blobs/blob_cache.h"
#include "fleet/facts.h"
#include "loadlab/rest_client.h"
#include "identity.h"
#include "loadlab/plat.h"
#include "family/pipeline.h"
#include "loadlab/plat_thread.h"
#include "fleet_log.h"
#include "spool.h"
#include "task_watch.h"
#include "update/update.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "loadlab/rest_client.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seconds of one lease long poll (fewer when --update-check-seconds is
 * fewer: lease_wait_seconds()), and the transfer timeout around it. */
#define LEASE_WAIT_SECONDS 20
#define LEASE_TIMEOUT_SECONDS (LEASE_WAIT_SECONDS + 15)
/* Transfer timeout of every other request. */
#define REQUEST_TIMEOUT_SECONDS 30
/* Backoff between attempts to reach the server. */
#define BACKOFF_FIRST_MS 500
#define BACKOFF_CAP_MS 30000
/* A 204 sooner than half the wait asked for means the server cut the long
 * poll short (it is full, or stopping): back off. */
/* The longest Retry-After honoured, so a server cannot park an agent. */
#define RETRY_AFTER_CAP_MS 300000LL
/* How long a stopping agent keeps trying to tell the server it gave up. */
#define FAIL_ATTEMPTS 3

/* What a task ended with, for --once's exit code. */
enum task_outcome {
	TASK_SUCCEEDED,
	TASK_FAILED,  /* failed, cancelled or its lease lost */
	TASK_REFUSED, /* the lease failed the agent's own checks: back off */
	TASK_STOPPED, /* abandoned because the agent is stopping */
	TASK_FATAL,   /* the server refused the agent's token */
};

struct fleet {
	const struct fleet_options *options;
	struct identity identity;
	cJSON *facts;
	struct rest_client http; /* the main thread's */
	unsigned random_state;
	char work_root[4096];
	struct update_state update;
};

/* xorshift32: jitter needs no quality, only a different value per call. */
static unsigned next_random(struct fleet *f)
{
	unsigned x = f->random_state ? f->random_state : 0x9e3779b9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	f->random_state = x;
	return x;
}

/* Sleeps for the current backoff delay with +-25 % jitter, or for
 * FLOOR_MS (a server's Retry-After, capped) plus up to 25 % when that is
 * longer, then doubles the delay up to the cap. False when a stop was
 * asked for meanwhile. */
static bool backoff_wait(struct fleet *f, long long *delay_ms, long long floor_ms)
{
	long long base = *delay_ms, jitter = base / 4;
	long long wait = base - jitter + (long long)(next_random(f) % (unsigned)(2 * jitter + 1));

	if (floor_ms > RETRY_AFTER_CAP_MS)
		floor_ms = RETRY_AFTER_CAP_MS;
	if (wait < floor_ms)
		wait = floor_ms + (long long)(next_random(f) % (unsigned)(floor_ms / 4 + 1));
	*delay_ms = base * 2 > BACKOFF_CAP_MS ? BACKOFF_CAP_MS : base * 2;
	return plat_sleep_unless_stopped(wait);
}

/* A's Retry-After in milliseconds, 0 when it has none. */
static long long retry_after_ms(const struct rest_answer *a)
{
	return a->retry_after > 0 ? (long long)a->retry_after * 1000 : 0;
}

static bool stop_check(void *context)
{
	(void)context;
	return plat_stop_requested();
}

static bool is_retryable_status(long status)
{
	return status >= 500 || status == 429 || status == 408;
}

static char *print_object(const cJSON *item)
{
	char *text = json_print(item);

	if (!text)
		err_set(LL_ENOMEM, "Out of memory.");
	return text;
}

/* Enrollment: POST /api/v1/agents/enroll with the enrollment token, retried
 * while the server cannot be reached. Saves the identity. */
static int enroll(struct fleet *f)
{
	const struct fleet_options *o = f->options;
	struct rest_client c;
	struct rest_answer a;
	cJSON *body = cJSON_CreateObject();
	long long delay = BACKOFF_FIRST_MS, id;
	const char *token;
	char *text = NULL;
	int rc;

	if (!o->enroll_token) {
		cJSON_Delete(body);
		return err_set(LL_EAUTH, "This agent is not enrolled yet: give --enroll-token or "
					 "--enroll-token-file.");
	}
	if (!body || !cJSON_AddStringToObject(body, "name", o->name) ||
	    !cJSON_AddItemReferenceToObject(body, "facts", f->facts) ||
	    !cJSON_AddItemToObject(body, "labels", cJSON_Duplicate(o->labels, true)) ||
	    !(text = print_object(body))) {
		cJSON_Delete(body);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	cJSON_Delete(body);
	if ((rc = rest_client_open(&c, o->server, o->enroll_token)) < 0) {
		free(text);
		return rc;
	}
	rest_client_set_abort(&c, stop_check, NULL);
	for (;;) {
		rc = rest_client_post(&c, "/api/v1/agents/enroll", text, REQUEST_TIMEOUT_SECONDS, &a);
		if (rc == LL_ESTATE)
			break;
		if (rc == 0 && a.status == 201)
			break;
		if (rc == 0 && !is_retryable_status(a.status)) {
			char reason[400];
			fleet_describe_answer(&a, "the enrollment", "is not 201 Created", reason,
					      sizeof(reason));
			rc = a.status >= 200 && a.status <= 299
				     ? err_set(LL_EFORMAT, "%s.", reason)
				     : err_set(a.status == 401 ? LL_EAUTH : LL_EINVAL,
					       "The server refused the enrollment: %s (HTTP %ld%s%s).",
					       a.message, a.status, *a.error_code ? " " : "", a.error_code);
			rest_answer_release(&a);
			break;
		}
		{
			char reason[400];
			long long floor = rc == 0 ? retry_after_ms(&a) : 0;
			if (rc == 0)
				fleet_describe_answer(&a, "an enrollment", "", reason, sizeof(reason));
			log_event(LOG_WARN, "server_unreachable", "during", "enroll", "reason",
				  rc < 0 ? err_message(rc) : reason, NULL);
			if (rc == 0)
				rest_answer_release(&a);
			if (!backoff_wait(f, &delay, floor)) {
				rc = err_set(LL_ESTATE, "Stopped before enrolling.");
				break;
			}
		}
	}
	free(text);
	rest_client_close(&c);
	if (rc < 0)
		return rc;
	/* Checked whole before anything is saved: agent.json holds only an
	 * id and a token of the shape loadlabd makes. */
	if (!a.body || json_get_int(a.body, "id", 1, 9007199254740992LL, true, 0, &id) < 0 ||
	    json_get_string(a.body, "token", IDENTITY_TOKEN_MAX, true, NULL, &token) < 0 ||
	    !identity_token_valid(token)) {
		char reason[400];
		fleet_describe_answer(&a, "the enrollment",
				      !a.body ? "is not a JSON object"
				      : json_get_int(a.body, "id", 1, 9007199254740992LL, true, 0, &id) < 0
					      ? "has no agent id (an integer from 1)"
					      : "has no agent token of the shape llagt_ and 64 hex digits",
				      reason, sizeof(reason));
		rest_answer_release(&a);
		return err_set(LL_EFORMAT, "%s; nothing was saved.", reason);
	}
	f->identity.id = id;
	snprintf(f->identity.token, sizeof(f->identity.token), "%s", token);
	rest_answer_release(&a);
	if ((rc = identity_save(o->data_dir, &f->identity, o->server, o->name)) < 0)
		return rc;
	fleet_log_number(LOG_INFO, "enrolled", "agent_id", id, "name", o->name);
	return 0;
}

/* Sends BODY to PATH until the server answers (any status), backing off
 * while it cannot be reached or answers 5xx. LL_ESTATE when stopped. */
static int post_until_answered(struct fleet *f, const char *path, const char *body, const char *during,
			       struct rest_answer *a)
{
	long long delay = BACKOFF_FIRST_MS;
	int rc;

	for (;;) {
		rc = rest_client_post(&f->http, path, body, REQUEST_TIMEOUT_SECONDS, a);
		if (rc == LL_ESTATE)
			return rc;
		if (rc == 0 && !is_retryable_status(a->status))
			return 0;
		{
			char reason[400];
			long long floor = rc == 0 ? retry_after_ms(a) : 0;
			if (rc == 0)
				fleet_describe_answer(a, during, "", reason, sizeof(reason));
			log_event(LOG_WARN, "server_unreachable", "during", during, "reason",
				  rc < 0 ? err_message(rc) : reason, NULL);
			if (rc == 0)
				rest_answer_release(a);
			if (!backoff_wait(f, &delay, floor))
				return err_set(LL_ESTATE, "Stopped while waiting for the server.");
		}
	}
}

static int token_refused(struct fleet *f)
{
	char path[4096];

	identity_path(f->options->data_dir, path, sizeof(path));
	return err_set(LL_EAUTH,
		       "The server refused this agent's token (agent %lld, %s); remove "
		       "that file and enroll again.",
		       f->identity.id, path);
}

/* Posts a spooled or fresh result until the server takes it (2xx) or says
 * it never will (409, 404, 400, 413); only then the spool file goes. */
static int deliver_result(void *context, long long task_id, long long attempt, const char *body)
{
	struct fleet *f = context;
	struct rest_answer a;
	char path[64];
	int rc;

	snprintf(path, sizeof(path), "/api/v1/tasks/%lld/result", task_id);
	rc = post_until_answered(f, path, body, "result", &a);
	if (rc < 0)
		return rc;
	if (a.status == 401) {
		rest_answer_release(&a);
		return token_refused(f);
	}
	if (a.status >= 200 && a.status <= 299) {
		fleet_log_task(LOG_INFO, "result_delivered", task_id, attempt, "status", "accepted");
	} else {
		char reason[400];
		fleet_describe_answer(&a, "a result", "", reason, sizeof(reason));
		fleet_log_task(LOG_WARN, "result_dropped", task_id, attempt, "reason", reason);
	}
	rest_answer_release(&a);
	return spool_remove(f->options->data_dir, task_id, attempt);
}

/* Tells the server the task failed. Best effort: a few tries, then the
 * lease runs out on its own. */
static void post_failure(struct fleet *f, long long task_id, long long attempt, const char *reason,
			 bool retryable)
{
	struct rest_answer a;
	cJSON *body = cJSON_CreateObject();
	char path[64], short_reason[2000], *text = NULL;
	long long delay = BACKOFF_FIRST_MS;

	snprintf(short_reason, sizeof(short_reason), "%s", *reason ? reason : "unknown failure");
	if (!body || !cJSON_AddNumberToObject(body, "attempt", (double)attempt) ||
	    !cJSON_AddStringToObject(body, "reason", short_reason) ||
	    !cJSON_AddBoolToObject(body, "retryable", retryable) || !(text = print_object(body))) {
		cJSON_Delete(body);
		return;
	}
	cJSON_Delete(body);
	snprintf(path, sizeof(path), "/api/v1/tasks/%lld/fail", task_id);
	for (int i = 0; i < FAIL_ATTEMPTS; i++) {
		/* A stopping agent still reports: no abort during this post. */
		rest_client_set_abort(&f->http, NULL, NULL);
		int rc = rest_client_post(&f->http, path, text, REQUEST_TIMEOUT_SECONDS, &a);
		rest_client_set_abort(&f->http, stop_check, NULL);
		if (rc == 0 && !is_retryable_status(a.status)) {
			char answer_reason[400];
			fleet_describe_answer(&a, "a failure report", "", answer_reason,
					      sizeof(answer_reason));
			fleet_log_task(a.status == 200 ? LOG_INFO : LOG_WARN, "failure_reported", task_id,
				       attempt, "reason", a.status == 200 ? short_reason : answer_reason);
			rest_answer_release(&a);
			break;
		}
		if (rc == 0)
			rest_answer_release(&a);
		if (i + 1 < FAIL_ATTEMPTS) {
			long long d = delay;
			delay *= 2;
			plat_sleep_ms(d);
		}
	}
	free(text);
}

/* Checks the lease's job against every bound, as the server did, and
 * returns it as a submission: without the "id" the lease adds, which
 * job_spec_normalize() (here and in the pipeline) refuses. */
static int check_job(const cJSON *job, cJSON **ret_job)
{
	cJSON *copy = cJSON_Duplicate(job, true), *normalized = NULL;
	int rc;

	if (!copy)
		return err_set(LL_ENOMEM, "Out of memory.");
	cJSON_DeleteItemFromObjectCaseSensitive(copy, "id");
	rc = job_spec_normalize(copy, &normalized);
	cJSON_Delete(normalized);
	if (rc < 0) {
		cJSON_Delete(copy);
		return rc;
	}
	*ret_job = copy;
	return 0;
}

/* Removes a finished task's work folder. On Windows a file of a program
 * that has just exited (or, under Wine, one a host tool is still closing)
 * can stay locked for a moment: try a few times, then say what was left. */
static void remove_work(long long task_id, long long attempt, const char *work_dir)
{
	int rc = 0;

	for (int i = 0; i < 5; i++) {
		if ((rc = plat_remove_tree(work_dir)) == 0)
			return;
		plat_sleep_unless_stopped(200);
	}
	fleet_log_task(LOG_WARN, "work_not_removed", task_id, attempt, "reason", err_message(rc));
}

/* A task that could not start: reports RC's message as a retryable
 * failure and frees JOB. */
static enum task_outcome task_not_started(struct fleet *f, long long task_id, long long attempt, int rc,
					  cJSON *job)
{
	char reason[2000];

	snprintf(reason, sizeof(reason), "%s", err_message(rc));
	post_failure(f, task_id, attempt, reason, true);
	cJSON_Delete(job);
	return TASK_FAILED;
}

/* The pipeline's fetch_blob hook (pipeline.h): GET /api/v1/blobs/HEX into
 * DEST, at most LIMIT bytes (the blob cache checks the hash and renames
 * it into place; it sets the limit to the room the disk has). */
static int fetch_blob(void *context, const char *sha256_hex, const char *dest_path, long long limit)
{
	struct fleet *f = context;
	struct rest_answer a;
	char path[128];
	int rc;

	snprintf(path, sizeof(path), "/api/v1/blobs/%.64s", sha256_hex);
	if ((rc = rest_client_download(&f->http, path, dest_path, limit, NULL, &a)) < 0)
		return rc;
	rc = rest_answer_error(&a, "GET", path);
	rest_answer_release(&a);
	return rc;
}

/* The pipeline's put_blob hook (pipeline.h): PUT /api/v1/blobs/HEX of the
 * file at PATH (a builder's; the daemon checks the digest). */
static int put_blob(void *context, const char *sha256_hex, const char *file_path)
{
	struct fleet *f = context;
	struct rest_answer a;
	char path[128], hex[65];
	long long size;
	int rc;

	if ((rc = plat_file_sha256(file_path, hex, &size)) < 0)
		return rc;
	snprintf(path, sizeof(path), "/api/v1/blobs/%.64s", sha256_hex);
	if ((rc = rest_client_upload(&f->http, path, file_path, size, NULL, NULL, &a)) < 0)
		return rc;
	rc = rest_answer_error(&a, "PUT", path);
	rest_answer_release(&a);
	return rc;
}

/* Makes room for a task (task_room.h) and says whether the disk then has
 * the free space a task needs to start; REASON, when not, says why. */
static bool disk_has_room(struct task_room *room, const cJSON *lease, long long task_id, long long attempt,
			  char *reason, size_t size)
{
	if (task_room_before_start(room, lease, reason, size) == 0)
		return true;
	fleet_log_task(LOG_WARN, "task_refused", task_id, attempt, "reason", reason);
	return false;
}

static enum task_outcome run_task(struct fleet *f, const cJSON *lease)
{
	const cJSON *job = cJSON_GetObjectItemCaseSensitive(lease, "job");
	const cJSON *cell = cJSON_GetObjectItemCaseSensitive(lease, "cell");
	struct task_watch w;
	struct task_room room;
	struct pipeline_task task;
	struct plat_thread *thread = NULL;
	cJSON *result = NULL, *checked_job = NULL;
	char work_dir[4200], reason[2000], blob_dir[4200];
	char *text = NULL;
	long long task_id, attempt, heartbeat_seconds;
	enum task_outcome outcome;
	int rc = 0;

	if (json_get_int(lease, "task_id", 1, 9007199254740992LL, true, 0, &task_id) < 0 ||
	    json_get_int(lease, "attempt", 1, 1000000, true, 0, &attempt) < 0) {
		log_event(LOG_ERROR, "lease_malformed", "reason", "the lease has no task_id or attempt",
			  NULL);
		return TASK_REFUSED;
	}
	if (json_get_int(lease, "heartbeat_seconds", 1, 3600, false, 10, &heartbeat_seconds) < 0)
		heartbeat_seconds = 10;
	fleet_log_task(LOG_INFO, "task_leased", task_id, attempt, "job",
		       cJSON_IsString(cJSON_GetObjectItemCaseSensitive(job, "name"))
			       ? cJSON_GetObjectItemCaseSensitive(job, "name")->valuestring
			       : "");

	/* Bounds are checked here again: never trust the server blindly. */
	if (!cJSON_IsObject(job) || (rc = check_job(job, &checked_job)) < 0) {
		snprintf(reason, sizeof(reason), "The agent refused the job: %s",
			 cJSON_IsObject(job) ? err_message(rc) : "the lease has no job.");
		fleet_log_task(LOG_WARN, "task_refused", task_id, attempt, "reason", reason);
		post_failure(f, task_id, attempt, reason, false);
		return TASK_REFUSED;
	}

	task_room_init(&room, f->options->data_dir,
		       f->options->min_free_bytes > 0 ? f->options->min_free_bytes : WORK_MIN_FREE_DEFAULT,
		       task_id, attempt);
	if (!disk_has_room(&room, lease, task_id, attempt, reason, sizeof(reason))) {
		post_failure(f, task_id, attempt, reason, true);
		cJSON_Delete(checked_job);
		return TASK_FAILED;
	}
	snprintf(work_dir, sizeof(work_dir), "%s%c%lld-%lld", f->work_root, plat_path_separator, task_id,
		 attempt);
	if ((rc = plat_remove_tree(work_dir)) < 0 || (rc = plat_mkdirs_private(work_dir)) < 0) {
		return task_not_started(f, task_id, attempt, rc, checked_job);
	}

	memset(&w, 0, sizeof(w));
	w.server = f->options->server;
	w.token = f->identity.token;
	w.agent_id = f->identity.id;
	w.task_id = task_id;
	w.attempt = attempt;
	w.heartbeat_ms = heartbeat_seconds * 1000;
	atomic_init(&w.phase, -1);
	atomic_init(&w.percent, 0);
	atomic_init(&w.progress_seq, 0);
	atomic_init(&w.cancelled, 0);
	atomic_init(&w.lost, 0);
	atomic_init(&w.auth_failed, 0);
	atomic_init(&w.done, 0);
	if ((rc = plat_thread_start(task_watch_heartbeat_main, &w, &thread)) < 0) {
		return task_not_started(f, task_id, attempt, rc, checked_job);
	}

	memset(&task, 0, sizeof(task));
	task.job = checked_job;
	task.cell = cJSON_IsObject(cell) ? cell : NULL;
	task.facts = f->facts;
	task.work_dir = work_dir;
	{
		const cJSON *cores = cJSON_GetObjectItemCaseSensitive(f->facts, "cores");
		task.jobs = cJSON_IsNumber(cores) && cores->valuedouble >= 1 ? (int)cores->valuedouble : 1;
	}
	task.progress = task_watch_progress;
	task.progress_context = &w;
	snprintf(blob_dir, sizeof(blob_dir), "%s%cblobs", f->options->data_dir, plat_path_separator);
	task.fetch_blob = fetch_blob;
	task.fetch_blob_context = f;
	task.blob_cache_dir = blob_dir;
	task.blob_room = &room.blob_room;
	/* A shared build (docs/builds.md): a build task, or a task that
	 * measures one. */
	task.build_only = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(lease, "kind")) &&
			  strcmp(cJSON_GetObjectItemCaseSensitive(lease, "kind")->valuestring, "build") == 0;
	task.build = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(lease, "build"))
			     ? cJSON_GetObjectItemCaseSensitive(lease, "build")
			     : NULL;
	task.put_blob = put_blob;
	task.put_blob_context = f;
	err_clear();
	rc = pipeline_run(&task, &result);
	if (rc < 0)
		snprintf(reason, sizeof(reason), "%s", err_message(rc));
	atomic_store(&w.done, 1);
	plat_thread_join(thread);
	cJSON_Delete(checked_job);

	if (atomic_load(&w.auth_failed)) {
		cJSON_Delete(result);
		token_refused(f);
		return TASK_FATAL;
	}
	if (atomic_load(&w.cancelled) || atomic_load(&w.lost)) {
		/* The server no longer wants this attempt: post nothing. */
		fleet_log_task(LOG_INFO, "task_abandoned", task_id, attempt, "reason",
			       atomic_load(&w.cancelled) ? "the job was cancelled" : "the lease was lost");
		cJSON_Delete(result);
		plat_remove_tree(work_dir);
		return TASK_FAILED;
	}
	if (rc < 0) {
		cJSON_Delete(result);
		if (plat_stop_requested()) {
			post_failure(f, task_id, attempt, "The agent was stopped before the task finished.",
				     true);
			plat_remove_tree(work_dir);
			return TASK_STOPPED;
		}
		fleet_log_task(LOG_WARN, "task_failed", task_id, attempt, "reason", reason);
		/* A build that fails fails the same way again: its job fails
		 * once, with this log (a lost builder is retried by expiry).
		 * So does a task whose files do not fit (task_room.h): its
		 * folder, links to the blobs it got, goes at once. */
		post_failure(f, task_id, attempt, reason, !task.build_only && rc != LL_ENOSPACE);
		if (rc == LL_ENOSPACE)
			remove_work(task_id, attempt, work_dir);
		work_folders_prune(f->work_root, WORK_FAILED_KEPT, 0,
				   NULL); /* its folder kept, within the budget */
		return TASK_FAILED;
	}

	/* Finished: spooled before it is posted, so it survives a restart. */
	outcome = TASK_SUCCEEDED;
	cJSON_DeleteItemFromObjectCaseSensitive(result, "attempt");
	if (!cJSON_AddNumberToObject(result, "attempt", (double)attempt) || !(text = print_object(result))) {
		cJSON_Delete(result);
		post_failure(f, task_id, attempt, "Out of memory.", true);
		return TASK_FAILED;
	}
	cJSON_Delete(result);
	if (strlen(text) > SPOOL_RESULT_LIMIT) {
		snprintf(reason, sizeof(reason), "The result is larger than %zu bytes.", SPOOL_RESULT_LIMIT);
		post_failure(f, task_id, attempt, reason, false);
		free(text);
		return TASK_FAILED;
	}
	fleet_log_task(LOG_INFO, "task_finished", task_id, attempt, NULL, NULL);
	if ((rc = spool_put(f->options->data_dir, task_id, attempt, text)) < 0)
		fleet_log_task(LOG_WARN, "spool_failed", task_id, attempt, "reason", err_message(rc));
	rc = deliver_result(f, task_id, attempt, text);
	free(text);
	remove_work(task_id, attempt, work_dir);
	if (rc == LL_EAUTH)
		return TASK_FATAL;
	if (rc == LL_ESTATE)
		return TASK_STOPPED; /* still spooled: delivered on the next start */
	return outcome;
}

/* What one long poll brought. */
enum lease_outcome {
	LEASE_NOTHING,   /* a 204 after most of the wait: poll again at once */
	LEASE_CUT_SHORT, /* a 204 well before the wait was over: back off */
	LEASE_TASK,      /* *RET_LEASE holds a task */
};

/* The problem with a 200 lease body, or NULL when it is a task: a JSON
 * object with an integer task_id and attempt (the job is checked later,
 * with every bound, by run_task()). */
static const char *lease_problem(const cJSON *body)
{
	long long id, attempt;

	if (!body)
		return "is not a JSON object";
	if (json_get_int(body, "task_id", 1, 9007199254740992LL, true, 0, &id) < 0)
		return "has no task_id (an integer from 1)";
	if (json_get_int(body, "attempt", 1, 1000000, true, 0, &attempt) < 0)
		return "has no attempt (an integer 1..1000000)";
	return NULL;
}

/* One long poll: a lease_outcome, or < 0 for an error (LL_EAUTH: the
 * token was refused; LL_ESTATE: stopping; LL_EIO: the server could not be
 * reached or failed; LL_EFORMAT: a 200 that is not a task, LL_EINVAL
 * another status, both with their reason). *RET_RETRY_AFTER_MS is the
 * answer's Retry-After (0: none). */
/* The wait a lease asks for: LEASE_WAIT_SECONDS, or the update check's
 * period when that is shorter, since an idle agent checks for a new build
 * only between two polls (docs/agent.md, "Updates"). */
static int lease_wait_seconds(const struct fleet *f)
{
	long long check_s = f->update.check_ms / 1000;

	return check_s > 0 && check_s < LEASE_WAIT_SECONDS ? (int)check_s : LEASE_WAIT_SECONDS;
}

static int lease_once(struct fleet *f, cJSON **ret_lease, long long *ret_retry_after_ms)
{
	struct rest_answer a;
	char body[UPDATE_LEASE_FIELDS_MAX + 64], fields[UPDATE_LEASE_FIELDS_MAX], reason[400];
	long long started_ms = clock_monotonic_us() / 1000;
	const char *problem;
	int rc;

	*ret_retry_after_ms = 0;
	update_lease_fields(&f->update, fields, sizeof(fields));
	int wait_s = lease_wait_seconds(f);
	snprintf(body, sizeof(body), "{\"wait\":%d%s}", wait_s, fields);
	rc = rest_client_post(&f->http, "/api/v1/lease", body, LEASE_TIMEOUT_SECONDS, &a);
	if (rc < 0)
		return rc;
	*ret_retry_after_ms = retry_after_ms(&a);
	/* The version went (a 400: a loadlabd that knows no agent_version). */
	if (a.status == 200 || a.status == 204 || a.status == 400)
		update_lease_sent(&f->update);
	if (a.status == 200 || a.status == 204)
		update_confirm(&f->update); /* the server took this copy's lease request */
	if (a.status == 204) {
		rest_answer_release(&a);
		return clock_monotonic_us() / 1000 - started_ms < wait_s * 1000LL / 2 ? LEASE_CUT_SHORT
										      : LEASE_NOTHING;
	}
	if (a.status == 200 && !(problem = lease_problem(a.body))) {
		*ret_lease = a.body;
		a.body = NULL;
		rest_answer_release(&a);
		return LEASE_TASK;
	}
	if (a.status == 401) {
		rest_answer_release(&a);
		return token_refused(f);
	}
	fleet_describe_answer(&a, "a lease", a.status == 200 ? problem : "", reason, sizeof(reason));
	rc = err_set(a.status == 200                 ? LL_EFORMAT
		     : is_retryable_status(a.status) ? LL_EIO
						     : LL_EINVAL,
		     "%s", reason);
	rest_answer_release(&a);
	return rc;
}

static int fatal(int rc)
{
	fprintf(stderr, "loadlab-agent: %s\n", err_message(rc));
	return FLEET_EXIT_ERROR;
}

int fleet_run(const struct fleet_options *options)
{
	struct fleet f;
	long long delay = BACKOFF_FIRST_MS;
	int rc, exit_code = FLEET_EXIT_OK, fatal_rc = 0;
	bool ran_task = false;

	memset(&f, 0, sizeof(f));
	f.options = options;
	f.random_state = plat_random_seed();
	snprintf(f.work_root, sizeof(f.work_root), "%s%cwork", options->data_dir, plat_path_separator);
	if ((rc = plat_mkdirs_private(options->data_dir)) < 0 ||
	    (rc = plat_mkdirs_private(f.work_root)) < 0 || (rc = facts_detect(f.work_root, &f.facts)) < 0)
		return fatal(rc);

	if (update_begin(&f.update, options->data_dir, options->server, options->update_check_s,
			 options->update_confirm_s)) {
		exit_code = FLEET_EXIT_RESTART;
		goto out;
	}
	rc = identity_load(options->data_dir, &f.identity);
	if (rc == LL_ENOTFOUND)
		rc = enroll(&f);
	if (rc < 0) {
		exit_code = rc == LL_ESTATE ? FLEET_EXIT_OK : fatal(rc);
		goto out;
	}
	if ((rc = rest_client_open(&f.http, options->server, f.identity.token)) < 0) {
		exit_code = fatal(rc);
		goto out;
	}
	rest_client_set_abort(&f.http, stop_check, NULL);
	fleet_log_number(LOG_INFO, "agent_started", "agent_id", f.identity.id, "server", options->server);

	/* Results finished before a restart go first. */
	rc = spool_each(options->data_dir, deliver_result, &f);
	if (rc == LL_EAUTH) {
		exit_code = fatal(rc);
		goto out;
	}
	if (rc == LL_ESTATE)
		goto out;

	while (!plat_stop_requested()) {
		cJSON *lease = NULL;
		enum task_outcome outcome;
		long long retry_after = 0;
		bool build;

		if (update_between_tasks(&f.update, &f.http)) {
			exit_code = FLEET_EXIT_RESTART;
			break;
		}
		rc = lease_once(&f, &lease, &retry_after);
		if (rc == LL_ESTATE)
			break;
		if (rc == LL_EAUTH) {
			fatal_rc = rc;
			break;
		}
		if (rc < 0 || rc == LEASE_CUT_SHORT) {
			/* docs/agent.md, "Backoff": every error, and every 204 that
			 * came back long before the wait asked for. */
			if (rc < 0)
				log_event(LOG_WARN,
					  rc == LL_EFORMAT ? "lease_malformed"
					  : rc == LL_EIO   ? "server_unreachable"
							   : "lease_refused",
					  "during", "lease", "reason", err_message(rc), NULL);
			if (!backoff_wait(&f, &delay, retry_after))
				break;
			continue;
		}
		if (rc == LEASE_NOTHING) {
			delay = BACKOFF_FIRST_MS;
			continue;
		}
		build = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(lease, "kind")) &&
			strcmp(cJSON_GetObjectItemCaseSensitive(lease, "kind")->valuestring, "build") == 0;
		outcome = run_task(&f, lease);
		cJSON_Delete(lease);
		ran_task = true;
		if (outcome == TASK_FATAL) {
			fatal_rc = LL_EAUTH;
			break;
		}
		/* --once is one measuring task: a build done on the way to it
		 * does not count (docs/builds.md). */
		if (options->once && !(build && outcome == TASK_SUCCEEDED)) {
			exit_code = outcome == TASK_SUCCEEDED ? FLEET_EXIT_OK : FLEET_EXIT_TASK_FAILED;
			break;
		}
		if (outcome == TASK_STOPPED)
			break;
		/* A server that keeps sending tasks the agent refuses is not
		 * polled in a tight loop either. */
		if (outcome != TASK_REFUSED)
			delay = BACKOFF_FIRST_MS;
		else if (!backoff_wait(&f, &delay, 0))
			break;
	}
	/* --once stopped before it had a task: it did not do what it was for. */
	if (options->once && !ran_task && exit_code == FLEET_EXIT_OK)
		exit_code = FLEET_EXIT_TASK_FAILED;
	log_event(LOG_INFO, "agent_stopped", NULL);
	if (fatal_rc < 0)
		exit_code = fatal(fatal_rc); /* the last line the user sees */
out:
	rest_client_close(&f.http);
	cJSON_Delete(f.facts);
	return exit_code;
}
