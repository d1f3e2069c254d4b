/*
 * blob_refs.c - the blobs a job's documents reference (blob_refs.h). No
 * I/O: the store backends read the rows.
 */
#include "blob_refs.h"

#include "loadlab/job_spec.h"

#include <stdio.h>
#include <string.h>

void blob_refs_add_spec(cJSON *hashes, const cJSON *spec)
{
	const cJSON *program = cJSON_GetObjectItemCaseSensitive(spec, "program");
	const cJSON *file, *build;
	char hex[65];

	/* job_spec_program_build(): build 0 is the program itself when it has
	 * no "builds"; an A/B job's builds each have their "files". */
	for (int b = 0; (build = job_spec_program_build(program, b, NULL)); b++)
		cJSON_ArrayForEach(file, cJSON_GetObjectItemCaseSensitive(build, "files"))
			if (cJSON_IsString(file) && job_spec_blob_ref_valid(file->valuestring, hex))
				cJSON_AddItemToArray(hashes, cJSON_CreateString(hex));
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

void blob_refs_add_build_result(cJSON *hashes, const cJSON *result)
{
	const cJSON *variant;

	cJSON_ArrayForEach(variant, cJSON_GetObjectItemCaseSensitive(result, "variants"))
		add_files(hashes, cJSON_GetObjectItemCaseSensitive(variant, "files"));
	add_files(hashes, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(result, "floor"),
							   "files"));
}
