/* loadlab bisect SERIES --good REV --bad REV [--variant V] [--cell C]
 * [--agent NAME] [--wait]: POST /api/v1/series/{name}/bisect;
 * loadlab bisect status ID: GET /api/v1/bisections/{id};
 * loadlab bisect cancel ID: POST /api/v1/bisections/{id}/cancel
 * (docs/bisect.md). */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "job_poll.h"

#include "loadlab/err.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: loadlab bisect SERIES --good REV --bad REV [--variant V] [--cell C] [--agent NAME] [--wait]\n"
	"       loadlab bisect status ID | cancel ID\n\n"
	"Finds the revision of program series SERIES that made it slower: the daemon\n"
	"runs two-build A/B jobs (good against a revision between good and bad) on one\n"
	"agent of the cell, halving the range each step and doubling the runs of an\n"
	"unsure step (30 to 240). Prints \"bisection ID: STATE\" and, with --wait or for\n"
	"status, each step and the culprit (the first bad revision) with its effect,\n"
	"or \"not reproduced\". Exit 0 when it ended with a culprit (or is running,\n"
	"without --wait), 1 when it did not reproduce, failed or was cancelled, 2 on\n"
	"an error.\n\n"
	"  --variant V   the variant judged (default as-built)\n"
	"  --cell C      the cell, as the series names it (\"os=win10\"); needed when the\n"
	"                bad revision's job has several\n"
	"  --agent NAME  the agent that runs every step (default: the one that ran the\n"
	"                bad revision's task in that cell)\n"
	"  --wait        follow it until it ends\n";

struct bisect_options {
	const char *good, *bad, *variant, *cell, *agent;
	bool wait;
};

static int bisect_option(void *context, int option, const char *value)
{
	struct bisect_options *o = context;

	switch (option) {
	case 'g':
		o->good = value;
		break;
	case 'b':
		o->bad = value;
		break;
	case 'v':
		o->variant = value;
		break;
	case 'c':
		o->cell = value;
		break;
	case 'a':
		o->agent = value;
		break;
	case 'w':
		o->wait = true;
		break;
	}
	return 0;
}

static const char *text(const cJSON *o, const char *key)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));

	return s ? s : "-";
}

static double num(const cJSON *o, const char *key)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* B's steps and outcome; the exit code it stands for. */
static int print_bisection(const cJSON *b)
{
	const cJSON *step, *result = cJSON_GetObjectItemCaseSensitive(b, "result");
	const char *state = text(b, "state");

	printf("bisection %.0f: %s (%s, %s .. %s, variant %s, cell %s, agent %s)\n", num(b, "id"), state,
	       text(b, "series"), text(b, "good"), text(b, "bad"), text(b, "variant"), text(b, "cell"),
	       text(b, "agent"));
	cJSON_ArrayForEach(step, cJSON_GetObjectItemCaseSensitive(b, "steps"))
		printf("  step %.0f %-9s %s vs %s  runs %-3.0f job %.0f  ratio %.4f [%.4f, %.4f]  %s\n",
		       num(step, "step"), text(step, "kind"), text(step, "candidate"), text(step, "base"),
		       num(step, "runs"), num(step, "job_id"), num(step, "ratio"), num(step, "ci_low"),
		       num(step, "ci_high"), text(step, "verdict"));
	if (strcmp(state, "done") == 0) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(result, "effect");
		printf("culprit: %s (last good %s), %+.1f %% [%.4f, %.4f]\n", text(result, "culprit"),
		       text(result, "last_good"), num(e, "change_pct"), num(e, "ci_low"), num(e, "ci_high"));
		return 0;
	}
	if (strcmp(state, "running") == 0)
		return 0;
	printf("%s: %s\n", strcmp(state, "not_reproduced") == 0 ? "not reproduced" : state,
	       text(result, "reason"));
	return 1;
}

static int show(long long id, bool wait)
{
	char path[64];
	int rc, code = 0;

	snprintf(path, sizeof(path), "/api/v1/bisections/%lld", id);
	for (;;) {
		cJSON *b = NULL;
		if ((rc = client_fetch_object("GET", path, NULL, &b)) < 0)
			return client_fail("bisect", rc);
		bool running = strcmp(text(b, "state"), "running") == 0;
		if (!wait || !running)
			code = print_bisection(b);
		cJSON_Delete(b);
		if (!wait || !running)
			return code;
		job_poll_sleep(0);
	}
}

int cmd_bisect(int argc, char **argv)
{
	static const struct option options[] = {
		{"good", required_argument, NULL, 'g'},
		{"bad", required_argument, NULL, 'b'},
		{"variant", required_argument, NULL, 'v'},
		{"cell", required_argument, NULL, 'c'},
		{"agent", required_argument, NULL, 'a'},
		{"wait", no_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	struct bisect_options o = {0};
	cJSON *body, *b = NULL;
	char path[512], *text_body;
	long long id;
	int rc = args_parse(argc, argv, "bisect", usage_text, options, bisect_option, &o);

	if (rc >= 0)
		return rc;
	if (argc - optind == 2 &&
	    (strcmp(argv[optind], "status") == 0 || strcmp(argv[optind], "cancel") == 0)) {
		if ((rc = args_job_id(argv[optind + 1], &id)) < 0)
			return client_fail("bisect", rc);
		if (strcmp(argv[optind], "status") == 0)
			return show(id, o.wait);
		snprintf(path, sizeof(path), "/api/v1/bisections/%lld/cancel", id);
		if ((rc = client_fetch_object("POST", path, "{}", &b)) < 0)
			return client_fail("bisect", rc);
		printf("bisection %lld: %s\n", id, text(b, "state"));
		cJSON_Delete(b);
		return 0;
	}
	if (argc - optind != 1)
		return args_usage_error("bisect", "expects one SERIES (or status ID, cancel ID)");
	if (!o.good || !o.bad)
		return args_usage_error("bisect", "needs --good REV and --bad REV");
	if (strlen(argv[optind]) > 200)
		return args_usage_error("bisect", "the series name is too long");
	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "good", o.good);
	cJSON_AddStringToObject(body, "bad", o.bad);
	if (o.variant)
		cJSON_AddStringToObject(body, "variant", o.variant);
	if (o.cell)
		cJSON_AddStringToObject(body, "cell", o.cell);
	if (o.agent)
		cJSON_AddStringToObject(body, "agent", o.agent);
	text_body = cJSON_PrintUnformatted(body);
	cJSON_Delete(body);
	snprintf(path, sizeof(path), "/api/v1/series/%s/bisect", argv[optind]);
	rc = text_body ? client_fetch_object("POST", path, text_body, &b) : LL_ENOMEM;
	free(text_body);
	if (rc < 0)
		return client_fail("bisect", rc);
	id = (long long)num(b, "id");
	printf("bisection %lld: %s\n", id, text(b, "state"));
	fflush(stdout);
	cJSON_Delete(b);
	return o.wait ? show(id, true) : 0;
}
