/* loadlab agents [--wide]: GET /api/v1/agents, the fleet as a table. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "table.h"

#include "loadlab/buf.h"

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
	"usage: loadlab agents [--wide]\n\n"
	"Lists the enrolled agents: id, name, state (online, offline, quarantined),\n"
	"last seen, the task it holds, its labels, its last calibration (injected\n"
	"-> recovered us and their ratio: loadlab calibrate) and every fact it\n"
	"detected (the keys a job's matrix names: os, disk, runner, ...). Labels and\n"
	"facts wrap onto lines of their own below the agent's row, about 64\n"
	"characters each; nothing is left out.\n\n"
	"  --wide   one line per agent: labels and facts unwrapped\n";

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
	if ((rc = table_add_fields(
		     t, agent,
		     (const char *const[]){"id", "name", "state", "last_seen", "current_task", NULL})) < 0 ||
	    (rc = table_add(t, label_count ? buf_str(&labels[0]) : "-")) < 0 ||
	    (rc = add_calibration(t, agent)) < 0 ||
	    (rc = table_add(t, fact_count ? buf_str(&facts[0]) : "-")) < 0)
		goto out;
	for (size_t r = 1; r < rows && rc == 0; r++) {
		for (int blank = 0; blank < 5 && rc == 0; blank++)
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
	static const char *const headers[] = {"ID",     "NAME",        "STATE", "LAST SEEN", "TASK",
					      "LABELS", "CALIBRATION", "FACTS", NULL};
	const cJSON *agent;
	struct table t;
	int rc = 0;

	table_init(&t, headers);
	cJSON_ArrayForEach(agent, cJSON_GetObjectItemCaseSensitive(list, "agents"))
		if ((rc = add_agent(&t, agent, wide)) < 0)
			break;
	return table_finish(&t, rc, stdout);
}

int cmd_agents(int argc, char **argv)
{
	static const struct option options[] = {
		{"wide", no_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	cJSON *list = NULL;
	bool wide = false;
	int rc = args_parse(argc, argv, "agents", usage_text, options, args_set_flag, &wide);

	if (rc >= 0)
		return rc;
	if (optind != argc)
		return args_usage_error("agents", "takes no arguments, got '%s'", argv[optind]);
	rc = client_fetch_object("GET", "/api/v1/agents", NULL, &list);
	if (rc == 0)
		rc = print_agents(list, wide);
	cJSON_Delete(list);
	return rc < 0 ? client_fail("agents", rc) : 0;
}
