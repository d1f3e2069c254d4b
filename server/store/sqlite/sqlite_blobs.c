/* sqlite_blobs.c - what the SQLite store knows of blobs: the jobs and the
 * schedules (their job to submit) that reference them (store.h). */
#include "sqlite_int.h"

#include "loadlab/err.h"
#include "loadlab/job_spec.h"

#include <stdio.h>
#include <string.h>

/* Adds the blobs of one job's spec (column 0) to the array CONTEXT. */
static void add_references(void *context, sqlite3_stmt *row)
{
	cJSON *spec = column_json(row, 0), *hashes = context;
	const cJSON *program = cJSON_GetObjectItemCaseSensitive(spec, "program");
	const cJSON *file, *build;
	char hex[65];

	for (int b = 0; (build = job_spec_program_build(program, b, NULL)); b++)
		cJSON_ArrayForEach(file, cJSON_GetObjectItemCaseSensitive(build, "files"))
			if (cJSON_IsString(file) && job_spec_blob_ref_valid(file->valuestring, hex))
				cJSON_AddItemToArray(hashes, cJSON_CreateString(hex));
	cJSON_Delete(spec);
}

/* Adds the files of FILES ([{"name","sha256","size"}]) to HASHES. */
static void add_files(cJSON *hashes, const cJSON *files)
{
	const cJSON *file;
	char hex[65];

	cJSON_ArrayForEach(file, files) {
		const cJSON *sha = cJSON_GetObjectItemCaseSensitive(file, "sha256");
		char ref[80];
		if (!cJSON_IsString(sha) || strlen(sha->valuestring) != 64)
			continue;
		snprintf(ref, sizeof(ref), "sha256:%s", sha->valuestring);
		if (job_spec_blob_ref_valid(ref, hex))
			cJSON_AddItemToArray(hashes, cJSON_CreateString(hex));
	}
}

/* Adds the files of one build's result (column 0) to the array CONTEXT:
 * its variants' and its floor's (docs/builds.md). */
static void add_build_references(void *context, sqlite3_stmt *row)
{
	cJSON *result = column_json(row, 0), *hashes = context;
	const cJSON *variant;

	cJSON_ArrayForEach(variant, cJSON_GetObjectItemCaseSensitive(result, "variants"))
		add_files(hashes, cJSON_GetObjectItemCaseSensitive(variant, "files"));
	add_files(hashes, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(result, "floor"),
							   "files"));
	cJSON_Delete(result);
}

int sqlite_blob_references(struct store *s, cJSON **ret_hashes)
{
	cJSON *hashes = cJSON_CreateArray();
	int rc;

	if (!hashes)
		return LL_ENOMEM;
	rc = db_reader_each(s, "SELECT spec FROM jobs WHERE family = 'program'", add_references, hashes);
	/* The builds of the jobs still to measure. */
	if (rc == 0)
		rc = db_reader_each(s,
				    "SELECT r.body FROM results r JOIN tasks t ON t.id = r.task_id"
				    " JOIN jobs j ON j.id = t.job_id"
				    " WHERE t.kind = 'build' AND j.state IN ('queued', 'running')",
				    add_build_references, hashes);
	if (rc == 0)
		rc = db_reader_each(s, "SELECT job FROM schedules WHERE deleted = 0", add_references, hashes);
	return store_answer(rc, hashes, ret_hashes);
}
