/* loadlab series NAME [--variant V] [--cell C] [--metric median|min]:
 * GET /api/v1/series/{name}, one row per job of each variant x cell. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "table.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: loadlab series NAME [--variant V] [--cell C] [--metric median|min]\n\n"
	"Prints the history of a series: per variant and cell, one row per job in\n"
	"submission order with its revision, the median and its 95 % interval, the\n"
	"floor (min) and the number of samples.\n";

static int print_series(const cJSON *s)
{
	static const char *const headers[] = {"VARIANT",   "CELL",       "JOB",    "REVISION", "MEDIAN_US",
					      "CI_LOW_US", "CI_HIGH_US", "MIN_US", "N",        NULL};
	const cJSON *trace, *point;
	struct table t;
	int rc = 0;

	table_init(&t, headers);
	cJSON_ArrayForEach(trace, cJSON_GetObjectItemCaseSensitive(s, "traces"))
		cJSON_ArrayForEach(point, cJSON_GetObjectItemCaseSensitive(trace, "points")) {
			if ((rc = table_add_fields(&t, trace,
						   (const char *const[]){"variant", "cell", NULL})) < 0 ||
			    (rc = table_add_fields(&t, point,
						   (const char *const[]){"job_id", "revision", "median_us",
									 "ci_low_us", "ci_high_us", "min_us",
									 "n", NULL})) < 0)
				goto done;
		}
	table_print(&t, stdout);
done:
	table_release(&t);
	return rc;
}

/* Each of --variant, --cell and --metric fills its row of the query. */
static int series_option(void *context, int option, const char *value)
{
	const char *(*query)[2] = context;

	switch (option) {
	case 'v':
		query[0][1] = value;
		break;
	case 'c':
		query[1][1] = value;
		break;
	case 'm':
		query[2][1] = value;
		break;
	}
	return 0;
}

int cmd_series(int argc, char **argv)
{
	static const struct option options[] = {
		{"variant", required_argument, NULL, 'v'},
		{"cell", required_argument, NULL, 'c'},
		{"metric", required_argument, NULL, 'm'},
		{NULL, 0, NULL, 0},
	};
	const char *query[3][2] = {{"variant", NULL}, {"cell", NULL}, {"metric", NULL}};
	char path[1024], *name;
	cJSON *series = NULL;
	int rc = args_parse(argc, argv, "series", usage_text, options, series_option, query);

	if (rc >= 0)
		return rc;
	if (optind + 1 != argc)
		return args_usage_error("series", "takes one series name");
	if (!(name = rest_escape(argv[optind])) || strlen(name) > 400) {
		free(name);
		return args_usage_error("series", "'%s' is not a series name", argv[optind]);
	}
	snprintf(path, sizeof(path), "/api/v1/series/%s?", name);
	free(name);
	for (int i = 0; i < 3; i++) {
		char *value;
		if (!query[i][1])
			continue;
		if (!(value = rest_escape(query[i][1])) || strlen(value) > 200) {
			free(value);
			return args_usage_error("series", "--%s is too long", query[i][0]);
		}
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s=%s&", query[i][0], value);
		free(value);
	}
	path[strlen(path) - 1] = '\0';
	rc = client_fetch_object("GET", path, NULL, &series);
	if (rc == 0)
		rc = print_series(series);
	cJSON_Delete(series);
	return rc < 0 ? client_fail("series", rc) : 0;
}
