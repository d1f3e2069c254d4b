/*
 * json.h - strict parsing and typed field access on top of cJSON.
 *
 * Every function that fails returns a negative LL_E* code and records a
 * message naming the offending field (err_message()), fit to be sent back
 * to the user as is. Outputs are untouched on failure.
 */
#ifndef LOADLAB_JSON_H
#define LOADLAB_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* The deepest nesting json_parse() accepts when given 0 as max_depth. */
#define JSON_DEFAULT_MAX_DEPTH 32

/* Parses LEN bytes as exactly one JSON value (trailing whitespace only).
 * Nesting deeper than MAX_DEPTH (0: JSON_DEFAULT_MAX_DEPTH) is refused
 * before cJSON sees the text, so its recursion stays shallow.
 * Strict (RFC 8259 with I-JSON's rules, RFC 7493): the text must be valid
 * UTF-8, no string may hold the escape \u0000 (cJSON would cut it there),
 * and no object, at any depth, may name a key twice; the message names the
 * byte offset or the key. Text accepted here prints back as valid JSON.
 * LL_EFORMAT for malformed text, LL_ETOOBIG for too deep. The caller
 * deletes *RET_ROOT with cJSON_Delete(). */
int json_parse(const char *text, size_t len, int max_depth, cJSON **ret_root);

/* 0 when LEN bytes of TEXT are well-formed UTF-8 (no overlong forms, no
 * surrogates, nothing above U+10FFFF); else LL_EFORMAT with the offset of
 * the first bad byte in *RET_OFFSET (may be NULL). Records no message. */
int json_utf8_check(const char *text, size_t len, size_t *ret_offset);

/* Like json_parse() but also requires an object at the top. */
int json_parse_object(const char *text, size_t len, int max_depth, cJSON **ret_root);

/* Refuses members of OBJ not named in ALLOWED (NULL-terminated). WHERE
 * names the object in the message ("job", "generator"). */
int json_check_keys(const cJSON *obj, const char *const *allowed, const char *where);

/* An integer member KEY of OBJ within [MIN, MAX]. When absent: DEFAULT_VALUE
 * if REQUIRED is false, else LL_EINVAL. Non-integers and numbers beyond
 * 2^53 are refused. */
int json_get_int(const cJSON *obj, const char *key, long long min, long long max, bool required,
		 long long default_value, long long *ret_value);

/* A string member KEY of OBJ, 1..MAX_LEN bytes. When absent: DEFAULT_VALUE
 * (may be NULL) if REQUIRED is false. *RET_VALUE is borrowed from OBJ. */
int json_get_string(const cJSON *obj, const char *key, size_t max_len, bool required,
		    const char *default_value, const char **ret_value);

/* A boolean member KEY of OBJ; DEFAULT_VALUE when absent and not REQUIRED. */
int json_get_bool(const cJSON *obj, const char *key, bool required, bool default_value, bool *ret_value);

/* Reads a JSON number as an integer within [MIN, MAX] (no member lookup). */
int json_number_to_int(const cJSON *item, long long min, long long max, const char *name,
		       long long *ret_value);

/* Unformatted text of ITEM: the same bytes as cJSON_PrintUnformatted()
 * (cJSON 1.7.15), at a fraction of the cost for integers (json_print.c).
 * The caller frees it with free(). NULL when out of memory, or when ITEM
 * cannot be printed (as cJSON: an invalid item, a raw one without text). */
char *json_print(const cJSON *item);

#endif
