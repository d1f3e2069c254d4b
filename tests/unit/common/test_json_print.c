/*
 * test_json_print.c - json_print() prints the same bytes as cJSON's
 * cJSON_PrintUnformatted(): numbers at the edges of its integer shortcut,
 * the report's figures (rounded to 0.1, 0.01, 0.0001; p-values; ties of
 * the last digit; -0, huge, tiny, NaN and infinities as null), every
 * control character, and random trees; json_append() and
 * json_number_text() write the same text.
 */
#include "loadlab/buf.h"
#include "loadlab/json.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Whether json_print(ITEM) and cJSON_PrintUnformatted(ITEM) agree. */
static int same_as_cjson(const cJSON *item)
{
	char *ours = json_print(item), *theirs = cJSON_PrintUnformatted(item);
	int same = (!ours && !theirs) || (ours && theirs && strcmp(ours, theirs) == 0);
	struct buf appended;

	buf_init(&appended, 1 << 20);
	if (item && ours && (json_append(&appended, item) < 0 || strcmp(appended.data, ours) != 0))
		same = 0;
	buf_release(&appended);

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

/* Whether json_number_text(D) is what cJSON prints of a number item D. */
static int number_as_cjson(double d)
{
	cJSON *n = cJSON_CreateNumber(d);
	char *theirs = cJSON_PrintUnformatted(n), ours[JSON_NUMBER_MAX];
	size_t len = json_number_text(d, ours);
	int same = theirs && strcmp(ours, theirs) == 0 && len == strlen(ours);

	if (!same)
		fprintf(stderr, "%.17g: json_number_text %s, cJSON %s\n", d, ours,
			theirs ? theirs : "(null)");
	free(theirs);
	cJSON_Delete(n);
	return same;
}

static uint64_t rng_state = 88172645463325252ull;

/* xorshift64: the same sequence on every run. */
static uint64_t next_random(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* The report's figures: k / 10^j rounded as its code rounds (round(x *
 * 10^j) / 10^j), j 1, 2 or 4, from 0 to 15 digits, both signs. */
static void test_rounded_figures(void)
{
	static const double scales[] = {10, 100, 10000};
	int differ = 0;

	for (int i = 0; i < 200000; i++) {
		double scale = scales[i % 3];
		double x = (double)(next_random() >> 11) / 9007199254740992.0; /* [0, 1) */
		double d = round(x * pow(10, (double)(next_random() % 16)) * scale) / scale;
		differ += !number_as_cjson(i % 2 ? -d : d);
	}
	CHECK_EQ_INT(differ, 0);
}

/* Doubles of every magnitude (p-values, ratios, bit patterns), and ones
 * whose 15th or 17th digit is a tie or within a hair of one. */
static void test_other_numbers(void)
{
	static const char *const ties[] = {"0.123456789012345650",
					   "0.12345678901234565000001",
					   "0.1234567890123456499999",
					   "1.0000000000000005",
					   "2.00000000000000050",
					   "9.9999999999999995",
					   "0.99999999999999995",
					   "1234567.8901234565",
					   "0.000123456789012345650",
					   "5e-5",
					   "1.5e-5",
					   "9.999999999999999e9",
					   "0.30000000000000004",
					   "1e-20",
					   "9.9999999999999e-21",
					   "1e10",
					   "9999999999.9999995",
					   "0.1234567890123456785"};
	int differ = 0;

	for (size_t i = 0; i < sizeof(ties) / sizeof(ties[0]); i++) {
		double d = strtod(ties[i], NULL);
		differ += !number_as_cjson(d) + !number_as_cjson(-d);
		differ += !number_as_cjson(nextafter(d, 0)) + !number_as_cjson(nextafter(d, 1e300));
	}
	for (int i = 0; i < 200000; i++) {
		uint64_t bits = next_random();
		double d, x = (double)(next_random() >> 11) / 9007199254740992.0;
		switch (i % 4) {
		case 0: /* any bit pattern */
			memcpy(&d, &bits, sizeof(d));
			break;
		case 1: /* p-values and ratios: 1e-22 .. 1e12 */
			d = x * pow(10, (double)(bits % 35) - 22);
			break;
		case 2: /* a ratio of two medians */
			d = (double)(bits % 100000 + 1) / (double)(bits >> 40 | 1);
			break;
		default: /* near an integer, a rounded figure */
			d = round(x * 1e6) / 100 + (bits % 2 ? 1e-9 : 0);
		}
		differ += !number_as_cjson(d);
	}
	CHECK_EQ_INT(differ, 0);
}

static void test_number_edges(void)
{
	char text[JSON_NUMBER_MAX];

	CHECK_EQ_INT((int)json_number_text(NAN, text), 4);
	CHECK_EQ_STR(text, "null");
	CHECK_EQ_INT((int)json_number_text(-INFINITY, text), 4);
	CHECK_EQ_STR(text, "null");
	CHECK_EQ_INT((int)json_number_text(-0.0, text), 2);
	CHECK_EQ_STR(text, "-0");
	json_number_text(-0.05, text);
	CHECK_EQ_STR(text, "-0.05");
	json_number_text(0.0001, text);
	CHECK_EQ_STR(text, "0.0001");
	json_number_text(12.3, text);
	CHECK_EQ_STR(text, "12.3");
	json_number_text(1e15, text);
	CHECK_EQ_STR(text, "1e+15");
	json_number_text(-DBL_MAX, text); /* read back as -inf, which cJSON finds close enough */
	CHECK_EQ_STR(text, "-1.79769313486232e+308");
	for (double d = -2000; d <= 2000; d += 0.25)
		CHECK(number_as_cjson(d));
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
	test_number_edges();
	test_rounded_figures();
	test_other_numbers();
	test_strings_and_kinds();
	test_random_trees();
	return check_finish();
}
