/* The CLI's tables (cli/table.h): columns as wide as their widest cell in
 * UTF-8 characters, two spaces apart, no trailing blanks; JSON cells as
 * listings show them; control characters from the server as '?'; an
 * incomplete last row left out; map text cut on a member's boundary. */
#include "check.h"
#include "table.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

/* What table_print() writes of T. */
static char *printed(const struct table *t)
{
	struct check_output o;

	if (check_output_open(&o))
		table_print(t, o.stream);
	return check_output_text(&o);
}

int main(void)
{
	struct table t;
	cJSON *job = cJSON_Parse("{\"id\":7,\"name\":\"r\\u00e9sum\\u00e9\",\"ok\":true,\"tags\":[\"a\",2],"
				 "\"none\":null,\"ratio\":1.5,\"evil\":\"a\\u001b[2Jb\\nc\"}");
	char *text;
	char cut[32];

	table_init(&t, (const char *const[]){"ID", "NAME", "OK", NULL});
	CHECK_EQ_INT(table_add_fields(&t, job, (const char *const[]){"id", "name", "ok", NULL}), 0);
	CHECK_EQ_INT(table_add(&t, "12345"), 0);
	CHECK_EQ_INT(table_add(&t, NULL), 0);
	CHECK_EQ_INT(table_addf(&t, "%d%%", 50), 0);
	CHECK_EQ_INT(table_add(&t, "half a row"), 0);
	text = printed(&t);
	/* "résumé" is 6 characters wide, not 8 bytes. */
	CHECK_EQ_STR(text, "ID     NAME    OK\n"
			   "7      résumé  true\n"
			   "12345  -       50%\n");
	free(text);
	table_release(&t);
	CHECK_EQ_INT(t.count, 0);

	table_init(&t, (const char *const[]){"TAGS", "NONE", "RATIO", "EVIL", NULL});
	CHECK_EQ_INT(table_add_fields(&t, job, (const char *const[]){"tags", "none", "ratio", "evil", NULL}),
		     0);
	text = printed(&t);
	CHECK_EQ_STR(text, "TAGS  NONE  RATIO  EVIL\n"
			   "a,2   -     1.5    a?[2Jb?c\n");
	free(text);
	table_release(&t);

	/* Map text: members joined, cut before a member that does not fit. */
	cJSON *facts = cJSON_Parse("{\"os\":\"win10\",\"cores\":4,\"arch\":\"x86_64\"}");
	table_map_text(facts, " ", cut, sizeof(cut));
	CHECK_EQ_STR(cut, "os=win10 cores=4 arch=x86_64");
	table_map_text(facts, " ", cut, 24);
	CHECK_EQ_STR(cut, "os=win10 cores=4 ...");
	table_map_text(NULL, " ", cut, sizeof(cut));
	CHECK_EQ_STR(cut, "");
	cJSON_Delete(facts);

	cJSON_Delete(job);
	return check_finish();
}
