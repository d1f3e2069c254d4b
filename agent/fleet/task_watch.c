/* A running task's heartbeats and progress (task_watch.h). */
#include "task_watch.h"

#include "fleet_log.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "loadlab/plat.h"
#include "loadlab/rest_client.h"

#include <stdio.h>
#include <string.h>

/* Transfer timeout of a heartbeat or a progress report. */
#define HEARTBEAT_TIMEOUT_SECONDS 10
/* Progress is posted at most this often (a phase change goes at once). */
#define PROGRESS_INTERVAL_MS 250

static const char *const phase_names[] = {
	"generate", "build", "transform", "verify", "warm", "cold", "churn", "report", NULL,
};

/* Reads the cancellation flag from a progress or heartbeat answer. */
static void note_answer(struct task_watch *w, const struct rest_answer *a, bool heartbeat)
{
	const cJSON *tasks, *task;
	bool listed = false;

	if (a->status == 401) {
		atomic_store(&w->auth_failed, 1);
		return;
	}
	if (a->status == 409) {
		/* stale_attempt or task_cancelled: our lease is gone either way. */
		if (strcmp(a->error_code, "task_cancelled") == 0)
			atomic_store(&w->cancelled, 1);
		else
			atomic_store(&w->lost, 1);
		return;
	}
	if (a->status != 200 || !a->body ||
	    (heartbeat && !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(a->body, "tasks")))) {
		char reason[400];
		fleet_describe_answer(a, heartbeat ? "a heartbeat" : "a progress report",
				      a->status != 200 ? ""
				      : !a->body       ? "is not a JSON object"
						       : "has no \"tasks\" array",
				      reason, sizeof(reason));
		fleet_log_task(LOG_WARN, heartbeat ? "heartbeat_malformed" : "progress_malformed", w->task_id,
			       w->attempt, "reason", reason);
		return;
	}
	if (!heartbeat) {
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a->body, "cancelled")))
			atomic_store(&w->cancelled, 1);
		return;
	}
	tasks = cJSON_GetObjectItemCaseSensitive(a->body, "tasks");
	cJSON_ArrayForEach(task, tasks) {
		long long id, attempt;
		if (json_get_int(task, "task_id", 1, 9007199254740992LL, true, 0, &id) < 0 ||
		    id != w->task_id)
			continue;
		if (json_get_int(task, "attempt", 1, 1000000, false, w->attempt, &attempt) < 0 ||
		    attempt != w->attempt)
			continue;
		listed = true;
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(task, "cancelled")))
			atomic_store(&w->cancelled, 1);
	}
	if (!listed && cJSON_IsArray(tasks))
		atomic_store(&w->lost, 1);
}

static bool watch_done(void *context)
{
	struct task_watch *w = context;

	return atomic_load(&w->done) != 0;
}

void task_watch_heartbeat_main(void *arg)
{
	struct task_watch *w = arg;
	struct rest_client c;
	struct rest_answer a;
	char heartbeat_path[64], progress_path[64];
	long long next_heartbeat = clock_monotonic_us() / 1000 + w->heartbeat_ms;
	long long last_progress = 0;
	int posted_seq = 0;

	if (rest_client_open(&c, w->server, w->token) < 0) {
		log_event(LOG_ERROR, "heartbeat_failed", "reason", err_message(LL_ENOMEM), NULL);
		return;
	}
	rest_client_set_abort(&c, watch_done, w);
	snprintf(heartbeat_path, sizeof(heartbeat_path), "/api/v1/agents/%lld/heartbeat", w->agent_id);
	snprintf(progress_path, sizeof(progress_path), "/api/v1/tasks/%lld/progress", w->task_id);
	while (!atomic_load(&w->done)) {
		long long now = clock_monotonic_us() / 1000;
		int seq = atomic_load(&w->progress_seq);
		int phase = atomic_load(&w->phase);

		if (seq != posted_seq && phase >= 0 && now - last_progress >= PROGRESS_INTERVAL_MS) {
			char body[160];
			snprintf(body, sizeof(body), "{\"attempt\":%lld,\"phase\":\"%s\",\"percent\":%d}",
				 w->attempt, phase_names[phase], atomic_load(&w->percent));
			last_progress = now;
			if (rest_client_post(&c, progress_path, body, HEARTBEAT_TIMEOUT_SECONDS, &a) == 0) {
				note_answer(w, &a, false);
				if (a.status == 200) {
					posted_seq = seq;
					next_heartbeat = now + w->heartbeat_ms;
				}
				rest_answer_release(&a);
			}
		} else if (now >= next_heartbeat) {
			if (rest_client_post(&c, heartbeat_path, "{}", HEARTBEAT_TIMEOUT_SECONDS, &a) == 0) {
				note_answer(w, &a, true);
				next_heartbeat = now + (a.status == 200 ? w->heartbeat_ms : 1000);
				rest_answer_release(&a);
			} else {
				next_heartbeat = now + 1000;
			}
		}
		plat_sleep_ms(100);
	}
	rest_client_close(&c);
}

bool task_watch_progress(void *context, const char *phase, int percent)
{
	struct task_watch *w = context;

	for (int i = 0; phase && phase_names[i]; i++) {
		if (strcmp(phase, phase_names[i]) != 0)
			continue;
		if (percent < 0)
			percent = 0;
		if (percent > 100)
			percent = 100;
		if (atomic_load(&w->phase) != i || atomic_load(&w->percent) != percent) {
			atomic_store(&w->percent, percent);
			atomic_store(&w->phase, i);
			atomic_fetch_add(&w->progress_seq, 1);
		}
		break;
	}
	return atomic_load(&w->cancelled) || atomic_load(&w->lost) || atomic_load(&w->auth_failed) ||
	       plat_stop_requested();
}
