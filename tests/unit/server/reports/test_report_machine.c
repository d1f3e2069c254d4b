/* report_machine.h: the facts kept, their digest (the same facts in any
 * order give the same digest, a changed CPU model another) and the facts
 * that differ; and report_trace_change_points() on a trace whose machine
 * changed at the step. */
#include "check.h"

#include "reports/report.h"
#include "reports/report_machine.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static cJSON *parse(const char *text)
{
	cJSON *o = cJSON_Parse(text);

	CHECK(o != NULL);
	return o;
}

static void test_digest_and_differences(void)
{
	cJSON *a = parse(
		"{\"os\":\"winxp\",\"cpu_model\":\"lab cpu\",\"cores\":4,\"ram_mb\":512,\"name\":\"x\"}");
	cJSON *b = parse(
		"{\"cores\":4,\"name\":\"y\",\"cpu_model\":\"lab cpu\",\"ram_mb\":1024,\"os\":\"winxp\"}");
	cJSON *c = parse("{\"os\":\"winxp\",\"cpu_model\":\"other cpu\",\"cores\":4,\"disk\":\"ssd\"}");
	cJSON *ma = report_machine_facts(a), *mb = report_machine_facts(b), *mc = report_machine_facts(c);
	cJSON *d = report_machine_differences(ma, mc), *none = report_machine_differences(ma, mb);
	char da[REPORT_MACHINE_DIGEST_HEX + 1], db[REPORT_MACHINE_DIGEST_HEX + 1],
		dc[REPORT_MACHINE_DIGEST_HEX + 1];
	char *text = cJSON_PrintUnformatted(d);

	report_machine_digest(ma, da);
	report_machine_digest(mb, db);
	report_machine_digest(mc, dc);
	CHECK_EQ_INT(strlen(da), REPORT_MACHINE_DIGEST_HEX);
	CHECK_EQ_STR(da, db); /* RAM and the name do not count, nor the order */
	CHECK(strcmp(da, dc) != 0);
	CHECK(cJSON_GetObjectItemCaseSensitive(ma, "ram_mb") == NULL);
	CHECK_EQ_INT(cJSON_GetArraySize(none), 0);
	CHECK_EQ_STR(text, "[{\"fact\":\"cpu_model\",\"before\":\"lab cpu\",\"after\":\"other cpu\"},"
			   "{\"fact\":\"disk\",\"before\":null,\"after\":\"ssd\"}]");
	free(text);
	cJSON_Delete(d);
	cJSON_Delete(none);
	cJSON_Delete(ma);
	cJSON_Delete(mb);
	cJSON_Delete(mc);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
}

/* 24 points, 10 % slower from point 12 on, where the digest changes. */
static void test_trace_machine_change(void)
{
	cJSON *trace = cJSON_CreateObject(), *points, *machines = cJSON_CreateArray(), *found;
	int n = 0;

	cJSON_AddStringToObject(trace, "variant", "default");
	cJSON_AddStringToObject(trace, "cell", "any");
	points = cJSON_AddArrayToObject(trace, "points");
	for (int i = 0; i < 24; i++) {
		cJSON *p = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(p, "machine");
		char rev[8];
		snprintf(rev, sizeof(rev), "r%02d", i);
		cJSON_AddNumberToObject(p, "job_id", i + 1);
		cJSON_AddStringToObject(p, "revision", rev);
		cJSON_AddStringToObject(p, "created_at", "2026-12-01T00:00:00.000Z");
		cJSON_AddNumberToObject(p, "median_us", (i < 12 ? 1000 : 1100) + (i % 3) * 0.5);
		cJSON_AddStringToObject(p, "facts_digest", i < 12 ? "aaaaaaaaaaaaaaaa" : "bbbbbbbbbbbbbbbb");
		cJSON_AddStringToObject(m, "cpu_model", i < 12 ? "lab cpu" : "other cpu");
		cJSON_AddItemToArray(points, p);
	}
	found = report_trace_change_points(trace, 0, 5, machines, &n);
	CHECK(found != NULL);
	CHECK_EQ_INT(n, 24);
	CHECK_EQ_INT(cJSON_GetArraySize(found), 1);
	CHECK(cJSON_IsTrue(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(found, 0), "machine_changed")));
	CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(found, 0), "regression")));
	CHECK_EQ_STR(
		cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(found, 0), "after"), "revision")),
		"r12");
	CHECK_EQ_INT(cJSON_GetArraySize(machines), 1);
	cJSON_Delete(found);
	/* up to job 13 (r12): one point after the step, no change point yet */
	found = report_trace_change_points(trace, 13, 5, NULL, &n);
	CHECK_EQ_INT(n, 13);
	CHECK_EQ_INT(cJSON_GetArraySize(found), 0);
	cJSON_Delete(found);
	/* the same step on one machine is a regression beyond 5 % */
	for (int i = 12; i < 24; i++)
		cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetArrayItem(points, i), "facts_digest",
						       cJSON_CreateString("aaaaaaaaaaaaaaaa"));
	found = report_trace_change_points(trace, 0, 5, NULL, &n);
	CHECK_EQ_INT(cJSON_GetArraySize(found), 1);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(found, 0), "regression")));
	cJSON_Delete(found);
	cJSON_Delete(machines);
	cJSON_Delete(trace);
}

int main(void)
{
	test_digest_and_differences();
	test_trace_machine_change();
	return check_finish();
}
