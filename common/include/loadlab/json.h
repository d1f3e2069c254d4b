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

struct buf; /* loadlab/buf.h */

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

/* json_check_keys() of OBJ, which must be an object: LL_EINVAL "Field
 * 'WHERE' must be an object." when it is not. */
int json_check_object(const cJSON *obj, const char *const *allowed, const char *where);

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

/* Room json_number_text() needs: cJSON prints at most 25 bytes a number. */
#define JSON_NUMBER_MAX 32

/* Unformatted text of ITEM (not its siblings): the same bytes as
 * cJSON_PrintUnformatted() (cJSON 1.7.15), at a fraction of its cost for
 * numbers (json_number_text()). The caller frees it with free(). NULL when
 * out of memory, or when ITEM cannot be printed (as cJSON: an invalid
 * item, a raw one without text). */
char *json_print(const cJSON *item);

/* A new empty object appended to ARRAY; NULL when out of memory (ARRAY
 * unchanged). */
cJSON *json_array_add_object(cJSON *array);

/* Whether ARRAY (may be NULL or no array: false) holds the string S. */
bool json_array_has_string(const cJSON *array, const char *s);

/* Moves *ITEM into OBJECT as KEY and sets *ITEM to NULL; nothing when
 * *ITEM is NULL. LL_ENOMEM when it cannot be added (*ITEM is then still
 * the caller's). */
int json_move_to_object(cJSON *object, const char *key, cJSON **item);

/* ITEM's text (cJSON_Print() when FORMATTED, else json_print()) written
 * over PATH atomically (plat_write_file_atomic(), PRIVATE_MODE as there).
 * LL_ENOMEM when it cannot be printed, else the write's error. */
int json_write_file_atomic(const char *path, const cJSON *item, bool formatted, bool private_mode);

/* Appends json_print(ITEM)'s text to OUT without allocating per item.
 * OUT's errors (LL_ENOMEM, LL_ETOOBIG past its limit); LL_EINVAL for an
 * item cJSON could not print (then OUT holds part of the text). */
int json_append(struct buf *out, const cJSON *item);

/* Appends S as cJSON prints a string (NULL as ""): quoted, with '"', '\\'
 * and control characters escaped, other bytes as they are. OUT's errors. */
int json_append_string(struct buf *out, const char *s);

/* The text cJSON prints of the number D (print_number(): "%1.15g", or
 * "%1.17g" when that does not read back as D; null for NaN and infinities)
 * into OUT (JSON_NUMBER_MAX bytes, NUL-terminated); its length. Written
 * without printf for integers below 10^15, for the doubles nearest a
 * decimal of at most 15 digits with 1, 2 or 4 after the point (figures
 * rounded to 0.1, 0.01, 0.0001) and, where doubles are evaluated as
 * doubles with an 80-bit long double (x86-64), for other doubles in
 * [1e-20, 1e10) unless their last digit is within 0.01 of a tie (checked
 * against glibc's printf on 35 M doubles when written for the report;
 * test_json_print compares 400,000 more with cJSON); printf otherwise. */
size_t json_number_text(double d, char *out);

#endif
