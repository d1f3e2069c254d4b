/* report_loader_work.h: the flagging rule as a table (a variant's knobs,
 * the loader's counts, flagged or not and the words of its reason, for
 * the pe family, a PE program, the elf family and an ELF program), and
 * the table, its findings and its Markdown (report_markdown_job()) from
 * tasks' summaries. */
#include "check.h"

#include "reports/report_int.h"
#include "reports/report_loader_work.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static cJSON *parse(const char *text)
{
	cJSON *o = cJSON_Parse(text);

	CHECK(o != NULL);
	return o;
}

static const struct {
	const char *knobs, *loader;
	const char *flag; /* words the reason holds; NULL: not flagged */
} rules[] = {
	/* pe family: rebased, and it stayed put */
	{"{\"bases\":\"unique\",\"bind\":false,\"imports\":\"name\"}",
	 "{\"source\":\"probe\",\"relocations\":0,\"images\":11,\"images_relocated\":0,\"imports_by_name\":"
	 "1000,"
	 "\"imports_by_ordinal\":0,\"imports_bound\":0,\"static\":{\"relocations\":0,\"imports_bound\":0}}",
	 NULL},
	/* a rebased DLL that still applied relocations */
	{"{\"bases\":\"unique\",\"bind\":false,\"imports\":\"name\"}",
	 "{\"source\":\"probe\",\"relocations\":1900,\"images\":11,\"images_relocated\":1}",
	 "yet the loader applied 1900 relocations (1 of its images moved)"},
	/* same bases: all but one moved, as promised */
	{"{\"bases\":\"same\",\"bind\":false,\"imports\":\"name\"}",
	 "{\"source\":\"static\",\"relocations\":9000,\"images\":11,\"images_relocated\":9}", NULL},
	{"{\"bases\":\"same\",\"bind\":false,\"imports\":\"name\"}",
	 "{\"source\":\"static\",\"relocations\":0,\"images\":11,\"images_relocated\":0}",
	 "none of its 11 images"},
	/* one DLL at a 'same' base moves nothing: no contradiction */
	{"{\"bases\":\"same\",\"bind\":false,\"imports\":\"name\"}",
	 "{\"source\":\"static\",\"relocations\":0,\"images\":2,\"images_relocated\":0}", NULL},
	/* bound under Wine: the probe resolves all, the static count holds it */
	{"{\"bases\":\"unique\",\"bind\":true,\"imports\":\"name\"}",
	 "{\"source\":\"probe\",\"relocations\":0,\"imports_bound\":0,\"imports_by_name\":1010,"
	 "\"cannot_show\":\"Wine ignores bound "
	 "imports\",\"static\":{\"relocations\":0,\"imports_bound\":1000}}",
	 NULL},
	/* a bound variant with no valid binding */
	{"{\"bases\":\"unique\",\"bind\":true,\"imports\":\"name\"}",
	 "{\"source\":\"probe\",\"relocations\":0,\"imports_bound\":0,\"static\":{\"relocations\":0,"
	 "\"imports_bound\":0}}",
	 "no import has a valid binding"},
	{"{\"bases\":\"as-built\",\"bind\":true,\"aslr\":\"as-built\"}",
	 "{\"source\":\"static\",\"relocations\":0,\"imports_bound\":0}", "no import has a valid binding"},
	/* ordinal imports */
	{"{\"bases\":\"unique\",\"bind\":false,\"imports\":\"ordinal\"}",
	 "{\"source\":\"probe\",\"relocations\":0,\"imports_by_ordinal\":1000,\"imports_by_name\":10}", NULL},
	{"{\"bases\":\"unique\",\"bind\":false,\"imports\":\"ordinal\"}",
	 "{\"source\":\"probe\",\"relocations\":0,\"imports_by_ordinal\":0,\"imports_by_name\":1010}",
	 "none is resolved by ordinal"},
	/* the probe and the files disagree */
	{"{\"bases\":\"toolchain\",\"bind\":false,\"imports\":\"name\"}",
	 "{\"source\":\"probe\",\"relocations\":300,\"static\":{\"relocations\":0}}",
	 "the probe saw 300 relocations applied, the files predict 0"},
	/* elf family: -z now without lazy bindings, and with */
	{"{\"bind\":\"now\",\"relocs\":\"rela\"}",
	 "{\"source\":\"glibc\",\"relocations\":1333,\"final_relocations\":1333,\"relative_relocations\":"
	 "267}",
	 NULL},
	{"{\"bind\":\"now\",\"relocs\":\"rela\"}",
	 "{\"source\":\"glibc\",\"relocations\":333,\"final_relocations\":359}",
	 "26 symbols were bound lazily"},
	/* lazy may bind later: no contradiction */
	{"{\"bind\":\"lazy\",\"relocs\":\"rela\"}",
	 "{\"source\":\"glibc\",\"relocations\":333,\"final_relocations\":359}", NULL},
	/* an ELF program's bind-now */
	{"{\"bind_now\":true,\"pagein\":false}",
	 "{\"source\":\"glibc\",\"relocations\":100,\"final_relocations\":101}",
	 "1 symbols were bound lazily"},
	/* nothing counted is never flagged; no knobs, nothing promised */
	{"{\"bases\":\"unique\"}", "{\"source\":\"static\",\"not_counted\":\"unreadable\",\"relocations\":5}",
	 NULL},
	{NULL, "{\"source\":\"glibc\",\"relocations\":333,\"final_relocations\":359}", NULL},
};

static void test_rules(void)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		cJSON *knobs = rules[i].knobs ? parse(rules[i].knobs) : NULL,
		      *loader = parse(rules[i].loader);
		char reason[REPORT_LOADER_WORK_MAX_REASON] = "";
		bool flagged = report_loader_work_flag(knobs, loader, reason, sizeof(reason));
		if (flagged != (rules[i].flag != NULL) || (flagged && !strstr(reason, rules[i].flag)))
			fprintf(stderr, "rule %zu: flagged %d, reason '%s'\n", i, flagged, reason);
		CHECK(flagged == (rules[i].flag != NULL));
		CHECK(!flagged || strstr(reason, rules[i].flag) != NULL);
		cJSON_Delete(knobs);
		cJSON_Delete(loader);
	}
}

/* Two variants in two cells, through the summary's copy: rows in variant
 * order, the flagged one with its reason, a finding, the Markdown. */
static void test_table(void)
{
	cJSON *good = parse(
		"{\"name\":\"rebase\",\"knobs\":{\"bases\":\"unique\",\"bind\":false},"
		"\"loader\":{\"source\":\"static\",\"relocations\":0,\"images\":3,\"images_relocated\":0,"
		"\"imports_by_name\":30,\"imports_by_ordinal\":0,\"imports_bound\":0}}");
	cJSON *bad = parse("{\"name\":\"bind\",\"knobs\":{\"bases\":\"unique\",\"bind\":true},"
			   "\"loader\":{\"source\":\"static\",\"relocations\":0,\"imports_bound\":0,"
			   "\"imports_by_name\":30}}");
	cJSON *none = parse("{\"name\":\"other\",\"knobs\":{}}");
	cJSON *tasks = cJSON_CreateArray(), *names = parse("[\"bind\",\"rebase\",\"other\"]"), *findings;
	const char *keys[] = {"os=win10", "os=winxp"};

	for (int i = 0; i < 2; i++) {
		cJSON *t = cJSON_CreateObject(), *variants;
		cJSON_AddStringToObject(t, "key", keys[i]);
		variants = cJSON_AddObjectToObject(cJSON_AddObjectToObject(t, "summary"), "variants");
		report_loader_work_summary(good, cJSON_AddObjectToObject(variants, "rebase"));
		report_loader_work_summary(bad, cJSON_AddObjectToObject(variants, "bind"));
		report_loader_work_summary(none, cJSON_AddObjectToObject(variants, "other"));
		CHECK(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(variants, "other"),
						       "loader") == NULL);
		cJSON_AddItemToArray(tasks, t);
	}
	cJSON *table = report_loader_work_table(tasks, names);
	CHECK(table != NULL);
	cJSON *rows = cJSON_GetObjectItemCaseSensitive(table, "rows");
	CHECK_EQ_INT(cJSON_GetArraySize(rows), 4);
	CHECK_EQ_INT(cJSON_GetObjectItemCaseSensitive(table, "flagged")->valuedouble, 2);
	cJSON *first = cJSON_GetArrayItem(rows, 0), *third = cJSON_GetArrayItem(rows, 2);
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, "variant")), "bind");
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, "cell")), "os=win10");
	CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(first, "flagged")));
	CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, "flag")),
		     "valid binding") != NULL);
	CHECK(cJSON_GetObjectItemCaseSensitive(first, "knobs") == NULL);
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(third, "variant")), "rebase");
	CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(third, "flagged")));
	CHECK_EQ_INT(cJSON_GetObjectItemCaseSensitive(third, "imports_by_name")->valuedouble, 30);

	findings = cJSON_CreateArray();
	report_loader_work_findings(table, findings);
	CHECK_EQ_INT(cJSON_GetArraySize(findings), 2);
	CHECK(strstr(cJSON_GetArrayItem(findings, 0)->valuestring, "bind on os=win10") != NULL);

	struct buf md;
	cJSON *report = parse("{\"job\":{\"id\":1,\"name\":\"j\",\"family\":\"pe\",\"state\":\"done\"},"
			      "\"cells\":[],\"warm\":{\"measured\":false},\"findings\":[]}");
	cJSON_AddItemReferenceToObject(report, "loader_work", table);
	buf_init(&md, 1 << 20);
	report_markdown_job(report, &md);
	cJSON_Delete(report);
	CHECK(strstr(buf_str(&md), "## Loader work") != NULL);
	CHECK(strstr(buf_str(&md), "| rebase | os=winxp | static | 0 | – | – | 30 | 0 | 0 | – |") != NULL);
	CHECK(strstr(buf_str(&md), "| bind ⚑ | os=win10 |") != NULL);
	buf_release(&md);

	/* no loader anywhere: no table */
	cJSON *empty = parse("[{\"key\":\"x\",\"summary\":{\"variants\":{\"bind\":{\"valid\":true}}}}]");
	CHECK(report_loader_work_table(empty, names) == NULL);

	cJSON_Delete(empty);
	cJSON_Delete(findings);
	cJSON_Delete(table);
	cJSON_Delete(tasks);
	cJSON_Delete(names);
	cJSON_Delete(good);
	cJSON_Delete(bad);
	cJSON_Delete(none);
}

int main(void)
{
	test_rules();
	test_table();
	return check_finish();
}
