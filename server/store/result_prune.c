/* result_prune.c - a result without its raw samples (result_prune.h). */
#include "result_prune.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

/* Results nest less deeply than this (result.json). */
#define PRUNE_MAX_DEPTH 32

int result_prune_samples(const char *text, size_t len, char **ret_text)
{
	static const char *const warm[] = {"samples_us", NULL};
	static const char *const cold[] = {"samples_us", "page_faults", "hard_faults", "soft_faults",
					   "read_bytes", "read_ops",    NULL};
	cJSON *root = NULL, *variant;
	char *out;
	int rc = json_parse_object(text, len, PRUNE_MAX_DEPTH, &root);

	if (rc < 0)
		return err_set(LL_EFORMAT, "A stored result is not a JSON object.");
	cJSON_ArrayForEach(variant, cJSON_GetObjectItemCaseSensitive(root, "variants")) {
		cJSON *w = cJSON_GetObjectItemCaseSensitive(variant, "warm");
		cJSON *c = cJSON_GetObjectItemCaseSensitive(variant, "cold");
		for (int i = 0; warm[i] && cJSON_IsObject(w); i++)
			cJSON_DeleteItemFromObjectCaseSensitive(w, warm[i]);
		for (int i = 0; cold[i] && cJSON_IsObject(c); i++)
			cJSON_DeleteItemFromObjectCaseSensitive(c, cold[i]);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "measurement"),
						"warm_order");
	cJSON_DeleteItemFromObjectCaseSensitive(root, "raw_samples");
	cJSON_AddStringToObject(root, "raw_samples", "dropped");
	out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!out)
		return LL_ENOMEM;
	*ret_text = out;
	return 0;
}
