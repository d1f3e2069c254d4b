/*
 * check_json.h - reading the JSON documents a unit test checks, with
 * check.h: member() and number(); whether an array holds a string is
 * loadlab/json.h's json_array_has_string().
 */
#ifndef LOADLAB_TEST_CHECK_JSON_H
#define LOADLAB_TEST_CHECK_JSON_H

#include <cjson/cJSON.h>

#include "loadlab/json.h"

/* What number() gives for a member that is missing or no number:
 * no figure a test expects. */
#define CHECK_NO_NUMBER (-12345.0)

/* OBJECT's member KEY (case-sensitive); NULL when there is none. */
static inline const cJSON *member(const cJSON *object, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(object, key);
}

/* OBJECT's number member KEY; CHECK_NO_NUMBER when missing or no number. */
static inline double number(const cJSON *object, const char *key)
{
	const cJSON *v = member(object, key);

	return cJSON_IsNumber(v) ? v->valuedouble : CHECK_NO_NUMBER;
}

#endif
