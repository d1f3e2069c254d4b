/* The SQLite store: queue semantics with a controlled clock, group commit
 * under concurrent writers, reopening. */
#include "check.h"
#include "store/store.h"
#include "server/store_fixture.h"

#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const struct store_options *const options = &test_store_options;

static char db_path[256];

static long long submit(struct store *s, const char *job_text, long long now)
{
	return fixture_submit(s, job_text, now);
}

static long long enroll(struct store *s, const char *name, const char *facts_text, long long now)
{
	return fixture_enroll(s, name, facts_text, now);
}

static long long num(const cJSON *obj, const char *key)
{
	return fixture_num(obj, key);
}

static const char *str(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItem(obj, key);
	return cJSON_IsString(item) ? item->valuestring : "";
}

/* The four jobs PREFIX0..PREFIX3, one "default" variant each and the
 * members JOBS[i], submitted at NOW; their ids into IDS. */
static void submit_four(struct store *s, const char *prefix, const char *const jobs[4], long long now,
			long long ids[4])
{
	char text[512];

	for (int i = 0; i < 4; i++) {
		snprintf(text, sizeof(text),
			 "{\"name\":\"%s%d\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
			 "\"variants\":[\"default\"],%s}",
			 prefix, i, jobs[i]);
		ids[i] = submit(s, text, now);
		CHECK(ids[i] > 0);
	}
}

static void test_lease_expiry_retry_dead(void)
{
	struct store *s = NULL;
	cJSON *lease = NULL, *out = NULL, *job = NULL;
	long long t = 1000000, a, b, task;
	bool replayed = true;
	int expired = -1;

	CHECK_EQ_INT(store_open(db_path, options, &s), 0);
	a = enroll(s, "a", "{\"os\":\"win10\"}", t);
	b = enroll(s, "b", "{\"os\":\"winxp\"}", t);
	CHECK(submit(s,
		     "{\"name\":\"j\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
		     "\"variants\":[\"default\"],\"matrix\":{\"cells\":{\"os\":[\"win10\"]}}}",
		     t) > 0);

	CHECK_EQ_INT(store_task_lease(s, b, t, &lease), 0);
	CHECK(lease == NULL); /* winxp does not match */
	CHECK_EQ_INT(store_task_lease(s, a, t, &lease), 0);
	CHECK(lease != NULL);
	task = num(lease, "task_id");
	CHECK_EQ_INT(num(lease, "attempt"), 1);
	cJSON_Delete(lease);

	/* Not yet expired at t+1000 (strictly before), expired after. */
	CHECK_EQ_INT(store_expire_leases(s, t + 1000, &expired), 0);
	CHECK_EQ_INT(expired, 0);
	CHECK_EQ_INT(store_expire_leases(s, t + 1001, &expired), 0);
	CHECK_EQ_INT(expired, 1);

	/* Attempt 2; its failure backs off 500 ms << (2-1) = 1000 ms. */
	CHECK_EQ_INT(store_task_lease(s, a, t + 2000, &lease), 0);
	CHECK_EQ_INT(num(lease, "attempt"), 2);
	cJSON_Delete(lease);
	CHECK_EQ_INT(store_task_fail(s, a, task, 2, "boom", true, t + 2100, &out), 0);
	CHECK_EQ_STR(str(out, "state"), "queued");
	cJSON_Delete(out);
	CHECK_EQ_INT(store_task_lease(s, a, t + 3099, &lease), 0);
	CHECK(lease == NULL);
	CHECK_EQ_INT(store_task_lease(s, a, t + 3100, &lease), 0);
	CHECK_EQ_INT(num(lease, "attempt"), 3);
	cJSON_Delete(lease);

	/* A stale attempt and another agent are refused; nothing changes. */
	CHECK_EQ_INT(store_task_result(s, a, task, 2, "{}", 2, t + 3200, &out, &replayed),
		     STORE_STALE_ATTEMPT);
	CHECK_EQ_INT(store_task_progress(s, b, task, 3, "build", 5, t + 3200, &out), LL_EFORBIDDEN);

	/* The third attempt expires: max_attempts reached, the task is dead. */
	CHECK_EQ_INT(store_expire_leases(s, t + 5000, &expired), 0);
	CHECK_EQ_INT(expired, 1);
	CHECK_EQ_INT(store_job_get(s, 1, &job), 0);
	CHECK_EQ_STR(str(job, "state"), "failed");
	CHECK_EQ_STR(str(cJSON_GetArrayItem(cJSON_GetObjectItem(job, "tasks"), 0), "state"), "dead");
	cJSON_Delete(job);
	store_close(s);
}

static void test_result_once_and_reopen(void)
{
	struct store *s = NULL;
	cJSON *lease = NULL, *first = NULL, *again = NULL, *job = NULL;
	long long t = 5000000, a, task;
	bool replayed = true;
	char *text = NULL;

	CHECK_EQ_INT(store_open(db_path, options, &s), 0);
	a = enroll(s, "c", "{}", t);
	CHECK(submit(s,
		     "{\"name\":\"r\",\"family\":\"elf\",\"generator\":{\"dlls\":1,\"exports\":1},"
		     "\"variants\":[\"now\"]}",
		     t) == 2);
	CHECK_EQ_INT(store_task_lease(s, a, t, &lease), 0);
	task = num(lease, "task_id");
	cJSON_Delete(lease);
	CHECK_EQ_INT(store_task_result(s, a, task, 1, "{\"x\":1}", 7, t + 1, &first, &replayed), 0);
	CHECK(!replayed);
	CHECK_EQ_INT(store_task_result(s, a, task, 1, "{\"x\":2}", 7, t + 2, &again, &replayed), 0);
	CHECK(replayed);
	CHECK(cJSON_Compare(first, again, true));
	CHECK_EQ_INT(store_result_get(s, num(first, "result_id"), &text), 0);
	CHECK_EQ_STR(text, "{\"x\":1}"); /* the first one is kept */
	free(text);
	cJSON_Delete(first);
	cJSON_Delete(again);
	store_close(s);

	/* Reopened: the migration is not run twice and the data is there. */
	CHECK_EQ_INT(store_open(db_path, options, &s), 0);
	CHECK_EQ_INT(store_job_get(s, 2, &job), 0);
	CHECK_EQ_STR(str(job, "state"), "done");
	cJSON_Delete(job);
	CHECK_EQ_INT(store_integrity_check(s), 0);
	store_close(s);
}

#define WRITERS 8
#define WRITES_EACH 50

static struct store *shared_store;

static void *writer(void *arg)
{
	long n = (long)arg;
	for (int i = 0; i < WRITES_EACH; i++) {
		unsigned char hash[STORE_TOKEN_HASH_SIZE] = {0};
		snprintf((char *)hash, sizeof(hash), "w%ld-%d", n, i);
		if (store_token_create(shared_store, STORE_TOKEN_USER, "w", NULL, hash, 1, NULL) < 0)
			return (void *)1;
	}
	return NULL;
}

/* Group commit: while another connection holds the database's write lock,
 * the writer thread blocks in BEGIN (its busy timeout is 10 s) and the
 * writes of all threads pile up in its queue; once the lock is released
 * they are committed together, so there are strictly fewer transactions
 * than writes. */
static void test_group_commit(void)
{
	pthread_t threads[WRITERS];
	struct store_stats before, after;
	sqlite3 *blocker = NULL;
	long long count = 0, writes, commits;
	int failures = 0;

	CHECK_EQ_INT(store_open(db_path, options, &shared_store), 0);
	CHECK_EQ_INT(store_stats(shared_store, 0, &before), 0);
	CHECK_EQ_INT(sqlite3_open(db_path, &blocker), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_exec(blocker, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	for (long i = 0; i < WRITERS; i++)
		pthread_create(&threads[i], NULL, writer, (void *)i);
	usleep(300 * 1000);
	/* Nothing can have been committed while the lock is held. */
	CHECK_EQ_INT(store_stats(shared_store, 0, &after), 0);
	CHECK_EQ_INT(after.commits - before.commits, 0);
	CHECK_EQ_INT(sqlite3_exec(blocker, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(blocker);
	for (int i = 0; i < WRITERS; i++) {
		void *rc;
		pthread_join(threads[i], &rc);
		failures += rc != NULL;
	}
	CHECK_EQ_INT(failures, 0);
	CHECK_EQ_INT(store_token_count(shared_store, STORE_TOKEN_USER, &count), 0);
	CHECK_EQ_INT(count, WRITERS * WRITES_EACH);
	CHECK_EQ_INT(store_stats(shared_store, 0, &after), 0);
	writes = after.committed_ops - before.committed_ops;
	commits = after.commits - before.commits;
	CHECK_EQ_INT(writes, WRITERS * WRITES_EACH);
	CHECK(commits >= 1);
	CHECK(commits < writes);
	printf("group commit: %lld writes in %lld transactions\n", writes, commits);
	store_close(shared_store);
}

/* A lease merges the tasks pinned to the agent and the unpinned ones in
 * the queue's order (priority, then submission), and never takes a task
 * pinned to another agent. */
static void test_lease_order_pinned_and_unpinned(const char *path)
{
	static const char *const jobs[] = {
		"\"priority\":0,\"matrix\":{\"cells\":{\"os\":[\"win10\"]}}", /* unpinned, low */
		"\"priority\":5,\"matrix\":{\"each_agent\":{}}",              /* pinned, high */
		"\"priority\":5,\"matrix\":{\"cells\":{\"os\":[\"win10\"]}}", /* unpinned, high */
		"\"priority\":0,\"matrix\":{\"each_agent\":{}}",              /* pinned, low */
	};
	/* Agent a's order: both high (pinned first: lower id), then both low. */
	static const int expected[] = {1, 2, 0, 3};
	struct store *s = NULL;
	long long t = 1000000, a, b, ids[4];
	cJSON *lease = NULL;

	CHECK_EQ_INT(store_open(path, options, &s), 0);
	a = enroll(s, "a", "{\"os\":\"win10\"}", t);
	b = enroll(s, "b", "{\"os\":\"win10\"}", t);
	submit_four(s, "j", jobs, t, ids);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ_INT(store_task_lease(s, a, t, &lease), 0);
		CHECK(lease != NULL);
		CHECK_EQ_INT(num(lease, "job_id"), ids[expected[i]]);
		cJSON_Delete(lease);
	}
	CHECK_EQ_INT(store_task_lease(s, a, t, &lease), 0);
	CHECK(lease == NULL);
	/* b finds its own two pinned tasks, high first, and nothing else. */
	CHECK_EQ_INT(store_task_lease(s, b, t, &lease), 0);
	CHECK_EQ_INT(num(lease, "job_id"), ids[1]);
	cJSON_Delete(lease);
	CHECK_EQ_INT(store_task_lease(s, b, t, &lease), 0);
	CHECK_EQ_INT(num(lease, "job_id"), ids[3]);
	cJSON_Delete(lease);
	CHECK_EQ_INT(store_task_lease(s, b, t, &lease), 0);
	CHECK(lease == NULL);
	store_close(s);
}

/* Runs SQL on the store file at PATH outside the store; 0 on success. */
static int raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open(path, &db) == SQLITE_OK ? sqlite3_exec(db, sql, NULL, NULL, NULL) : -1;

	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

/* One text of the first row SQL gives on the store file at PATH, into
 * OUT ("" when none). */
static void raw_text(const char *path, const char *sql, char *out, size_t size)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *stmt = NULL;

	out[0] = '\0';
	if (sqlite3_open(path, &db) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW &&
	    sqlite3_column_text(stmt, 0))
		snprintf(out, size, "%s", (const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	sqlite3_close(db);
}

/* Takes a store back to schema version 6's task indexes and attempts
 * table, as loadlabd left them before pass 7 of issue 16 (less
 * tasks_ready_by_pin, which it created at every open from pass 4 on), and
 * without version 8's calibrations (issue 23), version 9's owners and
 * webhook queue (issue 26), version 10's build tasks (issue 25) and
 * version 11's retention, version 12's agent binary columns (issue 30)
 * version 13's bisections (issue 29), version 14's agent_update and
 * version 15's builder mark (issue 37). */
static const char previous_schema[] =
	"ALTER TABLE agents DROP COLUMN builder;"
	"ALTER TABLE agents DROP COLUMN agent_update;"
	"DROP TABLE bisections;"
	"ALTER TABLE series_settings DROP COLUMN retain_days;"
	"ALTER TABLE series_settings DROP COLUMN retain_points;"
	"ALTER TABLE results DROP COLUMN pruned_at;"
	"DROP TABLE calibrations;"
	"ALTER TABLE agents DROP COLUMN agent_version; ALTER TABLE agents DROP COLUMN agent_sha256;"
	"DROP INDEX alerts_webhook_due; ALTER TABLE alerts DROP COLUMN webhook_due;"
	"ALTER TABLE alerts DROP COLUMN webhook_attempts; ALTER TABLE series_settings DROP COLUMN owner;"
	"ALTER TABLE tokens DROP COLUMN team; ALTER TABLE schedules DROP COLUMN owner;"
	"DROP INDEX tasks_by_build;"
	"ALTER TABLE tasks DROP COLUMN build_task;"
	"ALTER TABLE tasks DROP COLUMN kind;"
	"DROP INDEX tasks_queued; DROP INDEX tasks_held;"
	"CREATE INDEX tasks_ready ON tasks(state, priority DESC, id);"
	"CREATE INDEX tasks_by_holder ON tasks(lease_holder, state);"
	"CREATE TABLE rowid_attempts ("
	"  task_id INTEGER NOT NULL, attempt INTEGER NOT NULL, agent_id INTEGER NOT NULL,"
	"  leased_at INTEGER NOT NULL, ended_at INTEGER, outcome TEXT,"
	"  PRIMARY KEY (task_id, attempt));"
	"INSERT INTO rowid_attempts SELECT * FROM task_attempts;"
	"DROP TABLE task_attempts;"
	"ALTER TABLE rowid_attempts RENAME TO task_attempts;"
	"PRAGMA user_version = 6;";

/* Every attempt of the store at PATH as text, in key order. */
static void attempts_text(const char *path, char *out, size_t size)
{
	raw_text(path,
		 "SELECT group_concat(task_id || ':' || attempt || ':' || agent_id || ':' || leased_at"
		 " || ':' || ifnull(ended_at, '-') || ':' || ifnull(outcome, '-'), ' ')"
		 " FROM (SELECT * FROM task_attempts ORDER BY task_id, attempt)",
		 out, size);
}

/* A store made by the previous schema (version 6) with queued, leased,
 * done and cancelled tasks opens, migrates to the task indexes of version
 * 7 (and version 8's calibrations), and its queue carries on where it was: the same leases in the same
 * order, the holder told of its cancelled task, the lease sweep. */
static void test_upgrade_from_version_6(const char *path, bool with_pin_index)
{
	static const char *const jobs[] = {
		"\"priority\":0,\"matrix\":{\"each_agent\":{}}",              /* pinned: a's, b's */
		"\"priority\":5,\"matrix\":{\"cells\":{\"os\":[\"win10\"]}}", /* unpinned, high */
		"\"priority\":1,\"matrix\":{\"cells\":{\"os\":[\"win10\"]}}", /* unpinned, cancelled */
		"\"priority\":3,\"matrix\":{\"cells\":{\"os\":[\"win10\"]}}", /* unpinned, done */
	};
	struct store *s = NULL;
	long long t = 9000000, a, b, ids[4], held, done_task;
	cJSON *lease = NULL, *out = NULL, *listed;
	bool replayed = true;
	int expired = -1;
	char text[512], attempts[512], attempts_after[512];

	CHECK_EQ_INT(store_open(path, options, &s), 0);
	a = enroll(s, "a", "{\"os\":\"win10\"}", t);
	b = enroll(s, "b", "{\"os\":\"win10\"}", t);
	submit_four(s, "u", jobs, t, ids);
	/* a leases the high one (held), then the done one's task (result),
	 * then job 2's, which is cancelled while a holds it. */
	CHECK_EQ_INT(store_task_lease(s, a, t, &lease), 0);
	CHECK_EQ_INT(num(lease, "job_id"), ids[1]);
	held = num(lease, "task_id");
	cJSON_Delete(lease);
	CHECK_EQ_INT(store_task_lease(s, a, t, &lease), 0);
	CHECK_EQ_INT(num(lease, "job_id"), ids[3]);
	done_task = num(lease, "task_id");
	cJSON_Delete(lease);
	CHECK_EQ_INT(store_task_result(s, a, done_task, 1, "{}", 2, t, &out, &replayed), 0);
	cJSON_Delete(out);
	CHECK_EQ_INT(store_task_lease(s, a, t, &lease), 0);
	CHECK_EQ_INT(num(lease, "job_id"), ids[2]);
	cJSON_Delete(lease);
	CHECK_EQ_INT(store_job_cancel(s, ids[2], t, &out), 0);
	cJSON_Delete(out);
	store_close(s);

	/* Back to version 6's indexes, as the previous loadlabd left them. */
	CHECK_EQ_INT(raw_exec(path, previous_schema), 0);
	if (with_pin_index)
		CHECK_EQ_INT(raw_exec(path, "CREATE INDEX tasks_ready_by_pin ON tasks(state, pinned_agent,"
					    " priority DESC, id)"),
			     0);
	raw_text(path, "PRAGMA user_version", text, sizeof(text));
	CHECK_EQ_STR(text, "6");
	raw_text(path, "SELECT sql FROM sqlite_master WHERE name = 'task_attempts'", text, sizeof(text));
	CHECK(strstr(text, "WITHOUT ROWID") == NULL);
	attempts_text(path, attempts, sizeof(attempts));
	CHECK(strstr(attempts, ":done") != NULL); /* the done task's, among others */

	CHECK_EQ_INT(store_open(path, options, &s), 0);
	raw_text(path, "PRAGMA user_version", text, sizeof(text));
	CHECK_EQ_STR(text, "15");
	raw_text(path, "SELECT name FROM sqlite_master WHERE name = 'calibrations'", text, sizeof(text));
	CHECK_EQ_STR(text, "calibrations");
	/* version 15: no agent is a builder until an admin marks it */
	raw_text(path, "SELECT count(*) FROM agents WHERE builder = 0", text, sizeof(text));
	CHECK_EQ_STR(text, "2");
	raw_text(path,
		 "SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master"
		 " WHERE type = 'index' AND tbl_name = 'tasks' AND sql IS NOT NULL ORDER BY name)",
		 text, sizeof(text));
	CHECK_EQ_STR(text, "tasks_by_build tasks_by_job tasks_by_job_state tasks_held tasks_queued");
	raw_text(path, "SELECT sql FROM sqlite_master WHERE name = 'task_attempts'", text, sizeof(text));
	CHECK(strstr(text, "WITHOUT ROWID") != NULL);
	attempts_text(path, attempts_after, sizeof(attempts_after));
	CHECK_EQ_STR(attempts_after, attempts);
	CHECK_EQ_INT(store_integrity_check(s), 0);

	/* The holder hears of its cancelled task once, beside its lease. */
	CHECK_EQ_INT(store_agent_heartbeat(s, a, t + 10, &out), 0);
	listed = cJSON_GetObjectItem(out, "tasks");
	CHECK_EQ_INT(cJSON_GetArraySize(listed), 2);
	CHECK_EQ_INT(num(cJSON_GetArrayItem(listed, 0), "task_id"), held);
	cJSON_Delete(out);
	CHECK_EQ_INT(store_agent_heartbeat(s, a, t + 20, &out), 0);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(out, "tasks")), 1);
	cJSON_Delete(out);
	/* What is left queued: a's pinned task, then nothing; b's pinned one. */
	CHECK_EQ_INT(store_task_lease(s, a, t + 30, &lease), 0);
	CHECK_EQ_INT(num(lease, "job_id"), ids[0]);
	cJSON_Delete(lease);
	CHECK_EQ_INT(store_task_lease(s, a, t + 30, &lease), 0);
	CHECK(lease == NULL);
	CHECK_EQ_INT(store_task_lease(s, b, t + 30, &lease), 0);
	CHECK_EQ_INT(num(lease, "job_id"), ids[0]);
	cJSON_Delete(lease);
	/* Only a's first lease was not renewed since t + 20: 3 leases out
	 * (held, a's and b's pinned), held expires first, then the other two. */
	CHECK_EQ_INT(store_expire_leases(s, t + 20 + 1001, &expired), 0);
	CHECK_EQ_INT(expired, 1);
	CHECK_EQ_INT(store_expire_leases(s, t + 30 + 1001, &expired), 0);
	CHECK_EQ_INT(expired, 2);
	CHECK_EQ_INT(store_integrity_check(s), 0);
	store_close(s);
}

int main(void)
{
	char dir[FIXTURE_DIR_SIZE];
	char path[300];

	fixture_dir_make("store", dir);
	snprintf(db_path, sizeof(db_path), "%s/store.db", dir);
	test_lease_expiry_retry_dead();
	test_result_once_and_reopen();
	test_group_commit();
	snprintf(path, sizeof(path), "%s/order.db", dir);
	test_lease_order_pinned_and_unpinned(path);
	snprintf(path, sizeof(path), "%s/upgrade.db", dir);
	test_upgrade_from_version_6(path, true);
	snprintf(path, sizeof(path), "%s/upgrade-old.db", dir);
	test_upgrade_from_version_6(path, false);
	return fixture_dir_finish(dir);
}
