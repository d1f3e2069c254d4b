/* loadlab agents [--wide]: GET /api/v1/agents, the fleet as a table;
 * --builder / --no-builder AGENT: PATCH /api/v1/agents/{id} {"builder"}
 * (admin), who may lease build tasks (docs/builds.md). */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "table.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Facts and labels wrap into lines of about this many characters; a
 * member longer than that gets a line of its own, whole. */
#define MAP_LINE_WIDTH 64
/* One member as text ("toolchain_paths=/usr/bin/gcc,..."): the server
 * keeps values to 256 bytes, arrays of them to 64 members. Beyond this it
 * is cut, and ends in "..." to say so. */
#define MEMBER_TEXT_MAX 8192
/* Lines of one agent's cell, all members of one map at most. */
#define MAP_LINES_MAX 64

static const char usage_text[] =
	"usage: loadlab agents [--wide]\n"
	"       loadlab agents --builder AGENT | --no-builder AGENT\n\n"
	"Lists the enrolled agents: id, name, state (online, offline, quarantined),\n"
	"whether an admin marked it a builder, last seen, the task it holds, its\n"
	"labels, its last calibration (injected -> recovered us and their ratio:\n"
	"loadlab calibrate) and every fact it detected (the keys a job's matrix\n"
	"names: os, disk, runner, ...). Labels and facts wrap onto lines of their\n"
	"own below the agent's row, about 64 characters each; nothing is left out.\n\n"
	"  --wide              one line per agent: labels and facts unwrapped\n"
	"  --builder AGENT     (admin) mark agent AGENT (its id, or its name when no\n"
	"                      other agent has it) a builder: it may lease the build\n"
	"                      tasks of pe and elf jobs, and every measuring agent\n"
	"                      then runs the files it built (docs/builds.md)\n"
	"  --no-builder AGENT  (admin) take the mark away\n";

/* What the command line asked for. */
struct agents_options {
	bool wide;
	const char *builder; /* --builder or --no-builder's AGENT; NULL: list */
	bool builder_on;
};

static int agents_option(void *context, int option, const char *value)
{
	struct agents_options *o = context;

	if (option == 'w') {
		o->wide = true;
		return 0;
	}
	if (o->builder)
		return err_set(LL_EINVAL, "--builder and --no-builder name one agent, once.");
	o->builder = value;
	o->builder_on = option == 'b';
	return 0;
}

/* OBJECT's members as "k=v" text in LINES[0], LINES[1], ... (at most MAX
 * lines), a new line whenever the next member would take the line past
 * MAP_LINE_WIDTH, unless WIDE. Returns the lines used, 0 for an empty map. */
static size_t map_lines(const cJSON *object, bool wide, struct buf *lines, size_t max)
{
	const cJSON *item;
	size_t count = 0;

	cJSON_ArrayForEach(item, object) {
		char value[MEMBER_TEXT_MAX];
		struct buf *line;
		size_t len;

		table_json_text(item, value, sizeof(value));
		len = strlen(item->string) + 1 + strlen(value);
		if (strlen(value) + 1 >= sizeof(value))
			len += 3;
		if (count == 0 || (!wide && lines[count - 1].len + 1 + len > MAP_LINE_WIDTH)) {
			if (count == max) /* never with the server's limits */
				break;
			count++;
		}
		line = &lines[count - 1];
		buf_printf(line, "%s%s=%s%s", line->len ? " " : "", item->string, value,
			   strlen(value) + 1 >= sizeof(value) ? "..." : "");
	}
	return count;
}

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

/* The agent's row, then as many rows as its labels or facts need, blank
 * but for those two columns. */
static int add_agent(struct table *t, const cJSON *agent, bool wide)
{
	struct buf labels[MAP_LINES_MAX], facts[MAP_LINES_MAX];
	size_t label_count, fact_count, rows;
	int rc;

	for (size_t i = 0; i < MAP_LINES_MAX; i++) {
		buf_init(&labels[i], MEMBER_TEXT_MAX * 2);
		buf_init(&facts[i], MEMBER_TEXT_MAX * 2);
	}
	label_count =
		map_lines(cJSON_GetObjectItemCaseSensitive(agent, "labels"), wide, labels, MAP_LINES_MAX);
	fact_count = map_lines(cJSON_GetObjectItemCaseSensitive(agent, "facts"), wide, facts, MAP_LINES_MAX);
	rows = label_count > fact_count ? label_count : fact_count;
	if ((rc = table_add_fields(t, agent, (const char *const[]){"id", "name", "state", NULL})) < 0 ||
	    (rc = table_add(t, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(agent, "builder")) ? "yes"
												: "-")) < 0 ||
	    (rc = table_add_fields(t, agent, (const char *const[]){"last_seen", "current_task", NULL})) < 0 ||
	    (rc = table_add(t, label_count ? buf_str(&labels[0]) : "-")) < 0 ||
	    (rc = add_calibration(t, agent)) < 0 ||
	    (rc = table_add(t, fact_count ? buf_str(&facts[0]) : "-")) < 0)
		goto out;
	for (size_t r = 1; r < rows && rc == 0; r++) {
		for (int blank = 0; blank < 6 && rc == 0; blank++)
			rc = table_add(t, "");
		if (rc == 0)
			rc = table_add(t, r < label_count ? buf_str(&labels[r]) : "");
		if (rc == 0)
			rc = table_add(t, "");
		if (rc == 0)
			rc = table_add(t, r < fact_count ? buf_str(&facts[r]) : "");
	}
out:
	for (size_t i = 0; i < MAP_LINES_MAX; i++) {
		buf_release(&labels[i]);
		buf_release(&facts[i]);
	}
	return rc;
}

static int print_agents(const cJSON *list, bool wide)
{
	static const char *const headers[] = {"ID",   "NAME",   "STATE",       "BUILDER", "LAST SEEN",
					      "TASK", "LABELS", "CALIBRATION", "FACTS",   NULL};
	const cJSON *agent;
	struct table t;
	int rc = 0;

	table_init(&t, headers);
	cJSON_ArrayForEach(agent, cJSON_GetObjectItemCaseSensitive(list, "agents"))
		if ((rc = add_agent(&t, agent, wide)) < 0)
			break;
	return table_finish(&t, rc, stdout);
}

/* The id of the agent of LIST that WANTED names: its id, else its name,
 * which no other agent may share. LL_ENOTFOUND, LL_EINVAL with a message. */
static int agent_id_of(const cJSON *list, const char *wanted, long long *ret_id, const char **ret_name)
{
	const cJSON *a, *by_name = NULL;
	int same_name = 0;

	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(list, "agents")) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "id");
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "name"));
		char text[32];
		if (!cJSON_IsNumber(id))
			continue;
		snprintf(text, sizeof(text), "%.0f", id->valuedouble);
		if (strcmp(text, wanted) == 0) {
			*ret_id = (long long)id->valuedouble;
			*ret_name = name ? name : "";
			return 0;
		}
		if (name && strcmp(name, wanted) == 0 && same_name++ == 0)
			by_name = a;
	}
	if (same_name > 1)
		return err_set(LL_EINVAL,
			       "%d agents are named '%s': name one by its id (see loadlab agents).",
			       same_name, wanted);
	if (!by_name)
		return err_set(LL_ENOTFOUND, "No agent is named or numbered '%s' (see loadlab agents).",
			       wanted);
	*ret_id = (long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(by_name, "id"));
	*ret_name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(by_name, "name"));
	return 0;
}

/* --builder / --no-builder: marks the agent O names in LIST, or unmarks it. */
static int set_builder(const cJSON *list, const struct agents_options *o)
{
	const char *name = NULL;
	cJSON *agent = NULL;
	long long id = 0;
	char path[64];
	int rc = agent_id_of(list, o->builder, &id, &name);

	if (rc < 0)
		return rc;
	snprintf(path, sizeof(path), "/api/v1/agents/%lld", id);
	rc = client_fetch_object("PATCH", path, o->builder_on ? "{\"builder\":true}" : "{\"builder\":false}",
				 &agent);
	if (rc == 0)
		printf("agent %lld (%s) %s\n", id, name,
		       o->builder_on ? "is a builder: it may lease build tasks" : "is no longer a builder");
	cJSON_Delete(agent);
	return rc;
}

int cmd_agents(int argc, char **argv)
{
	static const struct option options[] = {
		{"wide", no_argument, NULL, 'w'},
		{"builder", required_argument, NULL, 'b'},
		{"no-builder", required_argument, NULL, 'B'},
		{NULL, 0, NULL, 0},
	};
	struct agents_options o = {false, NULL, false};
	cJSON *list = NULL;
	int rc = args_parse(argc, argv, "agents", usage_text, options, agents_option, &o);

	if (rc >= 0)
		return rc;
	if (optind != argc)
		return args_usage_error("agents", "takes no arguments, got '%s'", argv[optind]);
	if (o.builder && o.wide)
		return args_usage_error("agents", "--wide lists; --builder and --no-builder change an agent");
	rc = client_fetch_object("GET", "/api/v1/agents", NULL, &list);
	if (rc == 0)
		rc = o.builder ? set_builder(list, &o) : print_agents(list, o.wide);
	cJSON_Delete(list);
	return rc < 0 ? client_fail("agents", rc) : 0;
}
