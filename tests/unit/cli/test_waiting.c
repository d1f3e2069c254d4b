/* Why a job's queued tasks wait (cli/waiting.h): one line per reason with
 * the tasks it holds back, in the order of the tasks; nothing for tasks
 * that could run or are not queued; the first reason and how many others. */
#include "check.h"
#include "waiting.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

/* What waiting_print() writes of JOB. */
static char *printed(const cJSON *job)
{
	struct check_output o;

	if (check_output_open(&o))
		waiting_print(o.stream, job);
	return check_output_text(&o);
}

int main(void)
{
	cJSON *job = cJSON_Parse(
		"{\"tasks\":["
		"{\"id\":1,\"waiting\":null},"
		"{\"id\":3,\"waiting\":{\"could_run\":false,\"reason\":\"no agent has os=winxp\"}},"
		"{\"id\":4,\"waiting\":{\"could_run\":true,\"reason\":null}},"
		"{\"id\":5,\"waiting\":{\"could_run\":false,\"reason\":\"every agent is quarantined\"}},"
		"{\"id\":6,\"waiting\":{\"could_run\":false,\"reason\":\"no agent has os=winxp\"}}]}");
	cJSON *ready =
		cJSON_Parse("{\"tasks\":[{\"id\":1,\"waiting\":{\"could_run\":true,\"reason\":null}}]}");
	size_t others = 99;
	char *text;

	text = printed(job);
	CHECK_EQ_STR(text, "waiting: tasks 3, 6: no agent has os=winxp\n"
			   "waiting: task 5: every agent is quarantined\n");
	free(text);
	CHECK_EQ_STR(waiting_first_reason(job, &others), "no agent has os=winxp");
	CHECK_EQ_INT(others, 1);

	text = printed(ready);
	CHECK_EQ_STR(text, "");
	free(text);
	CHECK(waiting_first_reason(ready, &others) == NULL);
	CHECK_EQ_INT(others, 0);

	cJSON_Delete(job);
	cJSON_Delete(ready);
	return check_finish();
}
