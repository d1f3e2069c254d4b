/*
 * test_json_print.c - json_print() prints the same bytes as cJSON's
 * cJSON_PrintUnformatted(): numbers at the edges of its integer shortcut,
 * every control character, and random trees.
 */
#include "loadlab/json.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Whether json_print(ITEM) and cJSON_PrintUnformatted(ITEM) agree. */
static int same_as_cjson(const cJSON *item)
{
	char *ours = json_print(item), *theirs = cJSON_PrintUnformatted(item);
	int same = (!ours && !theirs) || (ours && theirs && strcmp(ours, theirs) == 0);

	if (!same)
		fprintf(stderr, "json_print: %s\ncJSON:      %s\n", ours ? ours : "(null)",
			theirs ? theirs : "(null)");
	free(ours);
	free(theirs);
	return same;
}

static void test_numbers(void)
{
	const double numbers[] = {0,
				  -0.0,
				  1,
				  -1,
				  7,
				  42,
				  2147483647,
				  2147483648.0,
				  -2147483649.0,
				  999999999999999,
				  -999999999999999,
				  1e15,
				  -1e15,
				  1e15 + 1,
				  9007199254740993.0,
				  1e300,
				  -1e-300,
				  0.1,
				  1.0 / 3,
				  2.5,
				  -2.5,
				  123456.789,
				  1e14 + 0.5,
				  DBL_MAX,
				  DBL_MIN,
				  5e-324,
				  NAN,
				  INFINITY,
				  -INFINITY};

	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		cJSON *n = cJSON_CreateNumber(numbers[i]);
		CHECK(same_as_cjson(n));
		cJSON_Delete(n);
	}
}

static void test_strings_and_kinds(void)
{
	char all[256];
	cJSON *o = cJSON_CreateObject(), *raw = cJSON_CreateRaw("{\"a\":[1,2]}"), *bad;

	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = '\0';
	cJSON_AddStringToObject(o, "all", all);
	cJSON_AddStringToObject(o, "", "");
	cJSON_AddStringToObject(o, "k\"\\\n", "caf\xc3\xa9 \xe2\x82\xac");
	cJSON_AddNullToObject(o, "null");
	cJSON_AddTrueToObject(o, "t");
	cJSON_AddFalseToObject(o, "f");
	cJSON_AddItemToObject(o, "raw", raw);
	cJSON_AddItemToObject(o, "empty_object", cJSON_CreateObject());
	cJSON_AddItemToObject(o, "empty_array", cJSON_CreateArray());
	cJSON_AddItemToObject(o, "nested", cJSON_CreateIntArray((int[]){1, -2, 3}, 3));
	CHECK(same_as_cjson(o));
	/* A string item whose text is NULL prints as "". */
	bad = cJSON_CreateString("x");
	free(bad->valuestring);
	bad->valuestring = NULL;
	CHECK(same_as_cjson(bad));
	/* An invalid item (type 0) and a raw item without text: no text. */
	bad->type = cJSON_Invalid;
	CHECK(json_print(bad) == NULL);
	bad->type = cJSON_Raw;
	CHECK(json_print(bad) == NULL);
	CHECK(json_print(NULL) == NULL);
	cJSON_Delete(bad);
	cJSON_Delete(o);
}

/* A random value DEPTH levels deep at most. */
static cJSON *random_value(int depth)
{
	int kind = rand() % (depth > 0 ? 8 : 6);
	char text[16];
	cJSON *v;

	switch (kind) {
	case 0:
		return cJSON_CreateNull();
	case 1:
		return cJSON_CreateBool(rand() % 2);
	case 2:
		return cJSON_CreateNumber((double)(rand() % 2000001 - 1000000));
	case 3:
		return cJSON_CreateNumber((double)rand() / (rand() + 1) * (rand() % 2 ? 1e-5 : 1e12));
	case 4:
	case 5:
		for (int i = 0, n = rand() % 15; i <= n; i++)
			text[i] = i == n ? '\0' : (char)(rand() % 255 + 1);
		return cJSON_CreateString(text);
	default:
		v = kind == 6 ? cJSON_CreateArray() : cJSON_CreateObject();
		for (int i = 0, n = rand() % 5; i < n; i++) {
			snprintf(text, sizeof(text), "k%d", rand() % 100);
			if (kind == 6)
				cJSON_AddItemToArray(v, random_value(depth - 1));
			else
				cJSON_AddItemToObject(v, text, random_value(depth - 1));
		}
		return v;
	}
}

static void test_random_trees(void)
{
	int differ = 0;

	srand(16);
	for (int i = 0; i < 2000; i++) {
		cJSON *v = random_value(4);
		differ += !same_as_cjson(v);
		cJSON_Delete(v);
	}
	CHECK_EQ_INT(differ, 0);
}

int main(void)
{
	test_numbers();
	test_strings_and_kinds();
	test_random_trees();
	return check_finish();
}
