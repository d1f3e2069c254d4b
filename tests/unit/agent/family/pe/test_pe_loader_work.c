/*
 * test_pe_loader_work.c - the PE loader's work counted on real images
 * (agent/family/pe/pe_loader_work.c): tests/pe/corpus/mingw64_bound.exe, a
 * mingw-w64 program whose import of m.dll (one function by name, one by
 * ordinal) is bound against mingw64.dll (TimeDateStamp 0), and that DLL
 * (0x10000000, 38 DIR64 base relocations). The expected figures are
 * x86_64-w64-mingw32-objdump -p's: the program imports 11 KERNEL32 and 25
 * msvcrt functions by name, the DLL 9 and 13.
 *
 *	at its base     the DLL alone at 0x10000000: no relocation, both m.dll
 *	                imports held by the valid binding
 *	relocated       a second copy at the same base first (n.dll): m.dll
 *	                moves, applies its 38 relocations, and its binding no
 *	                longer holds (its imports are resolved again)
 *	probe           placement as given; a loader that ignores bindings
 *	                (Wine) resolves every import
 *	stale binding   another module timestamp: nothing bound
 *	bad input       no image, too many: LL_EINVAL, output untouched
 */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "family/pe/pe_loader_work.h"
#include "loadlab/err.h"
#include "loadlab/pe.h"

#define SYSTEM_BY_NAME (11 + 25 + 9 + 13)
#define DLL_RELOCATIONS 38

static struct pe_image *open_corpus(const char *name)
{
	const char *source = getenv("LOADLAB_SOURCE_DIR");
	char path[4096];
	struct pe_image *image = NULL;

	snprintf(path, sizeof(path), "%s/tests/pe/corpus/%s", source ? source : ".", name);
	CHECK_EQ_INT(pe_image_open(path, &image), 0);
	return image;
}

/* A system module's timestamp: none known (as when no file is found). */
static bool no_system(void *context, const char *module, uint32_t *ret)
{
	(void)context;
	(void)module;
	(void)ret;
	return false;
}

int main(void)
{
	struct pe_image *exe = open_corpus("mingw64_bound.exe"), *dll = open_corpus("mingw64.dll");
	struct pe_loader_work w;
	cJSON *j = NULL;

	if (!exe || !dll)
		return check_finish();

	/* at its base */
	struct pe_loader_image at_base[] = {{"mingw64_bound.exe", exe}, {"M.DLL", dll}};
	CHECK_EQ_INT(pe_loader_work_count(at_base, 2, NULL, true, no_system, NULL, &w), 0);
	CHECK_EQ_INT(w.images, 2);
	CHECK_EQ_INT(w.images_relocated, 0);
	CHECK_EQ_INT(w.relocations, 0);
	CHECK_EQ_INT(w.imports_bound, 2);
	CHECK_EQ_INT(w.imports_by_ordinal, 0);
	CHECK_EQ_INT(w.imports_by_name, SYSTEM_BY_NAME);

	/* relocated: n.dll takes 0x10000000 first */
	struct pe_loader_image crowded[] = {{"mingw64_bound.exe", exe}, {"n.dll", dll}, {"m.dll", dll}};
	CHECK_EQ_INT(pe_loader_work_count(crowded, 3, NULL, true, NULL, NULL, &w), 0);
	CHECK_EQ_INT(w.images_relocated, 1);
	CHECK_EQ_INT(w.relocations, DLL_RELOCATIONS);
	CHECK_EQ_INT(w.imports_bound, 0);
	CHECK_EQ_INT(w.imports_by_ordinal, 1);
	CHECK_EQ_INT(w.imports_by_name, SYSTEM_BY_NAME + 9 + 13 + 1);

	/* probe: the DLL seen moved although alone; then Wine's loader */
	bool moved[] = {false, true};
	CHECK_EQ_INT(pe_loader_work_count(at_base, 2, moved, true, NULL, NULL, &w), 0);
	CHECK_EQ_INT(w.relocations, DLL_RELOCATIONS);
	CHECK_EQ_INT(w.imports_bound, 0);
	bool stayed[] = {false, false};
	CHECK_EQ_INT(pe_loader_work_count(at_base, 2, stayed, false, NULL, NULL, &w), 0);
	CHECK_EQ_INT(w.relocations, 0);
	CHECK_EQ_INT(w.imports_bound, 0);
	CHECK_EQ_INT(w.imports_by_ordinal, 1);
	CHECK_EQ_INT(w.imports_by_name, SYSTEM_BY_NAME + 1);

	/* stale binding: the DLL's file has another timestamp than the bound one */
	struct pe_image *newer = NULL;
	CHECK_EQ_INT(pe_image_from_memory(dll->data, dll->size, &newer), 0);
	if (newer) {
		CHECK_EQ_INT(pe_rebase(newer, newer->image_base, 12345), 0);
		struct pe_loader_image stale[] = {{"mingw64_bound.exe", exe}, {"m.dll", newer}};
		CHECK_EQ_INT(pe_loader_work_count(stale, 2, NULL, true, NULL, NULL, &w), 0);
		CHECK_EQ_INT(w.relocations, 0);
		CHECK_EQ_INT(w.imports_bound, 0);
		CHECK_EQ_INT(w.imports_by_ordinal, 1);
		pe_image_free(newer);
	}

	/* bad input */
	struct pe_loader_work untouched = {.relocations = 7};
	CHECK_EQ_INT(pe_loader_work_count(at_base, 0, NULL, true, NULL, NULL, &untouched), LL_EINVAL);
	CHECK_EQ_INT(pe_loader_work_count(at_base, PE_LOADER_WORK_MAX_IMAGES + 1, NULL, true, NULL, NULL,
					  &untouched),
		     LL_EINVAL);
	CHECK_EQ_INT(untouched.relocations, 7);

	/* the result's shape */
	w = (struct pe_loader_work){
		.relocations = 38, .images = 2, .images_relocated = 1, .imports_bound = 0};
	CHECK_EQ_INT(pe_loader_work_json(&w, "probe", &j), 0);
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "source")), "probe");
	CHECK_EQ_INT(cJSON_GetObjectItemCaseSensitive(j, "relocations")->valuedouble, 38);
	CHECK(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "imports_bound")));
	cJSON_Delete(j);

	pe_image_free(exe);
	pe_image_free(dll);
	return check_finish();
}
