/* sqlite_blobs.c - what the SQLite store knows of blobs: the jobs and the
 * schedules (their job to submit) that reference them (store.h). */
#include "sqlite_int.h"

#include "store/blob_refs.h"

#include "loadlab/err.h"

/* Adds the blobs of one job's spec (column 0) to the array CONTEXT
 * (blob_refs.h). */
static void add_references(void *context, sqlite3_stmt *row)
{
	cJSON *spec = column_json(row, 0);

	blob_refs_add_spec(context, spec);
	cJSON_Delete(spec);
}

/* Adds the files of one build's result (column 0) to the array CONTEXT
 * (blob_refs.h). */
static void add_build_references(void *context, sqlite3_stmt *row)
{
	cJSON *result = column_json(row, 0);

	blob_refs_add_build_result(context, result);
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
