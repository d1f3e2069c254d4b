#include "check.h"
#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

#include <stdlib.h>

static void test_parse(void)
{
	cJSON *root = NULL;
	const char ok[] = "{\"a\": 1, \"b\": \"x\"}  \n";
	const char trailing[] = "{\"a\": 1} {}";
	long long v = -1;
	const char *s = NULL;
	char deep[200];

	CHECK_EQ_INT(json_parse_object(ok, sizeof(ok) - 1, 0, &root), 0);
	CHECK_EQ_INT(json_get_int(root, "a", 0, 10, true, 0, &v), 0);
	CHECK_EQ_INT(v, 1);
	CHECK_EQ_INT(json_get_int(root, "a", 2, 10, true, 0, &v), LL_ERANGE);
	CHECK_EQ_INT(v, 1); /* untouched on failure */
	CHECK_EQ_INT(json_get_int(root, "b", 0, 10, true, 0, &v), LL_EINVAL);
	CHECK_EQ_INT(json_get_int(root, "missing", 0, 10, false, 7, &v), 0);
	CHECK_EQ_INT(v, 7);
	CHECK_EQ_INT(json_get_string(root, "b", 8, true, NULL, &s), 0);
	CHECK_EQ_STR(s, "x");
	CHECK_EQ_INT(json_check_keys(root, (const char *const[]){"a", NULL}, "test"), LL_EINVAL);
	CHECK(strstr(err_message(LL_EINVAL), "'b'") != NULL);
	cJSON_Delete(root);

	root = NULL;
	CHECK_EQ_INT(json_parse(trailing, sizeof(trailing) - 1, 0, &root), LL_EFORMAT);
	CHECK(root == NULL);
	CHECK_EQ_INT(json_parse("[1,", 3, 0, &root), LL_EFORMAT);
	CHECK_EQ_INT(json_parse("", 0, 0, &root), LL_EFORMAT);
	CHECK_EQ_INT(json_parse_object("[1]", 3, 0, &root), LL_EINVAL);

	/* Nesting: 40 levels are refused at the default limit of 32; brackets
	 * inside strings do not count. */
	memset(deep, '[', 40);
	memset(deep + 40, ']', 40);
	CHECK_EQ_INT(json_parse(deep, 80, 0, &root), LL_ETOOBIG);
	CHECK_EQ_INT(json_parse("[\"[[[[[[[[[[\"]", 14, 2, &root), 0);
	cJSON_Delete(root);
}

static void test_buf(void)
{
	struct buf b;

	buf_init(&b, 8);
	CHECK_EQ_STR(buf_str(&b), "");
	CHECK_EQ_INT(buf_append_str(&b, "abcd"), 0);
	CHECK_EQ_INT(buf_printf(&b, "%d", 1234), 0);
	CHECK_EQ_STR(buf_str(&b), "abcd1234");
	CHECK_EQ_INT(buf_append_str(&b, "x"), LL_ETOOBIG);
	CHECK_EQ_INT(b.len, 8);
	CHECK_EQ_STR(buf_str(&b), "abcd1234");
	buf_release(&b);
	CHECK(b.data == NULL);
}

/* json_array_has_string() and json_move_to_object(). */
static void test_helpers(void)
{
	cJSON *list = NULL, *o = cJSON_CreateObject(), *item = cJSON_CreateString("moved"), *none = NULL;

	CHECK_EQ_INT(json_parse("[1, \"a\", null, \"bc\"]", 20, 0, &list), 0);
	CHECK(json_array_has_string(list, "a") && json_array_has_string(list, "bc"));
	CHECK(!json_array_has_string(list, "b") && !json_array_has_string(list, "1"));
	CHECK(!json_array_has_string(NULL, "a") && !json_array_has_string(o, "a"));
	CHECK_EQ_INT(json_move_to_object(o, "k", &item), 0);
	CHECK(item == NULL);
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "k")), "moved");
	CHECK_EQ_INT(json_move_to_object(o, "none", &none), 0); /* nothing to move */
	CHECK(cJSON_GetObjectItemCaseSensitive(o, "none") == NULL && cJSON_GetArraySize(o) == 1);
	cJSON_Delete(list);
	cJSON_Delete(o);
}

int main(void)
{
	test_parse();
	test_buf();
	test_helpers();
	return check_finish();
}
