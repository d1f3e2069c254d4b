/*
 * program_fetch.c - the program family's generate stage: the manifest's
 * files from the agent's blob cache into WORK/files (every path checked
 * again and joined below that folder, so no manifest can name a file
 * outside it), and what the PE toolkit says of each.
 */
#include "program_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blobs/blob_cache.h"
#include "loadlab/err.h"
#include "loadlab/log.h"
#include "loadlab/pe.h"

int program_file_path(const char *folder, const char *path, bool make_parents, char *out)
{
	size_t folder_len = strlen(folder), path_len = strlen(path);
	int rc;

	if ((rc = job_spec_program_path_check(path, NULL)) < 0)
		return rc;
	if (folder_len + 1 + path_len > PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "The path %s/%s is too long.", folder, path);
	memcpy(out, folder, folder_len);
	out[folder_len] = '/';
	memcpy(out + folder_len + 1, path, path_len + 1);
	if (make_parents) {
		char *slash = strrchr(out + folder_len + 1, '/');
		if (slash) {
			*slash = '\0';
			rc = plat_mkdirs(out);
			*slash = '/';
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* What the toolkit says of F's file at PATH; nothing when it is no PE. */
static void read_pe_facts(struct program_file *f, const char *path)
{
	struct pe_image *image = NULL;

	if (pe_image_open(path, &image) < 0) {
		err_clear();
		return;
	}
	f->pe = true;
	f->dll = (image->characteristics & PE_FILE_DLL) != 0;
	f->relocs_stripped = (image->characteristics & PE_FILE_RELOCS_STRIPPED) != 0;
	f->dynamic_base = (image->dll_characteristics & PE_DLLCHAR_DYNAMIC_BASE) != 0;
	f->signed_image = image->directories[PE_DIR_SECURITY].size != 0;
	f->image_base = image->image_base;
	f->machine = image->machine;
	pe_image_free(image);
}

int program_fetch(struct program_context *ctx)
{
	const struct pipeline_task *task = ctx->task;
	char cache_dir[PLAT_MAX_PATH + 1];
	struct blob_cache cache;
	int rc;

	if ((rc = family_path(ctx->files_dir, ctx->work, "files")) < 0 ||
	    (rc = plat_mkdirs(ctx->files_dir)) < 0)
		return rc;
	if (task->blob_cache_dir && task->blob_cache_dir[0])
		snprintf(cache_dir, sizeof(cache_dir), "%s", task->blob_cache_dir);
	else if ((rc = family_path(cache_dir, ctx->work, "blobs")) < 0)
		return rc;
	if ((rc = blob_cache_open(&cache, cache_dir, task->blob_cache_bytes)) < 0)
		return rc;
	for (size_t i = 0; i < ctx->file_count; i++) {
		struct program_file *f = &ctx->files[i];
		char dest[PLAT_MAX_PATH + 1];
		bool fetched = false;

		if ((rc = family_progress(task, "generate", (int)(100 * i / ctx->file_count))) < 0 ||
		    (rc = program_file_path(ctx->files_dir, f->path, true, dest)) < 0 ||
		    (rc = blob_cache_get(&cache, f->sha256, task->fetch_blob, task->fetch_blob_context, dest,
					 &fetched)) < 0)
			goto out;
		read_pe_facts(f, dest);
	}
	ctx->blobs_cached = cache.stats.hits;
	ctx->blobs_fetched = cache.stats.fetched;
	ctx->bytes_fetched = cache.stats.bytes_fetched;
	{
		char cached[32], got[32], bytes[32];
		snprintf(cached, sizeof(cached), "%zu", cache.stats.hits);
		snprintf(got, sizeof(got), "%zu", cache.stats.fetched);
		snprintf(bytes, sizeof(bytes), "%lld", cache.stats.bytes_fetched);
		log_event(LOG_INFO, "program_blobs", "cached", cached, "fetched", got, "bytes_fetched", bytes,
			  NULL);
	}
	rc = family_progress(task, "generate", 100);
out:
	blob_cache_close(&cache);
	return rc;
}
