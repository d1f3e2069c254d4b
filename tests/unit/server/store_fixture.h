/*
 * store_fixture.h - the store options the server's unit tests open their
 * stores with (short leases and backoffs, so that expiry and retries can
 * be driven by a test's own clock), their jobs and agents, and the
 * temporary folder their store files live in.
 */
#ifndef LOADLAB_TEST_STORE_FIXTURE_H
#define LOADLAB_TEST_STORE_FIXTURE_H

#include "check.h"
#include "store/store.h"

#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct store_options test_store_options = {
	.lease_ms = 1000,
	.max_attempts = 3,
	.backoff_ms = 500,
	.backoff_max_ms = 1500,
	.offline_after_ms = 60000,
	/* These tests play agents that do not build (docs/builds.md). */
	.each_agent_build = true,
};

/* The job JOB_TEXT (a submission's JSON) normalized and created at NOW by
 * "user:test": its id, or -1 after a failed check. */
static inline long long fixture_submit(struct store *s, const char *job_text, long long now)
{
	cJSON *job = NULL, *spec = NULL, *created = NULL;
	long long id = -1;

	CHECK_EQ_INT(json_parse(job_text, strlen(job_text), 0, &job), 0);
	CHECK_EQ_INT(job_spec_normalize(job, &spec), 0);
	if (spec && store_job_create(s, spec, "user:test", now, &created) == 0)
		id = (long long)cJSON_GetObjectItem(created, "id")->valuedouble;
	cJSON_Delete(job);
	cJSON_Delete(spec);
	cJSON_Delete(created);
	return id;
}

/* Agent NAME enrolled at NOW with FACTS (a JSON object's text; NULL: {})
 * and a token hash made of its name: its id. */
static inline long long fixture_enroll(struct store *s, const char *name, const char *facts_text,
				       long long now)
{
	unsigned char hash[STORE_TOKEN_HASH_SIZE] = {0};
	cJSON *facts = NULL, *labels = cJSON_CreateObject();
	long long id = 0;

	if (!facts_text || json_parse(facts_text, strlen(facts_text), 0, &facts) < 0)
		facts = cJSON_CreateObject();
	snprintf((char *)hash, sizeof(hash), "%s", name);
	CHECK_EQ_INT(store_agent_enroll(s, name, facts, labels, hash, now, &id), 0);
	cJSON_Delete(facts);
	cJSON_Delete(labels);
	return id;
}

/* OBJ's number KEY, or -1 when it has none. */
static inline long long fixture_num(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItem(obj, key);
	return cJSON_IsNumber(item) ? (long long)item->valuedouble : -1;
}

/* DIR (FIXTURE_DIR_SIZE bytes) becomes a new folder /tmp/loadlab-NAME-XXXXXX
 * for a test's store files; the test exits 1 when it cannot be made. */
#define FIXTURE_DIR_SIZE 64
static inline void fixture_dir_make(const char *name, char *dir)
{
	snprintf(dir, FIXTURE_DIR_SIZE, "/tmp/loadlab-%s-XXXXXX", name);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
}

/* Removes DIR and what is in it; the test's exit code (check_finish()),
 * 1 when DIR could not be removed. */
static inline int fixture_dir_finish(const char *dir)
{
	char command[FIXTURE_DIR_SIZE + 16];

	snprintf(command, sizeof(command), "rm -rf %s", dir);
	if (system(command) != 0)
		return 1;
	return check_finish();
}

#endif
