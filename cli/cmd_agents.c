/* loadlab agents: GET /api/v1/agents, the fleet as a table. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "table.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* Facts and labels are shown as "k=v k=v", cut to this many bytes. */
#define MAP_TEXT_MAX 96

static const char usage_text[] =
	"usage: loadlab agents\n\n"
	"Lists the enrolled agents: id, name, state (online, offline, quarantined),\n"
	"last seen, the task it holds, its labels and the facts it detected.\n";

/* OBJECT {"os": "win10", "cores": 4} as "os=win10 cores=4". */
static void map_text(const cJSON *object, char *out, size_t size)
{
	const cJSON *item;
	size_t used = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(item, object) {
		char value[128];
		int n;

		table_json_text(item, value, sizeof(value));
		n = snprintf(out + used, size - used, "%s%s=%s", used ? " " : "", item->string, value);
		if (n < 0 || (size_t)n >= size - used) {
			/* Mark the cut instead of showing half a value. */
			out[used] = '\0';
			if (used + 4 < size)
				strcat(out, used ? " ..." : "...");
			break;
		}
		used += (size_t)n;
	}
}

static int print_agents(const cJSON *list)
{
	static const char *const headers[] = {"ID", "NAME", "STATE", "LAST SEEN", "TASK",
					      "LABELS", "FACTS", NULL};
	const cJSON *agent;
	struct table t;
	int rc = 0;

	table_init(&t, headers);
	cJSON_ArrayForEach(agent, cJSON_GetObjectItemCaseSensitive(list, "agents")) {
		char labels[MAP_TEXT_MAX], facts[MAP_TEXT_MAX];

		map_text(cJSON_GetObjectItemCaseSensitive(agent, "labels"), labels, sizeof(labels));
		map_text(cJSON_GetObjectItemCaseSensitive(agent, "facts"), facts, sizeof(facts));
		if ((rc = table_add_json(&t, cJSON_GetObjectItemCaseSensitive(agent, "id"))) < 0 ||
		    (rc = table_add_json(&t, cJSON_GetObjectItemCaseSensitive(agent, "name"))) < 0 ||
		    (rc = table_add_json(&t, cJSON_GetObjectItemCaseSensitive(agent, "state"))) < 0 ||
		    (rc = table_add_json(&t, cJSON_GetObjectItemCaseSensitive(agent, "last_seen"))) < 0 ||
		    (rc = table_add_json(&t, cJSON_GetObjectItemCaseSensitive(agent, "current_task"))) < 0 ||
		    (rc = table_add(&t, *labels ? labels : "-")) < 0 ||
		    (rc = table_add(&t, *facts ? facts : "-")) < 0)
			break;
	}
	if (rc == 0)
		table_print(&t, stdout);
	table_release(&t);
	return rc;
}

int cmd_agents(int argc, char **argv)
{
	struct client c = {0};
	cJSON *list = NULL;
	int opt, rc;

	if ((opt = args_help_only(argc, argv, "agents", usage_text)) >= 0)
		return opt;
	if (optind != argc)
		return args_usage_error("agents", "takes no arguments, got '%s'", argv[optind]);
	rc = client_open(&c);
	if (rc == 0)
		rc = client_get_object(&c, "GET", "/api/v1/agents", NULL, &list);
	if (rc == 0)
		rc = print_agents(list);
	cJSON_Delete(list);
	client_close(&c);
	return rc < 0 ? client_fail("agents", rc) : 0;
}
