/* cmd_util.c - what several subcommands do alike (commands.h): print a
 * JSON document. Below the table, which names the subcommands. */
#include "cmd/commands.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_print_json(const char *who, cJSON *doc)
{
	char *text = doc ? cJSON_Print(doc) : NULL;

	cJSON_Delete(doc);
	if (!text) {
		fprintf(stderr, "loadlab-agent %s: out of memory\n", who);
		return 2;
	}
	puts(text);
	free(text);
	return fflush(stdout) == 0 ? 0 : 2;
}
