/* store_blobs.c - what the store knows of blobs (store.h, "blobs"): the
 * jobs, the builds of the jobs still to measure, and the schedules (their
 * job to submit) that reference them, on every driver (db.h). */
#include "db.h"
#include "store.h"

#include "store/blob_refs.h"

#include "loadlab/err.h"

/* Adds the blobs of one job's spec (column 0) to the array CONTEXT
 * (blob_refs.h). */
static void add_references(void *context, struct db_stmt *row)
{
	cJSON *spec = db_column_json(row, 0);

	blob_refs_add_spec(context, spec);
	cJSON_Delete(spec);
}

/* Adds the files of one build's result (column 0) to the array CONTEXT
 * (blob_refs.h). */
static void add_build_references(void *context, struct db_stmt *row)
{
	cJSON *result = db_column_json(row, 0);

	blob_refs_add_build_result(context, result);
	cJSON_Delete(result);
}

int store_blob_references(struct store *s, cJSON **ret_hashes)
{
	cJSON *hashes = cJSON_CreateArray();
	int rc;

	if (!hashes)
		return LL_ENOMEM;
	db_snapshot_begin(s);
	rc = db_read_rows(s, "SELECT spec FROM jobs WHERE family = 'program'", add_references, hashes, "");
	/* The builds of the jobs still to measure. */
	if (rc == 0)
		rc = db_read_rows(s,
				  "SELECT r.body FROM results r JOIN tasks t ON t.id = r.task_id"
				  " JOIN jobs j ON j.id = t.job_id"
				  " WHERE t.kind = 'build' AND j.state IN ('queued', 'running')",
				  add_build_references, hashes, "");
	if (rc == 0)
		rc = db_read_rows(s, "SELECT job FROM schedules WHERE deleted = 0", add_references, hashes,
				  "");
	db_snapshot_end(s);
	return db_answer(rc, hashes, ret_hashes);
}
