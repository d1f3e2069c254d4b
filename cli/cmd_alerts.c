/* loadlab alerts [--open] | alerts ack ID: GET /api/v1/alerts and
 * POST /api/v1/alerts/{id}/ack, the regressions the daemon found when a
 * series' new job was compared with the one before. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "table.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char usage_text[] =
	"usage: loadlab alerts [--open]\n"
	"       loadlab alerts ack ID\n\n"
	"Lists the regression alerts, newest first: id, series, the job and the one it\n"
	"was compared with, the worst median change against the series' threshold, the\n"
	"variants and cells that got slower, when it opened and who acknowledged it\n"
	"(\"open\" until someone does). `ack ID` acknowledges alert ID.\n\n"
	"  --open   only the alerts nobody acknowledged yet\n\n"
	"exit status: 0 no open alert listed (or acknowledged), 1 an open alert is\n"
	"listed, 2 an error (an unknown id, an alert acknowledged before).\n";

static const cJSON *get(const cJSON *object, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(object, key);
}

/* "rebase os=win10 +21.3%, bind any +7.0%" from ALERT's rows. */
static int add_rows(struct table *t, const cJSON *alert)
{
	char text[400] = "";
	size_t used = 0;
	const cJSON *row;

	cJSON_ArrayForEach(row, get(alert, "rows")) {
		char variant[96], cell[160];
		int n;

		table_json_text(get(row, "variant"), variant, sizeof(variant));
		table_json_text(get(row, "cell"), cell, sizeof(cell));
		n = snprintf(text + used, sizeof(text) - used, "%s%s %s %+.1f%%", used ? ", " : "", variant,
			     cell, cJSON_GetNumberValue(get(row, "change_pct")));
		if (n < 0 || (size_t)n >= sizeof(text) - used) {
			/* Cut between rows, and say so. */
			text[used] = '\0';
			snprintf(text + used, sizeof(text) - used, "%s", used ? ", ..." : "...");
			break;
		}
		used += (size_t)n;
	}
	return table_add(t, *text ? text : "-");
}

static int add_alert(struct table *t, const cJSON *alert)
{
	const cJSON *worst = get(alert, "worst_change_pct"), *acked_at = get(alert, "acked_at");
	int rc;

	if ((rc = table_add_fields(t, alert,
				   (const char *const[]){"id", "series", "job_id", "baseline_id", NULL})) < 0)
		return rc;
	if ((rc = cJSON_IsNumber(worst) ? table_addf(t, "%+.1f%%", worst->valuedouble) : table_add(t, "-")) <
		    0 ||
	    (rc = table_addf(t, "%.1f%%", cJSON_GetNumberValue(get(alert, "threshold_pct")))) < 0 ||
	    (rc = add_rows(t, alert)) < 0 || (rc = table_add_json(t, get(alert, "created_at"))) < 0)
		return rc;
	if (!cJSON_IsString(acked_at))
		return table_add(t, "open");
	return table_addf(t, "%s by %s", acked_at->valuestring,
			  cJSON_IsString(get(alert, "acked_by")) ? get(alert, "acked_by")->valuestring : "?");
}

/* Prints the list; 1 when an open alert is in it, 0 when none is. */
static int print_alerts(const cJSON *list, int *ret_code)
{
	static const char *const headers[] = {"ID",   "SERIES", "JOB",    "BASELINE", "WORST",
					      "OVER", "ROWS",   "OPENED", "ACKED",    NULL};
	const cJSON *alert;

	*ret_code = 0;
	cJSON_ArrayForEach(alert, get(list, "alerts"))
		if (!cJSON_IsString(get(alert, "acked_at")))
			*ret_code = 1;
	if (cJSON_GetArraySize(get(list, "alerts")) == 0) {
		puts("no alerts");
		return 0;
	}
	return table_list(stdout, list, "alerts", headers, add_alert);
}

static int ack(long long id)
{
	cJSON *alert = NULL;
	char path[80];
	int rc;

	snprintf(path, sizeof(path), "/api/v1/alerts/%lld/ack", id);
	rc = client_fetch_object("POST", path, "{}", &alert);
	if (rc == 0) {
		printf("alert %lld: acknowledged by ", id);
		table_print_text(stdout, cJSON_IsString(get(alert, "acked_by"))
						 ? get(alert, "acked_by")->valuestring
						 : "?");
		fputc('\n', stdout);
	}
	cJSON_Delete(alert);
	return rc < 0 ? client_fail("alerts", rc) : 0;
}

int cmd_alerts(int argc, char **argv)
{
	static const struct option options[] = {
		{"open", no_argument, NULL, 'o'},
		{NULL, 0, NULL, 0},
	};
	cJSON *list = NULL;
	bool open = false;
	long long id;
	int rc = args_parse(argc, argv, "alerts", usage_text, options, args_set_flag, &open), code = 0;

	if (rc >= 0)
		return rc;
	if (optind < argc && strcmp(argv[optind], "ack") == 0) {
		if (open)
			return args_usage_error("alerts", "ack takes no --open");
		if (argc - optind != 2)
			return args_usage_error("alerts", "ack expects one alert ID");
		if ((rc = args_integer(argv[optind + 1], 1, 9007199254740992LL, "The alert id", &id)) < 0)
			return client_fail("alerts", rc);
		return ack(id);
	}
	if (optind < argc)
		return args_usage_error("alerts", "unknown action '%s' (ack ID, or nothing to list)",
					argv[optind]);
	rc = client_fetch_object("GET", open ? "/api/v1/alerts?open=true" : "/api/v1/alerts", NULL, &list);
	if (rc == 0)
		rc = print_alerts(list, &code);
	cJSON_Delete(list);
	return rc < 0 ? client_fail("alerts", rc) : code;
}
