/*
 * pe_loader.c - a pe variant's "loader" (pe_family.h, pe_loader_variant()):
 * the loader's work counted on the variant's folder with
 * pe_loader_work.h, statically and as the probe saw the modules placed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "loadlab/err.h"
#include "pe_family.h"
#include "pe_loader_work.h"

/* Whether the probe saw module NAME loaded away from its preferred base. */
static bool probe_relocated(const cJSON *probe, const char *name)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(probe, "modules")) {
		const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name"));
		if (n && strcasecmp(n, name) == 0)
			return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "loaded")) &&
			       family_hex_value(m, "preferred") != family_hex_value(m, "actual");
	}
	return false;
}

int pe_loader_variant(const struct pe_context *ctx, struct pe_variant *var, const cJSON *probe)
{
	size_t count = (size_t)ctx->base.dlls + 1, opened = 0;
	struct pe_loader_image *images = calloc(count, sizeof(*images));
	struct pe_image **owned = calloc(count, sizeof(*owned));
	char(*names)[32] = calloc(count, sizeof(*names));
	bool *relocated = calloc(count, sizeof(*relocated));
	struct pe_loader_run run = {images, count, probe ? relocated : NULL, &ctx->runner, var->base.dir};
	char path[PLAT_MAX_PATH + 1];
	int rc = LL_ENOMEM;

	if (!images || !owned || !names || !relocated)
		goto out;
	for (rc = 0; opened < count; opened++) {
		if (opened == 0)
			snprintf(names[0], sizeof(names[0]), "main.exe");
		else
			snprintf(names[opened], sizeof(names[opened]), "lt%zu.dll", opened - 1);
		if ((rc = family_path(path, var->base.dir, names[opened])) < 0 ||
		    (rc = pe_image_open(path, &owned[opened])) < 0)
			break;
		images[opened] = (struct pe_loader_image){names[opened], owned[opened]};
		relocated[opened] = probe && probe_relocated(probe, names[opened]);
	}
	rc = pe_loader_work_variant(&run, rc, &var->loader);
out:
	for (size_t i = 0; owned && i < opened; i++)
		pe_image_free(owned[i]);
	free(images);
	free(owned);
	free(names);
	free(relocated);
	return rc;
}
