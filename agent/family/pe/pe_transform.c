/*
 * pe_transform.c - makes each variant's folder from its link set with the
 * PE toolkit of common/: rebasing (REBASE.EXE semantics: non-overlapping,
 * 64 KiB aligned bases from PE_UNIQUE_BASE up) and binding (BindImageEx
 * semantics, against the folder the loader searches first and then the
 * system folders of this machine).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loadlab/err.h"
#include "loadlab/pe.h"
#include "pe_family.h"

#include "family/family_ship.h"

static int copy_set(const struct pe_context *ctx, const struct pe_link_set *set, const char *dir)
{
	char src[PLAT_MAX_PATH + 1], dst[PLAT_MAX_PATH + 1], name[64];
	int rc;

	for (int i = 0; i <= ctx->base.dlls; i++) {
		if (i < ctx->base.dlls)
			snprintf(name, sizeof(name), "lt%d.dll", i);
		else
			snprintf(name, sizeof(name), "main.exe");
		if ((rc = family_path(src, set->dir, name)) < 0 || (rc = family_path(dst, dir, name)) < 0 ||
		    (rc = plat_copy_file(src, dst)) < 0)
			return rc;
	}
	return 0;
}

/* Rebases every DLL of DIR as one batch; the images are all checked before
 * any file is written. */
static int rebase_dlls(const struct pe_context *ctx, const char *dir, uint32_t timestamp)
{
	struct pe_image **images;
	char path[PLAT_MAX_PATH + 1], name[64];
	int rc = 0, opened = 0;

	images = calloc((size_t)ctx->base.dlls, sizeof(*images));
	if (!images)
		return LL_ENOMEM;
	for (; opened < ctx->base.dlls; opened++) {
		snprintf(name, sizeof(name), "lt%d.dll", opened);
		if ((rc = family_path(path, dir, name)) < 0 ||
		    (rc = pe_image_open(path, &images[opened])) < 0)
			goto out;
	}
	if ((rc = pe_rebase_batch(images, (size_t)ctx->base.dlls, PE_UNIQUE_BASE, false, timestamp, NULL)) <
	    0)
		goto out;
	for (int i = 0; i < ctx->base.dlls; i++) {
		snprintf(name, sizeof(name), "lt%d.dll", i);
		if ((rc = family_path(path, dir, name)) < 0 || (rc = pe_image_save(images[i], path)) < 0)
			goto out;
	}
out:
	pe_images_free(images, (size_t)opened);
	return rc;
}

static int bind_program(const struct pe_context *ctx, const char *dir, struct pe_bind_result *ret)
{
	const char *search[2];
	char path[PLAT_MAX_PATH + 1];
	struct pe_image *image = NULL;
	struct pe_bind_options options;
	int rc;

	family_bind_options(&ctx->runner, dir, search, &options);
	/* Written as a new file, never in place: a shared build's main.exe is
	 * a hard link to the blob cache's copy, which the other variants'
	 * main.exe links to as well (blob_cache_get()). */
	if ((rc = family_path(path, dir, "main.exe")) < 0 || (rc = pe_image_open(path, &image)) < 0 ||
	    (rc = pe_bind(image, &options, ret)) < 0 || (rc = plat_remove_file(path)) < 0 ||
	    (rc = pe_image_save(image, path)) < 0)
		goto out;
out:
	pe_image_free(image);
	return rc;
}

/* Binds VAR's main.exe in its folder. */
static int bind_variant(const struct pe_context *ctx, struct pe_variant *var)
{
	struct pe_bind_result result = {0};
	int rc;

	if ((rc = bind_program(ctx, var->base.dir, &result)) < 0)
		return rc;
	var->bind_modules_bound = result.modules_bound;
	var->bind_modules_skipped = result.modules_skipped;
	var->bind_functions_bound = result.functions_bound;
	return 0;
}

int pe_transform_bind(struct pe_context *ctx)
{
	int rc;

	for (size_t v = 0; v < ctx->variant_count; v++)
		if (ctx->variants[v].bind && (rc = bind_variant(ctx, &ctx->variants[v])) < 0)
			return rc;
	return family_progress(ctx->base.task, "transform", 100);
}

int pe_transform(struct pe_context *ctx, bool bind)
{
	/* One timestamp for the whole task: rebased images of two variants
	 * built alike stay byte-identical (a free noise estimate). */
	uint32_t timestamp = (uint32_t)time(NULL);
	int rc = 0;

	for (size_t v = 0; v < ctx->variant_count; v++) {
		struct pe_variant *var = &ctx->variants[v];

		if ((rc = family_progress(ctx->base.task, "transform", (int)(100 * v / ctx->variant_count))) <
		    0)
			return rc;
		if ((rc = family_ship_variant_dir(&ctx->base, v, var->base.dir)) < 0 ||
		    (rc = copy_set(ctx, &ctx->sets[var->link_set], var->base.dir)) < 0)
			return rc;
		if (strcmp(var->bases, "unique") == 0 &&
		    (rc = rebase_dlls(ctx, var->base.dir, timestamp)) < 0)
			return rc;
		if (bind && var->bind && (rc = bind_variant(ctx, var)) < 0)
			return rc;
	}
	return family_progress(ctx->base.task, "transform", 100);
}
