/*
 * program_fetch.c - the program family's generate and build stages: the
 * manifest's files from the agent's blob cache into WORK/files, each a
 * hard link to the cached blob where the file system allows (a blob named
 * under many paths takes its space once; blob_cache.h) except a second
 * path of one PE image, which is a copy (earlier_pe_twin()), every path checked
 * again and joined below that folder, so no manifest can name a file
 * outside it; what the PE toolkit says of each (the exe must be a PE
 * executable, else nothing runs); and the
 * helper programs of agent/programs/ compiled with mingw-w64.
 */
#include "program_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blobs/blob_cache.h"
#include "loadlab/err.h"
#include "loadlab/log.h"
#include "loadlab/pe.h"
#include "programs/programs.h"

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

int program_check_exe(const struct program_context *ctx)
{
	const struct program_file *f = &ctx->files[ctx->exe];

	if (!f->pe)
		return err_set(LL_EFORMAT, "The program's exe %s is not a PE image: nothing was run.",
			       f->path);
	if (f->dll)
		return err_set(LL_EFORMAT,
			       "The program's exe %s is a DLL, not an executable: nothing was run.", f->path);
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

		const struct program_file *twin = earlier_pe_twin(ctx, i);

		if ((rc = family_progress(task, "generate", (int)(100 * i / ctx->file_count))) < 0 ||
		    (rc = program_file_path(ctx->files_dir, f->path, true, dest)) < 0)
			goto out;
		if (twin && (rc = copy_twin(ctx, twin, dest)) == 0)
			cache.stats.hits++; /* from the cache, through its twin */
		else if (!twin)
			rc = blob_cache_get(&cache, f->sha256, task->fetch_blob, task->fetch_blob_context,
					    dest, &fetched);
		if (rc < 0)
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

/* Writes the embedded program NAME into the tools folder as SOURCE. */
static int write_source(const char *name, const char *source)
{
	size_t len = 0;
	const char *text = agent_program_source(name, &len);

	if (!text)
		return err_set(LL_ENOTFOUND, "This agent has no embedded %s.", name);
	return family_write_file(source, text, len);
}

/* Compiles the embedded program NAME into EXE (a Unicode wmain when
 * UNICODE). */
static int compile(const struct program_context *ctx, const char *name, const char *exe, bool unicode)
{
	char source[PLAT_MAX_PATH + 1], log[PLAT_MAX_PATH + 1], src_arg[PLAT_MAX_PATH + 1],
		out_arg[PLAT_MAX_PATH + 1];
	const char *argv[8] = {ctx->toolchain.gcc, "-O1", "-Wall", "-o", out_arg, src_arg};
	struct plat_spawn_options o = {
		.argv = argv, .cwd = ctx->tools_dir, .stdout_path = log, .stderr_path = log};
	int rc, code = -1;

	if (unicode)
		argv[6] = "-municode"; /* wmain */
	if ((rc = family_path(source, ctx->tools_dir, name)) < 0 ||
	    (rc = family_path(log, ctx->tools_dir, "build.log")) < 0 || (rc = write_source(name, source)) < 0)
		return rc;
	if (ctx->toolchain.host) {
		/* The host's compiler: host paths (the output's folder exists). */
		const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
		char dir_host[PLAT_MAX_PATH + 1];
		if ((rc = plat_host_path(source, src_arg, sizeof(src_arg))) < 0 ||
		    (rc = plat_host_path(ctx->tools_dir, dir_host, sizeof(dir_host))) < 0)
			return rc;
		if (strrchr(base, '\\'))
			base = strrchr(base, '\\') + 1;
		if (snprintf(out_arg, sizeof(out_arg), "%s/%s", dir_host, base) >= (int)sizeof(out_arg))
			return err_set(LL_ETOOBIG, "The path %s is too long.", exe);
		rc = plat_run_host(&o, PROGRAM_TOOL_TIMEOUT_MS, &code, NULL);
	} else {
		snprintf(src_arg, sizeof(src_arg), "%s", source);
		snprintf(out_arg, sizeof(out_arg), "%s", exe);
		rc = plat_run(&o, PROGRAM_TOOL_TIMEOUT_MS, &code, NULL);
	}
	if (rc < 0)
		return rc;
	if (code != 0)
		return err_set(LL_EIO, "Compiling %s failed (exit %d); see %s.", name, code, log);
	return 0;
}

int program_build_tools(struct program_context *ctx)
{
	char empty[PLAT_MAX_PATH + 1], built[PLAT_MAX_PATH + 1], header[PLAT_MAX_PATH + 1];
	int rc;

	if ((rc = family_path(ctx->tools_dir, ctx->work, "tools")) < 0 ||
	    (rc = plat_mkdirs(ctx->tools_dir)) < 0 ||
	    (rc = family_path(ctx->floor_dir, ctx->work, "floor")) < 0 ||
	    (rc = plat_mkdirs(ctx->floor_dir)) < 0 ||
	    (rc = family_path(ctx->probe_exe, ctx->tools_dir, "debug_probe.exe")) < 0 ||
	    (rc = family_path(ctx->launcher_exe, ctx->tools_dir, "idle_launcher.exe")) < 0 ||
	    (rc = family_path(built, ctx->tools_dir, "empty.exe")) < 0 ||
	    (rc = family_path(empty, ctx->floor_dir, "empty.exe")) < 0)
		return rc;
	/* debug_probe.c and idle_launcher.c include it. */
	if ((rc = family_path(header, ctx->tools_dir, "start_program.h")) < 0 ||
	    (rc = write_source("start_program.h", header)) < 0)
		return rc;
	if ((rc = compile(ctx, "debug_probe.c", ctx->probe_exe, true)) < 0 ||
	    (rc = family_progress(ctx->task, "build", 40)) < 0 ||
	    (ctx->input_idle && (rc = compile(ctx, "idle_launcher.c", ctx->launcher_exe, true)) < 0) ||
	    (rc = compile(ctx, "empty_program.c", built, false)) < 0 ||
	    (rc = plat_copy_file(built, empty)) < 0)
		return rc;
	return family_progress(ctx->task, "build", 100);
}
