/* sqlite_blobs.c - what the SQLite store knows of blobs: the jobs and the
 * schedules (their job to submit) that reference them (store.h). */
#include "sqlite_int.h"

#include "loadlab/err.h"
#include "loadlab/job_spec.h"

/* Adds the blobs of one job's spec (column 0) to the array CONTEXT. */
static void add_references(void *context, sqlite3_stmt *row)
{
	cJSON *spec = column_json(row, 0), *hashes = context;
	const cJSON *program = cJSON_GetObjectItemCaseSensitive(spec, "program");
	const cJSON *file;
	char hex[65];

	cJSON_ArrayForEach(file, cJSON_GetObjectItemCaseSensitive(program, "files"))
		if (cJSON_IsString(file) && job_spec_blob_ref_valid(file->valuestring, hex))
			cJSON_AddItemToArray(hashes, cJSON_CreateString(hex));
	cJSON_Delete(spec);
}

int sqlite_blob_references(struct store *s, cJSON **ret_hashes)
{
	cJSON *hashes = cJSON_CreateArray();
	int rc;

	if (!hashes)
		return LL_ENOMEM;
	rc = db_reader_each(s, "SELECT spec FROM jobs WHERE family = 'program'", add_references, hashes);
	if (rc == 0)
		rc = db_reader_each(s, "SELECT job FROM schedules WHERE deleted = 0", add_references, hashes);
	return store_answer(rc, hashes, ret_hashes);
}
