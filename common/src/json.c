#include "loadlab/json.h"

#include "loadlab/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest integer a double holds exactly (2^53). */
#define JSON_MAX_SAFE_INTEGER 9007199254740992.0

/* Finds the deepest nesting of arrays and objects, skipping strings. */
static int json_depth_ok(const char *text, size_t len, int max_depth)
{
	int depth = 0;
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
			continue;
		}
		if (c == '"') {
			in_string = true;
		} else if (c == '[' || c == '{') {
			if (++depth > max_depth)
				return 0;
		} else if (c == ']' || c == '}') {
			depth--;
		}
	}
	return 1;
}

int json_parse(const char *text, size_t len, int max_depth, cJSON **ret_root)
{
	const char *end = NULL;
	cJSON *root;

	if (max_depth <= 0)
		max_depth = JSON_DEFAULT_MAX_DEPTH;
	if (!text || len == 0)
		return err_set(LL_EFORMAT, "The body is empty; a JSON document was expected.");
	if (memchr(text, '\0', len))
		return err_set(LL_EFORMAT, "The body contains a NUL byte.");
	if (!json_depth_ok(text, len, max_depth))
		return err_set(LL_ETOOBIG, "JSON nesting is deeper than the limit of %d.", max_depth);
	/* The text is not necessarily NUL-terminated: parse with its length,
	 * then require that only whitespace follows the value. */
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root)
		return err_set(LL_EFORMAT, "The body is not valid JSON (near byte %zu).",
			       end && end >= text ? (size_t)(end - text) : (size_t)0);
	while (end && (size_t)(end - text) < len && strchr(" \t\r\n", *end))
		end++;
	if (!end || (size_t)(end - text) != len) {
		cJSON_Delete(root);
		return err_set(LL_EFORMAT, "The body has data after the JSON value.");
	}
	*ret_root = root;
	return 0;
}

int json_parse_object(const char *text, size_t len, int max_depth, cJSON **ret_root)
{
	cJSON *root;
	int rc = json_parse(text, len, max_depth, &root);

	if (rc < 0)
		return rc;
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return err_set(LL_EINVAL, "The body must be a JSON object.");
	}
	*ret_root = root;
	return 0;
}

int json_check_keys(const cJSON *obj, const char *const *allowed, const char *where)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, obj) {
		const char *const *a;
		for (a = allowed; *a; a++)
			if (strcmp(*a, item->string) == 0)
				break;
		if (!*a)
			return err_set(LL_EINVAL, "Unknown field '%s' in %s.", item->string, where);
	}
	return 0;
}

int json_number_to_int(const cJSON *item, long long min, long long max, const char *name,
		       long long *ret_value)
{
	double v;

	if (!cJSON_IsNumber(item))
		return err_set(LL_EINVAL, "Field '%s' must be an integer.", name);
	v = item->valuedouble;
	if (!isfinite(v) || v != floor(v) || fabs(v) > JSON_MAX_SAFE_INTEGER)
		return err_set(LL_EINVAL, "Field '%s' must be an integer.", name);
	if (v < (double)min || v > (double)max)
		return err_set(LL_ERANGE, "Field '%s' must be between %lld and %lld.", name, min, max);
	*ret_value = (long long)v;
	return 0;
}

int json_get_int(const cJSON *obj, const char *key, long long min, long long max,
		 bool required, long long default_value, long long *ret_value)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!item || cJSON_IsNull(item)) {
		if (required)
			return err_set(LL_EINVAL, "Field '%s' is required.", key);
		*ret_value = default_value;
		return 0;
	}
	return json_number_to_int(item, min, max, key, ret_value);
}

int json_get_string(const cJSON *obj, const char *key, size_t max_len, bool required,
		    const char *default_value, const char **ret_value)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
	size_t len;

	if (!item || cJSON_IsNull(item)) {
		if (required)
			return err_set(LL_EINVAL, "Field '%s' is required.", key);
		*ret_value = default_value;
		return 0;
	}
	if (!cJSON_IsString(item))
		return err_set(LL_EINVAL, "Field '%s' must be a string.", key);
	len = strlen(item->valuestring);
	if (len == 0 || len > max_len)
		return err_set(LL_ERANGE, "Field '%s' must be 1 to %zu bytes long.", key, max_len);
	*ret_value = item->valuestring;
	return 0;
}

int json_get_bool(const cJSON *obj, const char *key, bool required, bool default_value,
		  bool *ret_value)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!item || cJSON_IsNull(item)) {
		if (required)
			return err_set(LL_EINVAL, "Field '%s' is required.", key);
		*ret_value = default_value;
		return 0;
	}
	if (!cJSON_IsBool(item))
		return err_set(LL_EINVAL, "Field '%s' must be true or false.", key);
	*ret_value = cJSON_IsTrue(item);
	return 0;
}

char *json_print(const cJSON *item)
{
	return cJSON_PrintUnformatted(item);
}
