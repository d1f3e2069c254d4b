/*
 * program_transform.c - each variant's folder WORK/v/NN: the program as
 * built (WORK/files), hard-linked where the file system allows (a copy
 * otherwise, plat_link_file()), then its knobs applied with the PE toolkit
 * of common/ (nothing needs a relink). A file a knob changes is written
 * as a new file (save_image()), so a variant's change never reaches the
 * other variants, WORK/files or the blob cache; a file no knob changes
 * takes its space once however many variants and paths name it:
 *
 *	as-built   untouched
 *	rebase     the program's own DLLs (the manifest's PE files with
 *	           IMAGE_FILE_DLL) rebased as one batch to non-overlapping,
 *	           64 KiB aligned bases from PROGRAM_UNIQUE_BASE up, and the
 *	           ASLR flag cleared in every PE file of the program so the
 *	           bases hold on Vista and later
 *	bind       rebase, then every PE file of the program bound against
 *	           the program's folder and the runner's system folders
 *	aslr-off   bases as built, the ASLR flag cleared
 *
 * A variant that cannot apply (a DLL's relocations stripped) is invalid
 * with the reason; a signed image that was changed gets a note (its
 * Authenticode signature no longer holds). "transform" in the variant
 * records what was done to each file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loadlab/err.h"
#include "loadlab/pe.h"
#include "program_int.h"

static int link_files(const struct program_context *ctx, const char *dir)
{
	char src[PLAT_MAX_PATH + 1], dst[PLAT_MAX_PATH + 1];
	int rc;

	for (size_t i = 0; i < ctx->file_count; i++)
		if ((rc = program_file_path(ctx->files_dir, ctx->files[i].path, false, src)) < 0 ||
		    (rc = program_file_path(dir, ctx->files[i].path, true, dst)) < 0 ||
		    (rc = plat_link_file(src, dst, NULL)) < 0)
			return rc;
	return 0;
}

/* Writes IMAGE as a new file at PATH: PATH may be a link shared with the
 * other variants and the blob cache (link_files()). */
static int save_image(const struct pe_image *image, const char *path)
{
	int rc = plat_remove_file(path);

	return rc < 0 ? rc : pe_image_save(image, path);
}

/* Rebases the program's DLLs in VAR's folder as one batch. A refusal
 * (relocations stripped, a relocation type the loader would not apply)
 * makes the variant invalid; nothing is written then. */
static int rebase_dlls(const struct program_context *ctx, struct program_variant *var, uint32_t timestamp,
		       cJSON *per_file)
{
	struct pe_image **images = calloc(ctx->file_count, sizeof(*images));
	size_t *which = calloc(ctx->file_count, sizeof(*which));
	uint64_t *bases = calloc(ctx->file_count, sizeof(*bases));
	char path[PLAT_MAX_PATH + 1];
	size_t count = 0;
	int rc = 0;

	if (!images || !which || !bases) {
		rc = LL_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ctx->file_count; i++) {
		if (!ctx->files[i].dll)
			continue;
		if ((rc = program_file_path(var->dir, ctx->files[i].path, false, path)) < 0 ||
		    (rc = pe_image_open(path, &images[count])) < 0)
			goto out;
		which[count++] = i;
	}
	if (count == 0) {
		rc = program_note(var, "The program has no DLLs of its own: there is nothing to rebase.");
		goto out;
	}
	for (size_t k = 0; k < count; k++)
		if (ctx->files[which[k]].relocs_stripped) {
			program_invalid(var,
					"Rebase cannot apply: %s has its relocations stripped, so it loads "
					"only at its preferred base.",
					ctx->files[which[k]].path);
			goto out;
		}
	if ((rc = pe_rebase_batch(images, count, PROGRAM_UNIQUE_BASE, false, timestamp, bases)) < 0) {
		/* "Image K of N: ..." names the image by its place in the batch. */
		program_invalid(
			var, "Rebase cannot apply: %s (the batch: the program's %zu DLLs in manifest order)",
			err_message(rc), count);
		rc = 0;
		goto out;
	}
	for (size_t k = 0; k < count; k++) {
		cJSON *o = cJSON_GetObjectItemCaseSensitive(per_file, ctx->files[which[k]].path);
		if ((rc = program_file_path(var->dir, ctx->files[which[k]].path, false, path)) < 0 ||
		    (rc = save_image(images[k], path)) < 0)
			goto out;
		if (o && ((rc = family_add_hex(o, "base_from", ctx->files[which[k]].image_base)) < 0 ||
			  (rc = family_add_hex(o, "base_to", bases[k])) < 0))
			goto out;
	}
out:
	pe_images_free(images, count);
	free(which);
	free(bases);
	return rc;
}

/* Clears the ASLR flag in every PE file of the program in VAR's folder. */
static int clear_aslr(const struct program_context *ctx, struct program_variant *var, cJSON *per_file)
{
	char path[PLAT_MAX_PATH + 1];
	int rc;

	for (size_t i = 0; i < ctx->file_count; i++) {
		struct pe_image *image = NULL;
		bool changed = false;
		if (!ctx->files[i].pe)
			continue;
		if ((rc = program_file_path(var->dir, ctx->files[i].path, false, path)) < 0 ||
		    (rc = pe_image_open(path, &image)) < 0)
			return rc;
		pe_clear_dynamic_base(image, &changed);
		rc = changed ? save_image(image, path) : 0;
		pe_image_free(image);
		if (rc < 0)
			return rc;
		cJSON *o = cJSON_GetObjectItemCaseSensitive(per_file, ctx->files[i].path);
		if (o && !cJSON_AddBoolToObject(o, "aslr_cleared", changed))
			return LL_ENOMEM;
	}
	return 0;
}

/* Binds every PE file of the program in VAR's folder: the program's
 * folder first (where the loader looks first), then the system folders. */
static int bind_files(const struct program_context *ctx, struct program_variant *var, cJSON *per_file)
{
	const char *search[2];
	char path[PLAT_MAX_PATH + 1], exe_dir[PLAT_MAX_PATH + 1];
	struct pe_bind_options options;
	int rc;

	if ((rc = program_file_path(var->dir, ctx->files[ctx->exe].path, false, exe_dir)) < 0)
		return rc;
	*strrchr(exe_dir, '/') = '\0';
	family_bind_options(&ctx->runner, exe_dir, search, &options);
	for (size_t i = 0; i < ctx->file_count; i++) {
		struct pe_bind_result result = {0};
		struct pe_image *image = NULL;
		cJSON *o = cJSON_GetObjectItemCaseSensitive(per_file, ctx->files[i].path);

		if (!ctx->files[i].pe)
			continue;
		if ((rc = program_file_path(var->dir, ctx->files[i].path, false, path)) < 0 ||
		    (rc = pe_image_open(path, &image)) < 0)
			return rc;
		if ((rc = pe_bind(image, &options, &result)) == 0)
			rc = save_image(image, path);
		pe_image_free(image);
		if (rc < 0) {
			program_invalid(var, "Bind cannot apply to %s: %s", ctx->files[i].path,
					err_message(rc));
			return 0;
		}
		if (o &&
		    (!cJSON_AddNumberToObject(o, "bind_modules_bound", (double)result.modules_bound) ||
		     !cJSON_AddNumberToObject(o, "bind_modules_skipped", (double)result.modules_skipped) ||
		     !cJSON_AddNumberToObject(o, "bind_functions_bound", (double)result.functions_bound)))
			return LL_ENOMEM;
	}
	return 0;
}

/* VAR's "transform": {PATH: {...}} for every PE file, and notes for the
 * signed images the knobs change. */
static int transform_variant(struct program_context *ctx, struct program_variant *var, uint32_t timestamp)
{
	bool changes = var->unique_bases || var->bind || var->aslr_off;
	cJSON *per_file;
	int rc;

	var->valid = true;
	if (!(var->transform = cJSON_CreateObject()))
		return LL_ENOMEM;
	for (size_t i = 0; i < ctx->file_count; i++) {
		const struct program_file *f = &ctx->files[i];
		cJSON *o;
		if (!f->pe)
			continue;
		if (!(o = cJSON_AddObjectToObject(var->transform, f->path)) ||
		    !cJSON_AddStringToObject(o, "kind",
					     f->dll          ? "dll"
					     : i == ctx->exe ? "exe"
							     : "pe") ||
		    !cJSON_AddBoolToObject(o, "signed", f->signed_image))
			return LL_ENOMEM;
		if (changes && f->signed_image) {
			char note[JOB_SPEC_MAX_PROGRAM_PATH + JOB_SPEC_MAX_NAME + 80];
			snprintf(note, sizeof(note),
				 "%s is signed (Authenticode): after %s its signature no longer holds.",
				 f->path, var->name);
			if ((rc = program_note(var, note)) < 0)
				return rc;
		}
	}
	per_file = var->transform;
	if (var->unique_bases && (rc = rebase_dlls(ctx, var, timestamp, per_file)) < 0)
		return rc;
	if (var->valid && var->aslr_off && (rc = clear_aslr(ctx, var, per_file)) < 0)
		return rc;
	if (var->valid && var->bind && (rc = bind_files(ctx, var, per_file)) < 0)
		return rc;
	return 0;
}

/* Refuses the variants when the files their knobs may rewrite (every PE
 * file, once per variant that changes any) and PROGRAM_FREE_MARGIN_BYTES
 * do not fit the free space of the work folder's disk. */
static int check_free_space(const struct program_context *ctx)
{
	long long pe_bytes = 0, need, free_bytes;
	size_t changing = 0;
	int rc;

	/* every build's PE files, each rewritten by its builds' share of the
	 * variants: a bound no smaller than what they write */
	for (size_t i = 0; i < ctx->all_file_count; i++)
		pe_bytes += ctx->all_files[i].pe ? ctx->all_files[i].pe_size : 0;
	for (size_t v = 0; v < ctx->variant_count / ctx->build_count; v++)
		changing +=
			ctx->variants[v].unique_bases || ctx->variants[v].bind || ctx->variants[v].aslr_off;
	need = pe_bytes * (long long)changing + PROGRAM_FREE_MARGIN_BYTES;
	if ((rc = plat_free_bytes(ctx->work, &free_bytes)) < 0)
		return rc;
	if (free_bytes < need)
		return err_set(LL_ERANGE,
			       "The variants need up to %lld bytes of disk (the program's PE files, %lld "
			       "bytes, rewritten by %zu variants, and a margin of %lld), and this agent "
			       "has %lld free: nothing was transformed.",
			       need, pe_bytes, changing, PROGRAM_FREE_MARGIN_BYTES, free_bytes);
	return 0;
}

int program_transform(struct program_context *ctx)
{
	/* One timestamp for the whole task: two variants rebased alike stay
	 * byte-identical. */
	uint32_t timestamp = (uint32_t)time(NULL);
	int rc;

	if ((rc = check_free_space(ctx)) < 0)
		return rc;
	for (size_t v = 0; v < ctx->variant_count; v++) {
		struct program_variant *var = &ctx->variants[v];
		char sub[32];

		if ((rc = family_progress(ctx->task, "transform", (int)(100 * v / ctx->variant_count))) < 0)
			return rc;
		program_use_build(ctx, var->build);
		snprintf(sub, sizeof(sub), "v/%02zu", v);
		if ((rc = family_path(var->dir, ctx->work, sub)) < 0 || (rc = plat_mkdirs(var->dir)) < 0 ||
		    (rc = link_files(ctx, var->dir)) < 0 || (rc = transform_variant(ctx, var, timestamp)) < 0)
			return rc;
	}
	return family_progress(ctx->task, "transform", 100);
}
