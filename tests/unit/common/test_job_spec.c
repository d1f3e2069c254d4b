/* job_spec: normalization, bounds, matrix expansion and matching. */
#include "check.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *parse(const char *text)
{
	cJSON *root = NULL;

	CHECK_EQ_INT(json_parse(text, strlen(text), 0, &root), 0);
	return root;
}

static int normalize_text(const char *text, cJSON **ret)
{
	cJSON *job = parse(text);
	int rc = job_spec_normalize(job, ret);

	cJSON_Delete(job);
	return rc;
}

static void test_presets_and_defaults(void)
{
	cJSON *n = NULL, *v;
	const char *job = "{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":10,\"exports\":100},"
			  "\"variants\":[\"default\",\"bind\",\"ordinal+rebase\",\"no-rebase\","
			  "{\"name\":\"mine\",\"bases\":\"unique\",\"order\":\"trace\"}]}";

	CHECK_EQ_INT(normalize_text(job, &n), 0);
	v = cJSON_GetObjectItem(n, "variants");
	CHECK_EQ_INT(cJSON_GetArraySize(v), 5);
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 0), "bases")->valuestring, "same");
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 1), "bind")));
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 1), "bases")->valuestring, "unique");
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 2), "imports")->valuestring, "ordinal");
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 3), "bases")->valuestring, "toolchain");
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 4), "order")->valuestring, "trace");
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 4), "imports")->valuestring, "name");
	/* Defaults: warm 30 after 3, globals 0, main "reference", one empty cell. */
	CHECK_EQ_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "measure"), "warm"),
					 "runs")->valueint, 30);
	CHECK_EQ_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "generator"), "globals_per_function")->valueint, 0);
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "generator"), "main")->valuestring, "reference");
	{
		cJSON *cells = NULL;
		CHECK_EQ_INT(job_spec_expand_cells(n, &cells), 0);
		CHECK_EQ_INT(cJSON_GetArraySize(cells), 1);
		CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetArrayItem(cells, 0)), 0);
		cJSON_Delete(cells);
	}
	/* Normalizing a normalized job changes nothing (the agent checks again). */
	{
		cJSON *again = NULL;
		CHECK_EQ_INT(job_spec_normalize(n, &again), 0);
		CHECK(cJSON_Compare(n, again, true));
		cJSON_Delete(again);
	}
	cJSON_Delete(n);
}

static void test_bounds(void)
{
	static const char *const bad[] = {
		"{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":257,\"exports\":1},\"variants\":[\"default\"]}",
		"{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":100,\"exports\":1001},\"variants\":[\"default\"]}",
		"{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},\"variants\":[\"now\"]}",
		"{\"name\":\"p\",\"family\":\"elf\",\"generator\":{\"dlls\":1,\"exports\":1},\"variants\":[\"bind\"]}",
		"{\"name\":\"p\",\"family\":\"elf\",\"generator\":{\"dlls\":1,\"exports\":1},\"variants\":[{\"name\":\"x\"}]}",
		"{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},\"variants\":[\"default\"],\"measure\":{\"warm\":{\"runs\":1001}}}",
		"{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},\"variants\":[\"default\"],\"matrix\":{\"cells\":{\"os\":[\"a\",\"a\"]}}}",
		"{\"name\":\"p\\u0001\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},\"variants\":[\"default\"]}",
		"[]",
	};
	cJSON *n = (cJSON *)1;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = normalize_text(bad[i], &n);
		CHECK(rc == LL_EINVAL || rc == LL_ERANGE);
		CHECK(n == (cJSON *)1); /* untouched on failure */
	}
}

static void test_cells_and_matching(void)
{
	cJSON *n = NULL, *cells = NULL;
	cJSON *facts = parse("{\"os\":\"win10\",\"disk\":\"ssd\",\"cores\":4,\"wine\":true,"
			     "\"toolchains\":[\"gcc\",\"clang\"]}");
	cJSON *labels = parse("{\"disk\":\"hdd\"}");
	cJSON *cell;

	CHECK_EQ_INT(normalize_text("{\"name\":\"m\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
				    "\"variants\":[\"default\"],\"matrix\":{\"cells\":{\"os\":[\"winxp\",\"win10\"],"
				    "\"disk\":[\"hdd\",\"ssd\"],\"fs\":[\"ntfs\"]}}}", &n), 0);
	CHECK_EQ_INT(job_spec_expand_cells(n, &cells), 0);
	CHECK_EQ_INT(cJSON_GetArraySize(cells), 4);
	cell = cJSON_GetArrayItem(cells, 3);
	CHECK_EQ_STR(cJSON_GetObjectItem(cell, "os")->valuestring, "win10");
	CHECK_EQ_STR(cJSON_GetObjectItem(cell, "disk")->valuestring, "ssd");
	CHECK_EQ_STR(cJSON_GetObjectItem(cell, "fs")->valuestring, "ntfs");
	cJSON_Delete(cells);
	cJSON_Delete(n);

	/* A label or a fact may match; numbers, booleans and lists of facts too. */
	cell = parse("{\"os\":\"win10\",\"disk\":\"hdd\"}");
	CHECK(job_spec_cell_matches(cell, facts, labels));
	cJSON_Delete(cell);
	cell = parse("{\"cores\":\"4\",\"wine\":\"true\",\"toolchains\":\"clang\"}");
	CHECK(job_spec_cell_matches(cell, facts, labels));
	cJSON_Delete(cell);
	cell = parse("{\"os\":\"winxp\"}");
	CHECK(!job_spec_cell_matches(cell, facts, labels));
	cJSON_Delete(cell);
	cell = parse("{\"fs\":\"ntfs\"}");
	CHECK(!job_spec_cell_matches(cell, facts, labels));
	cJSON_Delete(cell);
	cell = parse("{\"os\":[\"winxp\",\"win10\"],\"cores\":[\"4\"]}");
	CHECK(job_spec_selector_matches(cell, facts, labels));
	cJSON_Delete(cell);
	cell = parse("{\"os\":[\"winxp\"]}");
	CHECK(!job_spec_selector_matches(cell, facts, labels));
	cJSON_Delete(cell);
	cJSON_Delete(facts);
	cJSON_Delete(labels);

	CHECK(job_spec_key_valid("disk_kind2"));
	CHECK(!job_spec_key_valid("Disk"));
	CHECK(!job_spec_key_valid("2disk"));
	CHECK(!job_spec_key_valid(""));
	CHECK(!job_spec_key_valid("abcdefghijklmnopqrstuvwxyz0123456"));
}

static void test_series_and_revision(void)
{
	const char *head = "{\"name\":\"s\",\"family\":\"elf\",\"generator\":{\"dlls\":1,\"exports\":1},"
			   "\"variants\":[\"default\"]";
	char text[512];
	cJSON *n = NULL;

	snprintf(text, sizeof(text), "%s,\"series\":\"ci/main\",\"revision\":\"v1.2 (abc)\"}", head);
	CHECK_EQ_INT(normalize_text(text, &n), 0);
	CHECK_EQ_STR(cJSON_GetObjectItemCaseSensitive(n, "series")->valuestring, "ci/main");
	CHECK_EQ_STR(cJSON_GetObjectItemCaseSensitive(n, "revision")->valuestring, "v1.2 (abc)");
	cJSON_Delete(n);
	n = NULL;
	/* absent: absent from the normalized spec too */
	snprintf(text, sizeof(text), "%s}", head);
	CHECK_EQ_INT(normalize_text(text, &n), 0);
	CHECK(!cJSON_GetObjectItemCaseSensitive(n, "series"));
	CHECK(!cJSON_GetObjectItemCaseSensitive(n, "revision"));
	cJSON_Delete(n);
	n = NULL;
	snprintf(text, sizeof(text), "%s,\"series\":\"a b\"}", head);
	CHECK_EQ_INT(normalize_text(text, &n), LL_EINVAL);
	snprintf(text, sizeof(text), "%s,\"series\":\"\"}", head);
	CHECK(normalize_text(text, &n) < 0);
	snprintf(text, sizeof(text), "%s,\"series\":7}", head);
	CHECK(normalize_text(text, &n) < 0);
	snprintf(text, sizeof(text), "%s,\"revision\":\"a\\u0001\"}", head);
	CHECK_EQ_INT(normalize_text(text, &n), LL_EINVAL);
	CHECK(job_spec_series_valid("nightly-xp-matrix"));
	CHECK(!job_spec_series_valid("caf\xc3\xa9"));
	{
		char long_name[130];
		memset(long_name, 'x', 129);
		long_name[129] = 0;
		CHECK(!job_spec_series_valid(long_name));
		long_name[128] = 0;
		CHECK(job_spec_series_valid(long_name));
	}
}

int main(void)
{
	test_series_and_revision();
	test_presets_and_defaults();
	test_bounds();
	test_cells_and_matching();
	return check_finish();
}
