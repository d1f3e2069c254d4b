/* loadlab pe: the PE image toolkit's front end (issue 3 fills this in). */
#include "commands.h"

#include <stdio.h>

int cmd_pe(int argc, char **argv)
{
	fprintf(stderr, "loadlab pe: not built yet\n");
	return 2;
}
