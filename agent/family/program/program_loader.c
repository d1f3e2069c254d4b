/*
 * program_loader.c - a PE program variant's "loader" (program_int.h,
 * program_loader_variant()): the loader's work for the program's exe and
 * its own DLLs in the variant's folder, counted with
 * family/pe/pe_loader_work.h as the debug probe saw the modules placed,
 * the files' own prediction beside it, as the pe family records it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "family/pe/pe_loader_work.h"
#include "loadlab/err.h"
#include "program_int.h"

/* PATH's last component ('/' or '\\' separated). */
static const char *base_name(const char *path)
{
	const char *name = path + strlen(path);

	while (name > path && name[-1] != '/' && name[-1] != '\\')
		name--;
	return name;
}

/* Whether the probe saw the module whose file is named NAME away from
 * its preferred base. */
static bool probe_relocated(const cJSON *probe, const char *name)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(probe, "modules")) {
		const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "path"));
		if (path && strcasecmp(base_name(path), name) == 0)
			return family_hex_value(m, "preferred") != family_hex_value(m, "actual");
	}
	return false;
}

int program_loader_variant(const struct program_context *ctx, struct program_variant *var, const cJSON *probe)
{
	size_t count = 0;
	struct pe_loader_image *images = calloc(ctx->file_count + 1, sizeof(*images));
	struct pe_image **owned = calloc(ctx->file_count + 1, sizeof(*owned));
	bool *relocated = calloc(ctx->file_count + 1, sizeof(*relocated));
	char path[PLAT_MAX_PATH + 1], exe_dir[PLAT_MAX_PATH + 1];
	struct pe_loader_run run = {images, 0, probe ? relocated : NULL, &ctx->runner, exe_dir};
	int rc = LL_ENOMEM;

	if (!images || !owned || !relocated)
		goto out;
	if ((rc = program_file_path(var->dir, ctx->files[ctx->exe].path, false, exe_dir)) < 0)
		goto counted;
	*strrchr(exe_dir, '/') = '\0';
	/* The exe first, then the program's own DLLs in manifest order. */
	for (size_t pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < ctx->file_count; i++) {
			const struct program_file *f = &ctx->files[i];
			if ((pass == 0) != (i == ctx->exe) || !f->pe || (pass == 1 && !f->dll))
				continue;
			if ((rc = program_file_path(var->dir, f->path, false, path)) < 0 ||
			    (rc = pe_image_open(path, &owned[count])) < 0)
				goto counted;
			images[count] = (struct pe_loader_image){base_name(f->path), owned[count]};
			relocated[count] = probe && probe_relocated(probe, base_name(f->path));
			count++;
		}
	}
counted:
	run.count = count;
	rc = pe_loader_work_variant(&run, rc, &var->loader);
out:
	for (size_t i = 0; owned && i < count; i++)
		pe_image_free(owned[i]);
	free(images);
	free(owned);
	free(relocated);
	return rc;
}
