#include "loadlab/json.h"

#include "loadlab/err.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
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

/* Length of the well-formed UTF-8 sequence at TEXT (at most LEFT bytes),
 * or 0. Unicode 15, table 3-7: no overlong forms, no surrogates, nothing
 * above U+10FFFF. */
static size_t utf8_sequence(const unsigned char *text, size_t left)
{
	unsigned char c = text[0], lo = 0x80, hi = 0xBF;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (left < n || text[1] < lo || text[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (text[i] < 0x80 || text[i] > 0xBF)
			return 0;
	return n;
}

int json_utf8_check(const char *text, size_t len, size_t *ret_offset)
{
	const unsigned char *p = (const unsigned char *)text;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_sequence(p + i, len - i);
		if (n == 0) {
			if (ret_offset)
				*ret_offset = i;
			return LL_EFORMAT;
		}
		i += n;
	}
	return 0;
}

/* Refuses invalid UTF-8 and the escape \u0000 inside a string (cJSON would
 * cut the string there). */
static int json_text_ok(const char *text, size_t len)
{
	bool in_string = false;
	size_t offset;

	if (json_utf8_check(text, len, &offset) < 0)
		return err_set(LL_EFORMAT, "The body is not valid UTF-8 (byte offset %zu).", offset);
	for (size_t i = 0; i < len; i++) {
		if (!in_string) {
			in_string = text[i] == '"';
			continue;
		}
		if (text[i] == '"')
			in_string = false;
		else if (text[i] == '\\' && i + 1 < len && text[i + 1] == 'u' && i + 6 <= len &&
			 memcmp(text + i + 2, "0000", 4) == 0)
			return err_set(LL_EFORMAT,
				       "A string holds \\u0000 (byte offset %zu); NUL is not allowed.", i);
		else if (text[i] == '\\')
			i++;
	}
	return 0;
}

static int compare_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first key found twice in OBJ, or NULL (LL_ENOMEM: *RET_RC). Sorting
 * keeps an object of many members from costing n^2 comparisons. */
static const char *duplicate_key(const cJSON *obj, int *ret_rc)
{
	const cJSON *item;
	const char **keys, *found = NULL;
	size_t count = 0, i = 0;

	*ret_rc = 0;
	cJSON_ArrayForEach(item, obj)
		count++;
	if (count < 2)
		return NULL;
	keys = malloc(count * sizeof(*keys));
	if (!keys) {
		*ret_rc = err_set(LL_ENOMEM, "Out of memory.");
		return NULL;
	}
	cJSON_ArrayForEach(item, obj)
		keys[i++] = item->string;
	qsort(keys, count, sizeof(*keys), compare_keys);
	for (i = 1; i < count && !found; i++)
		if (strcmp(keys[i - 1], keys[i]) == 0)
			found = keys[i];
	free(keys);
	return found;
}

/* Refuses an object, at any depth, that names a key twice. */
static int json_keys_unique(const cJSON *item)
{
	const cJSON *child;
	int rc;

	if (cJSON_IsObject(item)) {
		const char *key = duplicate_key(item, &rc);
		if (rc < 0)
			return rc;
		if (key) {
			/* Cut a long key on a character boundary: the message is
			 * sent back as JSON and must stay valid UTF-8. */
			size_t n = strlen(key) > 64 ? 64 : strlen(key);
			while (n > 0 && n < strlen(key) && ((unsigned char)key[n] & 0xC0) == 0x80)
				n--;
			return err_set(LL_EFORMAT, "Duplicate key '%.*s%s' in an object.", (int)n, key,
				       n < strlen(key) ? "..." : "");
		}
	}
	if (cJSON_IsObject(item) || cJSON_IsArray(item))
		cJSON_ArrayForEach(child, item)
			if ((rc = json_keys_unique(child)) < 0)
				return rc;
	return 0;
}

int json_parse(const char *text, size_t len, int max_depth, cJSON **ret_root)
{
	const char *end = NULL;
	cJSON *root;
	int rc;

	if (max_depth <= 0)
		max_depth = JSON_DEFAULT_MAX_DEPTH;
	if (!text || len == 0)
		return err_set(LL_EFORMAT, "The body is empty; a JSON document was expected.");
	if (memchr(text, '\0', len))
		return err_set(LL_EFORMAT, "The body contains a NUL byte.");
	if (!json_depth_ok(text, len, max_depth))
		return err_set(LL_ETOOBIG, "JSON nesting is deeper than the limit of %d.", max_depth);
	if ((rc = json_text_ok(text, len)) < 0)
		return rc;
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
	if ((rc = json_keys_unique(root)) < 0) {
		cJSON_Delete(root);
		return rc;
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

int json_check_object(const cJSON *obj, const char *const *allowed, const char *where)
{
	if (!cJSON_IsObject(obj))
		return err_set(LL_EINVAL, "Field '%s' must be an object.", where);
	return json_check_keys(obj, allowed, where);
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

/* OBJ's member KEY; NULL when it is absent or JSON null. */
static const cJSON *present_member(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNull(item) ? NULL : item;
}

/* What an absent member KEY is: LL_EINVAL when REQUIRED, else 0 (the
 * caller then stores its default). */
static int absent_member(const char *key, bool required)
{
	return required ? err_set(LL_EINVAL, "Field '%s' is required.", key) : 0;
}

int json_get_int(const cJSON *obj, const char *key, long long min, long long max, bool required,
		 long long default_value, long long *ret_value)
{
	const cJSON *item = present_member(obj, key);

	if (!item) {
		if (!required)
			*ret_value = default_value;
		return absent_member(key, required);
	}
	return json_number_to_int(item, min, max, key, ret_value);
}

int json_get_string(const cJSON *obj, const char *key, size_t max_len, bool required,
		    const char *default_value, const char **ret_value)
{
	const cJSON *item = present_member(obj, key);
	size_t len;

	if (!item) {
		if (!required)
			*ret_value = default_value;
		return absent_member(key, required);
	}
	if (!cJSON_IsString(item))
		return err_set(LL_EINVAL, "Field '%s' must be a string.", key);
	len = strlen(item->valuestring);
	if (len == 0 || len > max_len)
		return err_set(LL_ERANGE, "Field '%s' must be 1 to %zu bytes long.", key, max_len);
	*ret_value = item->valuestring;
	return 0;
}

int json_get_bool(const cJSON *obj, const char *key, bool required, bool default_value, bool *ret_value)
{
	const cJSON *item = present_member(obj, key);

	if (!item) {
		if (!required)
			*ret_value = default_value;
		return absent_member(key, required);
	}
	if (!cJSON_IsBool(item))
		return err_set(LL_EINVAL, "Field '%s' must be true or false.", key);
	*ret_value = cJSON_IsTrue(item);
	return 0;
}

bool json_array_has_string(const cJSON *array, const char *s)
{
	const cJSON *item;

	if (!cJSON_IsArray(array))
		return false;
	cJSON_ArrayForEach(item, array)
		if (cJSON_IsString(item) && strcmp(item->valuestring, s) == 0)
			return true;
	return false;
}

int json_move_to_object(cJSON *object, const char *key, cJSON **item)
{
	if (!*item)
		return 0;
	if (!cJSON_AddItemToObject(object, key, *item))
		return LL_ENOMEM;
	*item = NULL;
	return 0;
}

cJSON *json_array_add_object(cJSON *array)
{
	cJSON *item = cJSON_CreateObject();

	if (!item || !cJSON_AddItemToArray(array, item)) {
		cJSON_Delete(item);
		return NULL;
	}
	return item;
}
