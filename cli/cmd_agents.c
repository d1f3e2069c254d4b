/* loadlab agents: GET /api/v1/agents, the fleet as a table. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "table.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>

/* Facts and labels are shown as "k=v k=v", cut to this many bytes. */
#define MAP_TEXT_MAX 96

static const char usage_text[] =
	"usage: loadlab agents\n\n"
	"Lists the enrolled agents: id, name, state (online, offline, quarantined),\n"
	"last seen, the task it holds, its labels, its last calibration (injected\n"
	"-> recovered us and their ratio: loadlab calibrate) and the facts it\n"
	"detected.\n";

/* "1000->1016us 102%" from AGENT's last_calibration, or "-". */
static int add_calibration(struct table *t, const cJSON *agent)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(agent, "last_calibration");
	const cJSON *injected = cJSON_GetObjectItemCaseSensitive(c, "injected_us");
	const cJSON *recovered = cJSON_GetObjectItemCaseSensitive(c, "recovered_us");
	const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(c, "ratio");

	if (!cJSON_IsNumber(injected) || !cJSON_IsNumber(recovered) || !cJSON_IsNumber(ratio))
		return table_add(t, "-");
	return table_addf(t, "%.0f->%.0fus %.0f%%", injected->valuedouble, recovered->valuedouble,
			  100.0 * ratio->valuedouble);
}

static int add_agent(struct table *t, const cJSON *agent)
{
	char labels[MAP_TEXT_MAX], facts[MAP_TEXT_MAX];
	int rc;

	table_map_text(cJSON_GetObjectItemCaseSensitive(agent, "labels"), " ", labels, sizeof(labels));
	table_map_text(cJSON_GetObjectItemCaseSensitive(agent, "facts"), " ", facts, sizeof(facts));
	if ((rc = table_add_fields(
		     t, agent,
		     (const char *const[]){"id", "name", "state", "last_seen", "current_task", NULL})) < 0 ||
	    (rc = table_add(t, *labels ? labels : "-")) < 0 || (rc = add_calibration(t, agent)) < 0)
		return rc;
	return table_add(t, *facts ? facts : "-");
}

static int print_agents(const cJSON *list)
{
	static const char *const headers[] = {"ID",     "NAME",        "STATE", "LAST SEEN", "TASK",
					      "LABELS", "CALIBRATION", "FACTS", NULL};

	return table_list(stdout, list, "agents", headers, add_agent);
}

int cmd_agents(int argc, char **argv)
{
	cJSON *list = NULL;
	int opt, rc;

	if ((opt = args_help_only(argc, argv, "agents", usage_text)) >= 0)
		return opt;
	if (optind != argc)
		return args_usage_error("agents", "takes no arguments, got '%s'", argv[optind]);
	rc = client_fetch_object("GET", "/api/v1/agents", NULL, &list);
	if (rc == 0)
		rc = print_agents(list);
	cJSON_Delete(list);
	return rc < 0 ? client_fail("agents", rc) : 0;
}
