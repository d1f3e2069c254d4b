/* loadlab series NAME [--variant V] [--cell C] [--metric median|min]
 * [--change-points]: GET /api/v1/series/{name}, one row per job of each
 * variant x cell, or GET /api/v1/series/{name}/change-points, one row per
 * change point. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "table.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: loadlab series NAME [--variant V] [--cell C] [--metric median|min | --change-points]\n\n"
	"Prints the history of a series: per variant and cell, one row per job in\n"
	"submission order with its revision, the median and its 95 % interval, the\n"
	"floor (min) and the number of samples.\n\n"
	"--change-points prints its change points instead (docs/series.md): per\n"
	"variant and cell, the revisions and jobs the change lies between, the\n"
	"level before and after (microseconds, or times the empty program), the\n"
	"change with its 95 % interval, the p-value, and whether the machine\n"
	"changed there; then every change of the machines' facts.\n";

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

static const char *text_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double number_of(const cJSON *o, const char *key)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* "REV" of a side, or "job ID" when it has none. */
static void side_name(const cJSON *side, char *out, size_t size)
{
	if (text_of(side, "revision"))
		snprintf(out, size, "%s", text_of(side, "revision"));
	else
		snprintf(out, size, "job %.0f", number_of(side, "job_id"));
}

static int add_facts(struct table *t, const cJSON *facts)
{
	char line[512] = "";
	const cJSON *f;

	cJSON_ArrayForEach(f, facts)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s", line[0] ? "," : "",
			 text_of(f, "fact") ? text_of(f, "fact") : "?");
	return table_add(t, line[0] ? line : "-");
}

static int print_change_points(const cJSON *c)
{
	static const char *const headers[] = {
		"VARIANT",         "CELL", "REVISIONS", "JOBS",          "BEFORE", "AFTER",
		"CHANGE [95% CI]", "P",    "VERDICT",   "FACTS_CHANGED", NULL};
	const cJSON *cp;
	struct table t;
	int rc = 0;

	table_init(&t, headers);
	cJSON_ArrayForEach(cp, cJSON_GetObjectItemCaseSensitive(c, "change_points")) {
		const cJSON *before = cJSON_GetObjectItemCaseSensitive(cp, "before");
		const cJSON *after = cJSON_GetObjectItemCaseSensitive(cp, "after");
		const char *unit =
			text_of(cp, "statistic") && strcmp(text_of(cp, "statistic"), "x_floor") == 0
				? "x floor"
				: "us";
		const cJSON *high = cJSON_GetObjectItemCaseSensitive(cp, "ci_high_pct");
		char a[200], b[200], ci_high[32];
		side_name(before, a, sizeof(a));
		side_name(after, b, sizeof(b));
		if (cJSON_IsNumber(high))
			snprintf(ci_high, sizeof(ci_high), "%+.1f", high->valuedouble);
		else
			snprintf(ci_high, sizeof(ci_high), "inf");
		if ((rc = table_add_fields(&t, cp, (const char *const[]){"variant", "cell", NULL})) < 0 ||
		    (rc = table_addf(&t, "%s..%s", a, b)) < 0 ||
		    (rc = table_addf(&t, "%.0f..%.0f", number_of(before, "job_id"),
				     number_of(after, "job_id"))) < 0 ||
		    (rc = table_addf(&t, "%g %s", number_of(cp, "level_before"), unit)) < 0 ||
		    (rc = table_addf(&t, "%g %s", number_of(cp, "level_after"), unit)) < 0 ||
		    (rc = table_addf(&t, "%+.1f %% [%+.1f, %s]", number_of(cp, "magnitude_pct"),
				     number_of(cp, "ci_low_pct"), ci_high)) < 0 ||
		    (rc = table_addf(&t, "%.2g", number_of(cp, "p_value"))) < 0 ||
		    (rc = table_add(&t, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cp, "machine_changed"))
						? "machine changed"
					: cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cp, "regression"))
						? "regression"
					: number_of(cp, "magnitude_pct") > 0 ? "slower"
									     : "faster")) < 0 ||
		    (rc = add_facts(&t, cJSON_GetObjectItemCaseSensitive(cp, "facts_changed"))) < 0)
			goto done;
	}
	table_print(&t, stdout);
	cJSON_ArrayForEach(cp, cJSON_GetObjectItemCaseSensitive(c, "machine_changes")) {
		const cJSON *f;
		char a[200], b[200];
		side_name(cJSON_GetObjectItemCaseSensitive(cp, "before"), a, sizeof(a));
		side_name(cJSON_GetObjectItemCaseSensitive(cp, "after"), b, sizeof(b));
		printf("machine changed between %s and %s (%s, %s):", a, b, text_of(cp, "variant"),
		       text_of(cp, "cell"));
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(cp, "facts_changed")) {
			char *x = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(f, "before"));
			char *y = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(f, "after"));
			printf(" %s %s -> %s;", text_of(f, "fact"), x ? x : "?", y ? y : "?");
			free(x);
			free(y);
		}
		printf("\n");
	}
done:
	table_release(&t);
	return rc;
}

/* Each of --variant, --cell and --metric fills its row of the query;
 * --change-points sets the fourth row's value. */
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
	case 'p':
		query[3][1] = "yes";
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
		{"change-points", no_argument, NULL, 'p'},
		{NULL, 0, NULL, 0},
	};
	const char *query[4][2] = {
		{"variant", NULL}, {"cell", NULL}, {"metric", NULL}, {"change-points", NULL}};
	bool change_points;
	char path[1024], *name;
	cJSON *series = NULL;
	int rc = args_parse(argc, argv, "series", usage_text, options, series_option, query);

	if (rc >= 0)
		return rc;
	if (optind + 1 != argc)
		return args_usage_error("series", "takes one series name");
	change_points = query[3][1] != NULL;
	if (change_points && query[2][1])
		return args_usage_error("series", "--metric does not go with --change-points");
	if (!(name = rest_escape(argv[optind])) || strlen(name) > 400) {
		free(name);
		return args_usage_error("series", "'%s' is not a series name", argv[optind]);
	}
	snprintf(path, sizeof(path), "/api/v1/series/%s%s?", name, change_points ? "/change-points" : "");
	free(name);
	for (int i = 0; i < 3; i++) {
		char *value;
		if (!query[i][1] || i == 3)
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
		rc = change_points ? print_change_points(series) : print_series(series);
	cJSON_Delete(series);
	return rc < 0 ? client_fail("series", rc) : 0;
}
