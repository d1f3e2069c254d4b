/* report_text.h's report_text_shipped(): a variant's files "identical in
 * 1 cell", "in 2 cells" (a count of one is singular, issue 41). */
#include "check.h"

#include "loadlab/buf.h"
#include "loadlab/report_text.h"

#include <cjson/cJSON.h>

/* The line report_text_shipped() writes for one identical row of CELLS. */
static void check_identical(int cells, const char *want)
{
	char json[128];
	struct buf b;

	snprintf(json, sizeof(json), "[{\"variant\": \"default\", \"identical\": true, \"cells\": %d}]",
		 cells);
	cJSON *shipped = cJSON_Parse(json);
	buf_init(&b, 1 << 16);
	report_text_shipped(&b, shipped, NULL, "- ", NULL);
	CHECK_EQ_STR(b.data ? b.data : "", want);
	buf_release(&b);
	cJSON_Delete(shipped);
}

int main(void)
{
	check_identical(1, "- default: identical files in 1 cell\n");
	check_identical(2, "- default: identical files in 2 cells\n");
	return check_finish();
}
