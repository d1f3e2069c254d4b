/* pe_loader_work.c - the PE loader's work counted (pe_loader_work.h). */
#include "pe_loader_work.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "family/family_util.h"
#include "loadlab/err.h"

/* The index of the image named NAME (any case), or -1. */
static long find_image(const struct pe_loader_image *images, size_t count, const char *name)
{
	for (size_t i = 0; name && i < count; i++)
		if (images[i].name && strcasecmp(images[i].name, name) == 0)
			return (long)i;
	return -1;
}

/* Whether [A, A + A_SIZE) and [B, B + B_SIZE) overlap. */
static bool overlaps(uint64_t a, uint64_t a_size, uint64_t b, uint64_t b_size)
{
	return a < b + b_size && b < a + a_size;
}

/* The static placement: the program at its base, then each DLL at its
 * own unless an image placed at its base before it overlaps (the header's
 * "static"). RET: COUNT flags. */
static void predict_relocated(const struct pe_loader_image *images, size_t count, bool *ret)
{
	for (size_t i = 0; i < count; i++) {
		const struct pe_image *m = images[i].image;
		ret[i] = false;
		for (size_t j = 0; j < i && !ret[i]; j++)
			ret[i] = !ret[j] &&
				 overlaps(m->image_base, m->size_of_image, images[j].image->image_base,
					  images[j].image->size_of_image);
	}
}

/* Whether module MOD of image I is held by a valid binding: its
 * descriptor marked bound, BOUND naming the module with the timestamp
 * the loaded file has, the module at its preferred base. */
static bool binding_valid(const struct pe_loader_image *images, size_t count, const bool *relocated,
			  const struct pe_import_module *mod, const struct pe_bound_imports *bound,
			  pe_loader_timestamp_fn *timestamp_of, void *context)
{
	long target = find_image(images, count, mod->name);
	uint32_t have = 0;

	if (mod->timestamp == 0 || mod->name_table_rva == 0)
		return false;
	if (target >= 0) {
		if (relocated[target])
			return false;
		have = images[target].image->timestamp;
	} else if (!timestamp_of || !timestamp_of(context, mod->name, &have)) {
		return false;
	}
	for (size_t b = 0; b < bound->count; b++)
		if (bound->modules[b].name && strcasecmp(bound->modules[b].name, mod->name) == 0)
			return bound->modules[b].timestamp == have;
	return false;
}

/* Adds image I's imports to W. */
static int count_imports(const struct pe_loader_image *images, size_t count, size_t i, const bool *relocated,
			 bool binding_used, pe_loader_timestamp_fn *timestamp_of, void *context,
			 struct pe_loader_work *w)
{
	struct pe_imports imports = {0};
	struct pe_bound_imports bound = {0};
	int rc;

	if ((rc = pe_imports_read(images[i].image, false, &imports)) < 0 ||
	    (rc = pe_bound_imports_read(images[i].image, &bound)) < 0)
		goto out;
	for (size_t m = 0; m < imports.module_count; m++) {
		const struct pe_import_module *mod = &imports.modules[m];
		if (binding_used &&
		    binding_valid(images, count, relocated, mod, &bound, timestamp_of, context)) {
			w->imports_bound += (long long)mod->function_count;
			continue;
		}
		for (size_t f = 0; f < mod->function_count; f++) {
			if (mod->functions[f].by_ordinal)
				w->imports_by_ordinal++;
			else
				w->imports_by_name++;
		}
	}
out:
	pe_bound_imports_release(&bound);
	pe_imports_release(&imports);
	return rc;
}

int pe_loader_work_count(const struct pe_loader_image *images, size_t count, const bool *relocated,
			 bool binding_used, pe_loader_timestamp_fn *timestamp_of, void *context,
			 struct pe_loader_work *ret)
{
	struct pe_loader_work w = {0};
	bool *placed;
	int rc = 0;

	if (!images || count == 0 || count > PE_LOADER_WORK_MAX_IMAGES)
		return err_set(LL_EINVAL, "Loader work: 1 to %d images, not %zu.", PE_LOADER_WORK_MAX_IMAGES,
			       count);
	if (!(placed = calloc(count, sizeof(*placed))))
		return err_set(LL_ENOMEM, "Out of memory.");
	if (relocated)
		memcpy(placed, relocated, count * sizeof(*placed));
	else
		predict_relocated(images, count, placed);
	for (size_t i = 0; i < count; i++) {
		w.images++;
		if (placed[i]) {
			struct pe_relocs relocs = {0};
			if ((rc = pe_relocs_read(images[i].image, &relocs)) < 0)
				goto out;
			w.relocations += (long long)relocs.count;
			w.images_relocated++;
			pe_relocs_release(&relocs);
		}
		if ((rc = count_imports(images, count, i, placed, binding_used, timestamp_of, context, &w)) <
		    0)
			goto out;
	}
	*ret = w;
out:
	free(placed);
	return rc;
}

int pe_loader_work_json(const struct pe_loader_work *w, const char *source, cJSON **ret)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddStringToObject(o, "source", source) ||
	    !cJSON_AddNumberToObject(o, "relocations", (double)w->relocations) ||
	    !cJSON_AddNumberToObject(o, "images", (double)w->images) ||
	    !cJSON_AddNumberToObject(o, "images_relocated", (double)w->images_relocated) ||
	    !cJSON_AddNumberToObject(o, "imports_by_name", (double)w->imports_by_name) ||
	    !cJSON_AddNumberToObject(o, "imports_by_ordinal", (double)w->imports_by_ordinal) ||
	    !cJSON_AddNumberToObject(o, "imports_bound", (double)w->imports_bound)) {
		cJSON_Delete(o);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	*ret = o;
	return 0;
}

/* pe_loader_timestamp_fn over the runner's search (family_util.h). */
static bool timestamp_of(void *context, const char *module, uint32_t *ret)
{
	const struct pe_loader_run *run = context;

	return family_loader_timestamp(run->runner, run->exe_dir, module, ret);
}

/* The probe's count with the static one, STAT (taken), under "static". */
static int probe_object(const struct pe_loader_run *run, cJSON *stat, cJSON **ret)
{
	struct pe_loader_work seen;
	int rc;

	if ((rc = pe_loader_work_count(run->images, run->count, run->relocated, !run->runner->wine,
				       timestamp_of, (void *)run, &seen)) < 0 ||
	    (rc = pe_loader_work_json(&seen, "probe", ret)) < 0) {
		cJSON_Delete(stat);
		return rc;
	}
	if (!cJSON_AddItemToObject(*ret, "static", stat)) {
		cJSON_Delete(stat);
		return LL_ENOMEM;
	}
	return 0;
}

/* {"source": "static", "not_counted": WHY}; NULL when out of memory. */
static cJSON *not_counted(const char *why)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddStringToObject(o, "source", "static") ||
	    !cJSON_AddStringToObject(o, "not_counted", why)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int pe_loader_work_variant(const struct pe_loader_run *run, int rc, cJSON **loader)
{
	struct pe_loader_work predicted;
	cJSON *stat = NULL, *made = NULL;

	if (rc == 0 &&
	    (rc = pe_loader_work_count(run->images, run->count, NULL, true, timestamp_of, (void *)run,
				       &predicted)) == 0 &&
	    (rc = pe_loader_work_json(&predicted, "static", &stat)) == 0) {
		if (run->relocated)
			rc = probe_object(run, stat, &made);
		else
			made = stat;
	}
	if (rc == 0 && run->runner->wine &&
	    !cJSON_AddStringToObject(made, "cannot_show", PE_LOADER_WORK_WINE_NOTE))
		rc = LL_ENOMEM;
	if (rc < 0) {
		cJSON_Delete(made);
		made = rc == LL_ENOMEM ? NULL : not_counted(err_message(rc));
		if (!made)
			return LL_ENOMEM;
	}
	cJSON_Delete(*loader);
	*loader = made;
	return 0;
}
