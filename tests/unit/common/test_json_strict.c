/* json_parse()'s strictness, which every body the daemon reads goes
 * through: UTF-8, no \u0000, no duplicate keys, with a message naming the
 * byte offset or the key. (The daemon relies on it.) */
#include "check.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <string.h>

static int parse(const char *text, size_t len)
{
	cJSON *root = NULL;
	int rc = json_parse(text, len, 0, &root);

	cJSON_Delete(root);
	return rc;
}

static void expect_refused(const char *text, size_t len, const char *in_message)
{
	CHECK_EQ_INT(parse(text, len), LL_EFORMAT);
	if (!strstr(err_message(LL_EFORMAT), in_message))
		CHECK_EQ_STR(err_message(LL_EFORMAT), in_message);
}

static void test_utf8(void)
{
	static const char ok[] = "{\"n\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}";
	static const char bad_byte[] = "{\"n\":\"bad\xff\"}";
	static const char overlong[] = "{\"n\":\"\xc0\xaf\"}";
	static const char surrogate[] = "{\"n\":\"\xed\xa0\x80\"}";
	static const char above[] = "{\"n\":\"\xf4\x90\x80\x80\"}";
	static const char cut[] = "{\"n\":\"\xe2\x82\"}";
	static const char bad_key[] = "{\"k\xfe\":1}";

	CHECK_EQ_INT(parse(ok, sizeof(ok) - 1), 0);
	expect_refused(bad_byte, sizeof(bad_byte) - 1, "UTF-8 (byte offset 9)");
	expect_refused(overlong, sizeof(overlong) - 1, "UTF-8 (byte offset 6)");
	expect_refused(surrogate, sizeof(surrogate) - 1, "UTF-8");
	expect_refused(above, sizeof(above) - 1, "UTF-8");
	expect_refused(cut, sizeof(cut) - 1, "UTF-8");
	expect_refused(bad_key, sizeof(bad_key) - 1, "UTF-8");
	CHECK_EQ_INT(json_utf8_check(ok, sizeof(ok) - 1, NULL), 0);
}

static void test_nul(void)
{
	static const char nul[] = "{\"n\":\"visible\\u0000hidden\"}";
	static const char nul_key[] = "{\"a\\u0000b\":1}";
	static const char escaped_backslash[] = "{\"n\":\"\\\\u0000\"}"; /* the text \u0000, no NUL */

	expect_refused(nul, sizeof(nul) - 1, "\\u0000 (byte offset 13)");
	expect_refused(nul_key, sizeof(nul_key) - 1, "\\u0000");
	CHECK_EQ_INT(parse(escaped_backslash, sizeof(escaped_backslash) - 1), 0);
}

static void test_duplicate_keys(void)
{
	static const char top[] = "{\"name\":\"a\",\"name\":\"b\"}";
	static const char deep[] = "{\"a\":[{\"x\":1},{\"y\":1,\"z\":2,\"y\":3}]}";
	static const char distinct[] = "{\"a\":{\"x\":1},\"b\":{\"x\":1}}";
	char many[8192];
	size_t n = 0;

	expect_refused(top, sizeof(top) - 1, "Duplicate key 'name'");
	expect_refused(deep, sizeof(deep) - 1, "Duplicate key 'y'");
	CHECK_EQ_INT(parse(distinct, sizeof(distinct) - 1), 0);
	/* Many members, one repeated at the end: found by sorting. */
	n += (size_t)snprintf(many + n, sizeof(many) - n, "{");
	for (int i = 0; i < 500; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "\"k%d\":%d,", i, i);
	n += (size_t)snprintf(many + n, sizeof(many) - n, "\"k7\":0}");
	expect_refused(many, n, "Duplicate key 'k7'");
}

int main(void)
{
	test_utf8();
	test_nul();
	test_duplicate_keys();
	return check_finish();
}
