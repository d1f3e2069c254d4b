/* loadlab compare BASE CAND [--max-regression PCT] [--format F]:
 * GET /api/v1/compare?baseline=..&candidate=..&max_regression=..; prints the
 * comparison and exits 1 when the server's verdict is "regression". */
#include "args.h"
#include "client.h"
#include "commands.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: loadlab compare BASE CAND [--max-regression PCT] [--format table|md|csv|json]\n\n"
	"Compares candidate job CAND with baseline job BASE: per variant and cell, the\n"
	"ratio with its CI and a verdict. Prints the comparison and exits 0 when there\n"
	"is no regression, 1 when there is one, 2 on an error.\n\n"
	"  --max-regression PCT  slowdown tolerated, in percent (\"5\" or \"5%\")\n"
	"  --format F            table (default; the Markdown table), md, csv or json\n";

/* PCT as "5", "2.5" or "5%": a finite number from 0 to 1000. */
static int parse_percent(const char *text, double *ret_value)
{
	char *end = NULL;
	double v = strtod(text, &end);

	if (end == text || (*end && strcmp(end, "%") != 0) || !isfinite(v))
		return err_set(LL_EINVAL, "--max-regression '%s' is not a percentage.", text);
	if (v < 0 || v > 1000)
		return err_set(LL_ERANGE, "--max-regression must be between 0 and 1000, not '%s'.",
			       text);
	*ret_value = v;
	return 0;
}

/* Reads "verdict" from the JSON comparison ROOT (NULL: the answer was not
 * a JSON object). LL_EFORMAT when it is missing: a CI gate must not pass
 * because the field went away. */
static int read_verdict(const cJSON *root, int *ret_regression)
{
	const char *verdict = NULL;
	int rc;

	if (!root)
		return err_set(LL_EFORMAT, "The server's comparison is not a JSON object.");
	rc = json_get_string(root, "verdict", 64, true, NULL, &verdict);
	if (rc < 0)
		rc = err_set(LL_EFORMAT, "The server's comparison has no \"verdict\".");
	else if (strcmp(verdict, "regression") == 0)
		*ret_regression = 1;
	else if (strcmp(verdict, "ok") == 0)
		*ret_regression = 0;
	else if (strcmp(verdict, "not_comparable") == 0)
		*ret_regression = -1; /* shown, then an error: nothing could be judged */
	else
		rc = err_set(LL_EFORMAT, "The server's verdict '%s' is not one this client knows.", verdict);
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	static const struct option options[] = {
		{"max-regression", required_argument, NULL, 'm'},
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct rest_client c = {0};
	struct rest_answer json = {0}, shown = {0};
	const char *format = "md";
	char path[256], threshold[48] = "";
	long long base, candidate;
	double max_regression = 0;
	int opt, rc = 0, regression = 0;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":m:f:h", options, NULL)) != -1) {
		switch (opt) {
		case 'm':
			rc = parse_percent(optarg, &max_regression);
			if (rc == 0)
				snprintf(threshold, sizeof(threshold), "&max_regression=%g", max_regression);
			break;
		case 'f': rc = args_format(optarg, &format); break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: return args_option_error("compare", argv, opt);
		}
		if (rc < 0)
			return client_fail("compare", rc);
	}
	if (argc - optind != 2)
		return args_usage_error("compare", "expects two job ids, BASE and CAND");
	if ((rc = args_job_id(argv[optind], &base)) < 0 ||
	    (rc = args_job_id(argv[optind + 1], &candidate)) < 0)
		return client_fail("compare", rc);

	/*
	 * The exit code comes from the JSON form's "verdict" field, the one the
	 * contract documents: we always ask for format=json first and, when
	 * another format is to be shown, ask again for it. Two requests cost
	 * little next to the jobs compared, and need no header outside the
	 * contract; the comparison of two finished jobs does not change between
	 * them.
	 */
	rc = client_open(&c);
	if (rc < 0)
		goto out;
	snprintf(path, sizeof(path), "/api/v1/compare?baseline=%lld&candidate=%lld%s&format=json",
		 base, candidate, threshold);
	rc = client_request(&c, "GET", path, NULL, CLIENT_REPORT_LIMIT, &json);
	if (rc == 0)
		rc = read_verdict(json.body, &regression);
	if (rc < 0)
		goto out;
	if (strcmp(format, "json") == 0) {
		client_print_body(&json.text);
		goto out;
	}
	snprintf(path, sizeof(path), "/api/v1/compare?baseline=%lld&candidate=%lld%s&format=%s",
		 base, candidate, threshold, format);
	rc = client_request(&c, "GET", path, NULL, CLIENT_REPORT_LIMIT, &shown);
	if (rc == 0)
		client_print_body(&shown.text);
out:
	rest_answer_release(&json);
	rest_answer_release(&shown);
	rest_client_close(&c);
	if (rc == 0 && regression < 0)
		rc = err_set(LL_ESTATE, "No variant and cell of the two jobs could be compared (see the reasons above).");
	if (rc < 0)
		return client_fail("compare", rc);
	return regression ? 1 : 0;
}
