#include "facts.h"

#include "loadlab/err.h"

#include <stdlib.h>

/* The toolchains the pe and elf pipelines know how to drive. */
static const char *const toolchain_names[] = {
	"x86_64-w64-mingw32-gcc", "i686-w64-mingw32-gcc", "gcc", "clang", "lld", "cl", NULL,
};

int facts_detect(const char *work_dir, cJSON **ret_facts)
{
	cJSON *facts = cJSON_CreateObject();
	cJSON *names, *paths;
	int rc;

	if (!facts)
		return err_set(LL_ENOMEM, "Out of memory.");
	rc = facts_os_collect(work_dir, facts);
	if (rc < 0)
		goto fail;
	rc = err_set(LL_ENOMEM, "Out of memory.");
	names = cJSON_AddArrayToObject(facts, "toolchains");
	paths = cJSON_AddArrayToObject(facts, "toolchain_paths");
	if (!names || !paths)
		goto fail;
	for (size_t i = 0; toolchain_names[i]; i++) {
		char *path = facts_os_find_program(toolchain_names[i]);
		cJSON *name_item, *path_item;

		if (!path)
			continue;
		name_item = cJSON_CreateString(toolchain_names[i]);
		path_item = cJSON_CreateString(path);
		free(path);
		if (!name_item || !path_item) {
			cJSON_Delete(name_item);
			cJSON_Delete(path_item);
			goto fail;
		}
		cJSON_AddItemToArray(names, name_item);
		cJSON_AddItemToArray(paths, path_item);
	}
	if (!cJSON_AddStringToObject(facts, "runner", facts_os_runner()))
		goto fail;
	*ret_facts = facts;
	return 0;
fail:
	cJSON_Delete(facts);
	return rc;
}
