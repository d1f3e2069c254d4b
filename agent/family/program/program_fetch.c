/*
 * program_fetch.c - the program family's generate stage: the manifest's
 * files from the agent's blob cache into WORK/files, each a hard link to
 * the cached blob where the file system allows (a blob named under many
 * paths takes its space once; blob_cache.h) except a second path of one
 * PE image, which is a copy (earlier_pe_twin()), every path checked again
 * and joined below that folder, so no manifest can name a file outside
 * it; and what the PE toolkit says of each (the exe must be a PE
 * executable, else nothing runs).
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
	f->pe_size = image->size;
	pe_image_free(image);
}

static int check_exe(const struct program_file *f)
{
	if (!f->pe)
		return err_set(LL_EFORMAT, "The program's exe %s is not a PE image: nothing was run.",
			       f->path);
	if (f->dll)
		return err_set(LL_EFORMAT,
			       "The program's exe %s is a DLL, not an executable: nothing was run.", f->path);
	return 0;
}

int program_check_exe(const struct program_context *ctx)
{
	for (size_t b = 0; b < ctx->build_count; b++) {
		const struct program_build *build = &ctx->builds[b];
		const struct program_file *f = &build->files[build->exe];
		int rc = check_exe(f);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* An earlier file of the manifest with FILE I's content that is a PE
 * image, or NULL. Two paths of one PE image must be two files: a loader
 * that finds a file it has loaded already (the same file id, as a hard
 * link is) hands out that module again instead of loading the second. */
static const struct program_file *earlier_pe_twin(const struct program_context *ctx, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (ctx->files[j].pe && strcmp(ctx->files[j].sha256, ctx->files[i].sha256) == 0)
			return &ctx->files[j];
	return NULL;
}

/* DEST as a copy of TWIN's file, when the disk has room for it and
 * PROGRAM_FREE_MARGIN_BYTES. */
static int copy_twin(const struct program_context *ctx, const struct program_file *twin, const char *dest)
{
	char src[PLAT_MAX_PATH + 1];
	long long free_bytes;
	int rc;

	if ((rc = program_file_path(ctx->files_dir, twin->path, false, src)) < 0 ||
	    (rc = plat_free_bytes(ctx->files_dir, &free_bytes)) < 0)
		return rc;
	if (free_bytes < twin->pe_size + PROGRAM_FREE_MARGIN_BYTES)
		return err_set(LL_ERANGE,
			       "The program names the PE image of %s under another path too, which needs a "
			       "copy of %lld bytes, and this agent has %lld free (less a margin of %lld).",
			       twin->path, twin->pe_size, free_bytes, PROGRAM_FREE_MARGIN_BYTES);
	return plat_copy_file(src, dest);
}

/* The build in use's files from CACHE into its folder. */
static int fetch_build(struct program_context *ctx, struct blob_cache *cache)
{
	const struct pipeline_task *task = ctx->task;
	int rc;

	for (size_t i = 0; i < ctx->file_count; i++) {
		struct program_file *f = &ctx->files[i];
		char dest[PLAT_MAX_PATH + 1];
		bool fetched = false;

		const struct program_file *twin = earlier_pe_twin(ctx, i);

		if ((rc = family_progress(task, "generate", (int)(100 * i / ctx->file_count))) < 0 ||
		    (rc = program_file_path(ctx->files_dir, f->path, true, dest)) < 0)
			return rc;
		if (twin && (rc = copy_twin(ctx, twin, dest)) == 0)
			cache->stats.hits++; /* from the cache, through its twin */
		else if (!twin)
			rc = blob_cache_get(cache, f->sha256, task->fetch_blob, task->fetch_blob_context,
					    dest, &fetched);
		if (rc < 0)
			return rc;
		read_pe_facts(f, dest);
	}
	return 0;
}

int program_fetch(struct program_context *ctx)
{
	const struct pipeline_task *task = ctx->task;
	struct blob_cache cache;
	int rc;

	if ((rc = family_blob_cache_open(task, ctx->work, task->job, &cache)) < 0)
		return rc;
	for (size_t b = 0; b < ctx->build_count; b++) {
		char sub[32];
		/* several builds: each in its own folder, files/NN */
		snprintf(sub, sizeof(sub), "files/%02zu", b);
		if ((rc = family_path(ctx->builds[b].files_dir, ctx->work,
				      ctx->build_count > 1 ? sub : "files")) < 0 ||
		    (rc = plat_mkdirs(ctx->builds[b].files_dir)) < 0)
			goto out;
		program_use_build(ctx, b);
		if ((rc = fetch_build(ctx, &cache)) < 0)
			goto out;
	}
	program_use_build(ctx, 0);
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
