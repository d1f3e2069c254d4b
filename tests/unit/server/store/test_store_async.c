/* The store's writes that do not block their caller (store_async.h): each
 * call is told once, after its commit; calls queued while the database is
 * locked share transactions and fsyncs; the answers are those of the
 * blocking functions; a lease's job part, kept printed per job, is the
 * job's own even when two jobs share a slot. */
#include "check.h"
#include "store/store.h"
#include "store/store_async.h"
#include "server/store_fixture.h"

#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char db_path[256];

/* What the done callbacks saw. */
static pthread_mutex_t told_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t told_cond = PTHREAD_COND_INITIALIZER;
static int told;
static bool told_on_caller;
static pthread_t caller;

static void on_done(void *context)
{
	int *mine = context;

	pthread_mutex_lock(&told_lock);
	(*mine)++;
	told++;
	told_on_caller |= pthread_equal(pthread_self(), caller);
	pthread_cond_broadcast(&told_cond);
	pthread_mutex_unlock(&told_lock);
}

/* Waits until TOLD reaches N (up to 10 s); the count reached. */
static int wait_told(int n)
{
	int got;

	pthread_mutex_lock(&told_lock);
	for (int i = 0; i < 1000 && told < n; i++) {
		pthread_mutex_unlock(&told_lock);
		usleep(10 * 1000);
		pthread_mutex_lock(&told_lock);
	}
	got = told;
	pthread_mutex_unlock(&told_lock);
	return got;
}

/* Submits job NAME, its spec ending with EXTRA members. */
static long long submit(struct store *s, const char *name, const char *extra, long long now)
{
	char text[256];

	snprintf(text, sizeof(text),
		 "{\"name\":\"%s\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
		 "\"variants\":[\"default\"]%s}",
		 name, extra);
	return fixture_submit(s, text, now);
}

static long long enroll(struct store *s, const char *name, long long now)
{
	return fixture_enroll(s, name, NULL, now);
}

static long long num(const cJSON *obj, const char *key)
{
	return fixture_num(obj, key);
}

#define AGENTS 8

/* A lease, a heartbeat and a result per agent, all queued while another
 * connection holds the write lock: nobody is told before it is released,
 * every call is told once, on another thread, and the writes share
 * transactions and fsyncs. */
static void test_calls_share_commits(void)
{
	struct store *s = NULL;
	struct store_call *calls[AGENTS];
	struct store_stats before, after;
	int mine[AGENTS] = {0};
	long long t = 1000000, agents[AGENTS], tasks[AGENTS], attempts[AGENTS];
	sqlite3 *blocker = NULL;
	cJSON *out = NULL;
	bool replayed = true;

	caller = pthread_self();
	CHECK_EQ_INT(store_open(db_path, &test_store_options, &s), 0);
	for (int i = 0; i < AGENTS; i++) {
		char name[16];
		snprintf(name, sizeof(name), "a%d", i);
		agents[i] = enroll(s, name, t);
		snprintf(name, sizeof(name), "j%d", i);
		CHECK(submit(s, name, "", t) > 0);
	}
	CHECK_EQ_INT(store_stats(s, 0, &before), 0);
	CHECK_EQ_INT(sqlite3_open(db_path, &blocker), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_exec(blocker, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	for (int i = 0; i < AGENTS; i++)
		CHECK_EQ_INT(store_task_lease_begin(s, agents[i], t, on_done, &mine[i], &calls[i]), 0);
	usleep(300 * 1000);
	CHECK_EQ_INT(wait_told(0), 0); /* nothing committed while the lock is held */
	CHECK_EQ_INT(sqlite3_exec(blocker, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(blocker);
	CHECK_EQ_INT(wait_told(AGENTS), AGENTS);
	for (int i = 0; i < AGENTS; i++) {
		CHECK_EQ_INT(mine[i], 1);
		CHECK_EQ_INT(store_task_lease_end(calls[i], &out), 0);
		CHECK(out != NULL);
		tasks[i] = num(out, "task_id");
		attempts[i] = num(out, "attempt");
		CHECK_EQ_INT(attempts[i], 1);
		cJSON_Delete(out);
	}
	CHECK(!told_on_caller);
	CHECK_EQ_INT(store_stats(s, 0, &after), 0);
	CHECK_EQ_INT(after.committed_ops - before.committed_ops, AGENTS);
	CHECK(after.commits - before.commits < AGENTS);
	CHECK(after.syncs - before.syncs >= 1);
	CHECK(after.syncs - before.syncs <= after.commits - before.commits);

	/* Heartbeats list the lease; results answer as the blocking one would
	 * on a replay. */
	for (int i = 0; i < AGENTS; i++)
		CHECK_EQ_INT(store_agent_heartbeat_begin(s, agents[i], t + 1, on_done, &mine[i], &calls[i]),
			     0);
	CHECK_EQ_INT(wait_told(2 * AGENTS), 2 * AGENTS);
	for (int i = 0; i < AGENTS; i++) {
		const cJSON *listed;
		CHECK_EQ_INT(store_agent_heartbeat_end(calls[i], &out), 0);
		listed = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "tasks"), 0);
		CHECK_EQ_INT(num(listed, "task_id"), tasks[i]);
		cJSON_Delete(out);
	}
	for (int i = 0; i < AGENTS; i++)
		CHECK_EQ_INT(store_task_result_begin(s, agents[i], tasks[i], attempts[i], "{\"x\":1}", 7,
						     t + 2, on_done, &mine[i], &calls[i]),
			     0);
	CHECK_EQ_INT(wait_told(3 * AGENTS), 3 * AGENTS);
	for (int i = 0; i < AGENTS; i++) {
		cJSON *again = NULL;
		CHECK_EQ_INT(store_task_result_end(calls[i], &out, &replayed), 0);
		CHECK(!replayed);
		CHECK_EQ_INT(store_task_result(s, agents[i], tasks[i], attempts[i], "{\"x\":2}", 7, t + 3,
					       &again, &replayed),
			     0);
		CHECK(replayed);
		CHECK(cJSON_Compare(out, again, true));
		cJSON_Delete(out);
		cJSON_Delete(again);
	}

	/* A failed write is told too, and its error comes with the end; a
	 * call dropped unanswered frees what it holds. */
	CHECK_EQ_INT(store_task_result_begin(s, agents[0], tasks[1], 1, "{}", 2, t + 4, on_done, &mine[0],
					     &calls[0]),
		     0);
	CHECK_EQ_INT(store_task_lease_begin(s, agents[1], t + 4, on_done, &mine[1], &calls[1]), 0);
	CHECK_EQ_INT(wait_told(3 * AGENTS + 2), 3 * AGENTS + 2);
	CHECK(store_task_result_end(calls[0], &out, &replayed) < 0);
	CHECK(out == NULL);
	store_call_free(calls[1]);
	store_close(s);
}

/* Checks that LEASE (deleted) is of job JOB_ID and that its raw "job"
 * member begins as the job's own object would print. */
static void check_lease_job(cJSON *lease, long long job_id)
{
	const cJSON *job = cJSON_GetObjectItem(lease, "job");
	char expected[64];

	CHECK_EQ_INT(num(lease, "job_id"), job_id);
	CHECK(cJSON_IsRaw(job));
	snprintf(expected, sizeof(expected), "{\"id\":%lld,\"name\":\"job%lld\",", job_id, job_id);
	CHECK(job && strncmp(job->valuestring, expected, strlen(expected)) == 0);
	cJSON_Delete(lease);
}

/* The job part of a lease is kept printed per job in 64 slots: jobs 1 and
 * 65 share one. Two agents take each job's two tasks in turn (the second
 * finds the job's slot filled), and each lease names its own job. */
static void test_lease_job_slots(const char *path)
{
	struct store *s = NULL;
	cJSON *lease = NULL;
	long long t = 1000000, a, b;
	char name[16];

	CHECK_EQ_INT(store_open(path, &test_store_options, &s), 0);
	a = enroll(s, "a", t);
	b = enroll(s, "b", t);
	for (int i = 1; i <= 65; i++) {
		snprintf(name, sizeof(name), "job%d", i);
		CHECK_EQ_INT(submit(s, name, ",\"matrix\":{\"each_agent\":{}}", t), i);
	}
	for (long long i = 1; i <= 65; i++) {
		CHECK_EQ_INT(store_task_lease(s, a, t, &lease), 0);
		check_lease_job(lease, i);
		CHECK_EQ_INT(store_task_lease(s, b, t, &lease), 0);
		check_lease_job(lease, i);
	}
	store_close(s);
}

int main(void)
{
	char dir[FIXTURE_DIR_SIZE];
	char path[300];

	fixture_dir_make("store-async", dir);
	snprintf(db_path, sizeof(db_path), "%s/store.db", dir);
	test_calls_share_commits();
	snprintf(path, sizeof(path), "%s/slots.db", dir);
	test_lease_job_slots(path);
	return fixture_dir_finish(dir);
}
