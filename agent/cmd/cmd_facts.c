/* loadlab-agent facts: print the facts the agent would report (facts.h). */
#include "cmd/commands.h"
#include "fleet/facts.h"
#include "loadlab/plat.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_facts(int argc, char **argv)
{
	const char *work_dir = ".";
	cJSON *facts = NULL;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			puts("usage: loadlab-agent facts [--work-dir DIR]\n"
			     "\n"
			     "Prints, as JSON, the facts the agent reports at enrollment and in\n"
			     "every result: os, os_version, arch, cpu_model, cores, ram_mb, disk and\n"
			     "fs (of the work folder, default the current one), toolchains,\n"
			     "toolchain_paths, runner.");
			return 0;
		}
		if (strcmp(argv[i], "--work-dir") == 0 && i + 1 < argc) {
			work_dir = argv[++i];
			continue;
		}
		fprintf(stderr,
			"loadlab-agent facts: unknown argument '%s' (see loadlab-agent facts --help)\n",
			argv[i]);
		return 2;
	}
	rc = facts_detect(work_dir, &facts);
	if (rc < 0) {
		fprintf(stderr, "loadlab-agent facts: %s\n", err_message(rc));
		return 2;
	}
	return cmd_print_json("facts", facts);
}
