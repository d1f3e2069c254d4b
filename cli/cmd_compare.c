/* loadlab compare BASE CAND [--max-regression PCT] [--metric M] [--intervals S] [--require-power]
 * [--format F]: GET /api/v1/compare?baseline=..&candidate=..&max_regression=..&metric=..&intervals=..
 * &require_power=1; prints the comparison and exits 1 when the server's verdict is "regression" or
 * "underpowered" (--require-power).
 * loadlab compare --job ID: GET /api/v1/compare?job=ID, an A/B job's builds.
 * loadlab compare --series NAME [--against REVISION] picks the two jobs from
 * GET /api/v1/series/{name}: its latest done job, against the done job before
 * it or the latest done job carrying REVISION. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "compare_table.h"
#include "table.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/report_text.h"

#include <getopt.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: loadlab compare BASE CAND [--max-regression PCT] [--metric M] [--intervals S]\n"
	"                       [--require-power]\n"
	"                       [--format table|md|csv|json]\n"
	"       loadlab compare --series NAME [--against REVISION] [--max-regression PCT] [--format F]\n"
	"       loadlab compare --job ID [--max-regression PCT] [--metric auto|cpu|faults|instructions]\n"
	"                       [--require-power] [--format table|md|json]\n\n"
	"Compares candidate job CAND with baseline job BASE: per variant and cell, the\n"
	"ratio with its CI and a verdict. Prints the comparison and exits 0 when there\n"
	"is no regression, 1 when there is one, 2 on an error.\n\n"
	"  --series NAME         compare the latest done job of series NAME with the\n"
	"                        done job before it (the jobs are named on stderr)\n"
	"  --job ID              an A/B program job (\"program.builds\"): each build against\n"
	"                        the first, per variant and cell, paired by pass (the median\n"
	"                        of the per-pass ratios with its 95 % CI and a sign test);\n"
	"                        --metric cpu, faults or instructions pairs that counter\n"
	"                        the same way (median, min, over-floor and floor-ratio\n"
	"                        compare two jobs only: refused)\n"
	"  --against REVISION    with --series: against the latest done job of the\n"
	"                        series whose revision is REVISION instead\n"
	"  --max-regression PCT  slowdown tolerated, in percent (\"5\" or \"5%\")\n"
	"  --metric M            the figure the verdict and exit code judge: auto (default:\n"
	"                        floor-ratio where both sides have an empty-program floor,\n"
	"                        as every agent's result has, else median; each row names\n"
	"                        the one it was judged by), median, min (the fastest run),\n"
	"                        over-floor (the median less the empty program's, measured\n"
	"                        in the same run) or floor-ratio (the median over the empty\n"
	"                        program's: a slowdown of a whole run cancels); or a run\n"
	"                        counter, per run: cpu (user + system CPU time), faults\n"
	"                        (page faults) or instructions (user mode, where a PMU\n"
	"                        exists), over the floor's per pass where runs pair; a row\n"
	"                        whose side did not count it says \"not counted: why\"\n"
	"  --require-power       a row whose detectable change (the least change it could\n"
	"                        see, at the interval's level and 80 % power) is above\n"
	"                        --max-regression fails the gate too (exit 1, verdict\n"
	"                        \"underpowered\"); without it such rows only say so\n"
	"  --intervals S         across-jobs (default: each row's interval also holds what\n"
	"                        varies between jobs, from 3 or more earlier jobs of the same\n"
	"                        spec or series in its cell; the table says where there were\n"
	"                        none) or within-job (one job's rounds only, as before)\n"
	"  --format F            table (default: aligned text for a terminal), md (markdown:\n"
	"                        for a pull request), csv or json\n";

/* PCT as "5", "2.5" or "5%": a finite number from 0 to 1000. */
static int parse_percent(const char *text, double *ret_value)
{
	char *end = NULL;
	double v = strtod(text, &end);

	if (end == text || (*end && strcmp(end, "%") != 0) || !isfinite(v))
		return err_set(LL_EINVAL, "--max-regression '%s' is not a percentage.", text);
	if (v < 0 || v > 1000)
		return err_set(LL_ERANGE, "--max-regression must be between 0 and 1000, not '%s'.", text);
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
	else if (strcmp(verdict, "underpowered") == 0)
		*ret_regression = 2; /* --require-power: rows that could not see the threshold */
	else if (strcmp(verdict, "not_comparable") == 0)
		*ret_regression = -1; /* shown, then an error: nothing could be judged */
	else
		rc = err_set(LL_EFORMAT, "The server's verdict '%s' is not one this client knows.", verdict);
	return rc;
}

/* The job id, state and revision (NULL when it has none) of JOB, an item of
 * a series' "jobs"; LL_EFORMAT when the id or state is missing. */
static int series_job(const cJSON *job, long long *ret_id, const char **ret_state, const char **ret_revision)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(job, "id");
	const cJSON *state = cJSON_GetObjectItemCaseSensitive(job, "state");
	const cJSON *revision = cJSON_GetObjectItemCaseSensitive(job, "revision");

	if (!cJSON_IsNumber(id) || id->valuedouble < 1 || id->valuedouble > 9007199254740992.0 ||
	    !cJSON_IsString(state))
		return err_set(LL_EFORMAT, "The server's series has a job without an id or state.");
	*ret_id = (long long)id->valuedouble;
	*ret_state = state->valuestring;
	*ret_revision = cJSON_IsString(revision) ? revision->valuestring : NULL;
	return 0;
}

/* Picks the two jobs of series NAME to compare: the candidate is its latest
 * done job (in submission order); the baseline is the done job before it,
 * or, with AGAINST, the latest other done job whose revision is AGAINST.
 * Names them on stderr. LL_ENOTFOUND for an unknown series or revision,
 * LL_ESTATE when the series has fewer than two done jobs. */
static int series_pick(const char *name, const char *against, long long *ret_base, long long *ret_candidate)
{
	char path[1024], *escaped = rest_escape(name);
	long long base = 0, candidate = 0, id = 0;
	const char *state = NULL, *revision = NULL, *base_revision = NULL, *candidate_revision = NULL;
	const cJSON *jobs, *job;
	cJSON *series = NULL;
	int rc, n;

	if (!escaped || strlen(escaped) > 800) {
		free(escaped);
		return err_set(LL_EINVAL, "'%s' is not a series name.", name);
	}
	snprintf(path, sizeof(path), "/api/v1/series/%s", escaped);
	free(escaped);
	if ((rc = client_fetch_object("GET", path, NULL, &series)) < 0)
		return rc;
	jobs = cJSON_GetObjectItemCaseSensitive(series, "jobs");
	if (!cJSON_IsArray(jobs)) {
		rc = err_set(LL_EFORMAT, "The server's series '%s' has no \"jobs\".", name);
		goto out;
	}
	/* Newest first: the first done job is the candidate. */
	for (n = cJSON_GetArraySize(jobs) - 1; n >= 0 && !base; n--) {
		job = cJSON_GetArrayItem(jobs, n);
		if ((rc = series_job(job, &id, &state, &revision)) < 0)
			goto out;
		if (strcmp(state, "done") != 0)
			continue;
		if (!candidate) {
			candidate = id;
			candidate_revision = revision;
		} else if (!against || (revision && strcmp(revision, against) == 0)) {
			base = id;
			base_revision = revision;
		}
	}
	if (!candidate || (!base && !against))
		rc = err_set(LL_ESTATE, "Series '%s' has %s done job: nothing to compare.", name,
			     candidate ? "one" : "no");
	else if (!base)
		rc = err_set(LL_ENOTFOUND, "Series '%s' has no done job with revision '%s' before job %lld.",
			     name, against, candidate);
	if (rc < 0)
		goto out;
	fprintf(stderr, "loadlab compare: series %s: job %lld%s%s%s against job %lld%s%s%s\n", name,
		candidate, candidate_revision ? " (" : "", candidate_revision ? candidate_revision : "",
		candidate_revision ? ")" : "", base, base_revision ? " (" : "",
		base_revision ? base_revision : "", base_revision ? ")" : "");
	*ret_base = base;
	*ret_candidate = candidate;
out:
	cJSON_Delete(series);
	return rc;
}

/* TEXT in a Markdown table cell: '|' and '\\' escaped. */
static void print_md(const char *text)
{
	for (const char *p = text; *p; p++) {
		if (*p == '|' || *p == '\\')
			putchar('\\');
		putchar(*p);
	}
}

/* "sha256:HEX" as its first 12 hex digits. */
static const char *short_hash(const cJSON *item)
{
	static char out[13];
	const char *text = cJSON_GetStringValue(item);

	snprintf(out, sizeof(out), "%s", text && strncmp(text, "sha256:", 7) == 0 ? text + 7 : "?");
	return out;
}

/* The files of the comparison's "program" part as a plain table. */
static void print_file_table(const cJSON *files, const char *const *lists)
{
	struct table t;
	const cJSON *item;

	table_init(&t, (const char *const[]){"FILE", "CHANGE", "BASELINE SHA256", "CANDIDATE SHA256", NULL});
	for (int l = 0; l < 3; l++) {
		cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(files, lists[l])) {
			const cJSON *hash = cJSON_GetObjectItemCaseSensitive(item, "sha256");
			table_add_json(&t, cJSON_GetObjectItemCaseSensitive(item, "path"));
			table_add(&t, lists[l]);
			table_add(&t, l == 0   ? short_hash(cJSON_GetObjectItemCaseSensitive(item,
											     "baseline_sha256"))
				      : l == 2 ? short_hash(hash)
					       : "");
			table_add(&t, l == 0   ? short_hash(cJSON_GetObjectItemCaseSensitive(
							 item, "candidate_sha256"))
				      : l == 1 ? short_hash(hash)
					       : "");
		}
	}
	table_print(&t, stdout);
	table_release(&t);
}

/* FILES ({"changed", "added", "removed"}: the comparison's "program.files"
 * or one build's entry of an A/B job's "files") as a plain table or in
 * Markdown, each file with its digests on either side. */
static void print_files(const cJSON *files, bool markdown)
{
	static const char *const lists[] = {"changed", "added", "removed"};
	const cJSON *item;

	if (!markdown) {
		printf("\n");
		print_file_table(files, lists);
		return;
	}
	printf("\n| file | change | baseline sha256 | candidate sha256 |\n|---|---|---|---|\n");
	for (int l = 0; l < 3; l++) {
		cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(files, lists[l])) {
			const char *path =
				cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, "path"));
			const cJSON *hash = cJSON_GetObjectItemCaseSensitive(item, "sha256");
			printf("| ");
			print_md(path ? path : "?");
			printf(" | %s | ", lists[l]);
			if (l == 0) {
				printf("%s | ",
				       short_hash(cJSON_GetObjectItemCaseSensitive(item, "baseline_sha256")));
				printf("%s |\n", short_hash(cJSON_GetObjectItemCaseSensitive(
							 item, "candidate_sha256")));
			} else {
				printf("%s | ", l == 2 ? short_hash(hash) : "");
				printf("%s |\n", l == 1 ? short_hash(hash) : "");
			}
		}
	}
}

/* The comparison's "program" part (two program jobs), after the table,
 * in Markdown (MARKDOWN) or as plain text: whether the jobs measured the
 * same program and, if not, every file added, removed or changed and the
 * settings that differ. Nothing when ROOT has no such part. */
static void print_program_changes(const cJSON *root, bool markdown)
{
	const cJSON *program = cJSON_GetObjectItemCaseSensitive(root, "program");
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(program, "files"), *item;
	const cJSON *settings = cJSON_GetObjectItemCaseSensitive(program, "settings_changed");
	static const char *const lists[] = {"changed", "added", "removed"};
	int counts[3], unchanged;

	if (!cJSON_IsObject(program) || !cJSON_IsObject(files))
		return;
	for (int l = 0; l < 3; l++)
		counts[l] = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(files, lists[l]));
	unchanged = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(files, "unchanged"));
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(program, "same_program"))) {
		printf("\nBoth jobs measured the same program (%d files, the same hashes).\n", unchanged);
		return;
	}
	printf(markdown ? "\n#### The two jobs measured different programs\n\n"
			: "\nThe two jobs measured different programs: ");
	printf("%d files changed, %d added, %d removed, %d unchanged.", counts[0], counts[1], counts[2],
	       unchanged);
	if (cJSON_GetArraySize(settings) > 0) {
		printf(" Settings changed:");
		cJSON_ArrayForEach(item, settings)
			printf("%s %s", item == settings->child ? "" : ",", cJSON_GetStringValue(item));
		printf(".");
	}
	printf("\n");
	if (counts[0] + counts[1] + counts[2] > 0)
		print_files(files, markdown);
}

/*
 * Compares CANDIDATE with BASE (THRESHOLD: "" or "&max_regression=PCT") and
 * prints the comparison in FORMAT. *RET_REGRESSION: 1 a regression, 0 none,
 * -1 nothing could be judged.
 *
 * The exit code comes from the JSON form's "verdict" field, the one the
 * contract documents: we always ask for format=json first and, when another
 * format is to be shown, ask again for it. Two requests cost little next to
 * the jobs compared, and need no header outside the contract; the comparison
 * of two finished jobs does not change between them.
 */
static int compare_jobs(long long base, long long candidate, const char *threshold, const char *format,
			int *ret_regression)
{
	struct rest_client c = {0};
	struct rest_answer json = {0}, shown = {0};
	char path[256];
	int rc, regression = 0;

	rc = client_open(&c);
	if (rc < 0)
		goto out;
	snprintf(path, sizeof(path), "/api/v1/compare?baseline=%lld&candidate=%lld%s&format=json", base,
		 candidate, threshold);
	rc = client_request(&c, "GET", path, NULL, CLIENT_REPORT_LIMIT, &json);
	if (rc == 0)
		rc = read_verdict(json.body, &regression);
	if (rc < 0)
		goto out;
	if (strcmp(format, "json") == 0) {
		client_print_body(&json.text);
		goto out;
	}
	if (strcmp(format, "table") == 0) {
		rc = compare_table_print(json.body, stdout);
		if (rc == 0)
			print_program_changes(json.body, false);
		goto out;
	}
	snprintf(path, sizeof(path), "/api/v1/compare?baseline=%lld&candidate=%lld%s&format=%s", base,
		 candidate, threshold, format);
	rc = client_request(&c, "GET", path, NULL, CLIENT_REPORT_LIMIT, &shown);
	if (rc == 0)
		client_print_body(&shown.text);
	if (rc == 0 && strcmp(format, "md") == 0)
		print_program_changes(json.body, true);
out:
	rest_answer_release(&json);
	rest_answer_release(&shown);
	rest_client_close(&c);
	if (rc == 0)
		*ret_regression = regression;
	return rc;
}

/* What each build of the A/B comparison ROOT changed against the base:
 * its files added, removed and changed, each with its digests. */
static void print_ab_files(const cJSON *root, bool markdown)
{
	static const char *const lists[] = {"changed", "added", "removed"};
	const cJSON *build;

	cJSON_ArrayForEach(build, cJSON_GetObjectItemCaseSensitive(root, "files")) {
		const char *label = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(build, "build"));
		const char *base = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(build, "base"));
		int counts[3];
		for (int l = 0; l < 3; l++)
			counts[l] = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(build, lists[l]));
		printf(markdown ? "\n#### Build %s against %s\n\n" : "\nBuild %s against %s: ",
		       label ? label : "?", base ? base : "?");
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(build, "same_files"))) {
			printf("the same files (%.0f, the same hashes).\n",
			       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(build, "unchanged")));
			continue;
		}
		printf("%d files changed, %d added, %d removed, %.0f unchanged.\n", counts[0], counts[1],
		       counts[2], cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(build, "unchanged")));
		print_files(build, markdown);
	}
}

/* The A/B comparison ROOT (report_ab_metric()) as a table, or markdown;
 * below it each row's words (what it could not see, why it has no
 * verdict) and the counter that judged, when not the times. */
static void print_ab(const cJSON *root, bool markdown)
{
	const cJSON *row;

	printf(markdown ? "| variant | cell | build | base | ratio | 95 %% CI | pairs | status |\n"
			  "|---|---|---|---|---|---|---|---|\n"
			: "%-12s %-24s %-12s %-10s %8s  %-17s %5s  %s\n",
	       "variant", "cell", "build", "base", "ratio", "95 % CI", "pairs", "status");
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(root, "rows")) {
		const char *status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "status"));
		double ratio = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "ratio"));
		double lo = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "ci_low"));
		double hi = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "ci_high"));
		double pairs = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "pairs"));
		char ci[48];
		snprintf(ci, sizeof(ci), isnan(lo) ? "-" : "%.4f..%.4f", lo, hi);
		printf(markdown ? "| %s | %s | %s | %s | %.4f | %s | %.0f | %s%s |\n"
				: "%-12s %-24s %-12s %-10s %8.4f  %-17s %5.0f  %s%s\n",
		       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "variant")),
		       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "cell")),
		       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "build")),
		       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "base")),
		       isnan(ratio) ? 0 : ratio, ci, isnan(pairs) ? 0 : pairs,
		       report_text_status_words(status),
		       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(row, "regression")) ? " (regression)"
											 : "");
	}
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(root, "rows")) {
		const char *note =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "detectable_note"));
		if (!note) /* a row without a verdict: why ("not counted: ...") */
			note = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "reason"));
		if (note)
			printf("%s %s %s: %s\n",
			       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "variant")),
			       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "cell")),
			       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "build")), note);
	}
	const char *metric = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "metric"));
	if (metric && strcmp(metric, "paired-ratio") != 0)
		printf("judged by: %s (run counter per run, paired by pass)\n", metric);
	printf("verdict: %s\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "verdict")));
	print_ab_files(root, markdown);
}

/* loadlab compare --job ID: an A/B job's builds against its base. */
static int compare_ab(long long job, const char *threshold, const char *format, int *ret_regression)
{
	struct rest_client c = {0};
	struct rest_answer json = {0};
	char path[256];
	int rc, regression = 0;

	if (strcmp(format, "csv") == 0)
		return err_set(LL_EINVAL, "--job gives table, md or json, not csv.");
	if ((rc = client_open(&c)) < 0)
		goto out;
	snprintf(path, sizeof(path), "/api/v1/compare?job=%lld%s&format=json", job, threshold);
	if ((rc = client_request(&c, "GET", path, NULL, CLIENT_REPORT_LIMIT, &json)) == 0)
		rc = read_verdict(json.body, &regression);
	if (rc < 0)
		goto out;
	if (strcmp(format, "json") == 0)
		client_print_body(&json.text);
	else
		print_ab(json.body, strcmp(format, "md") == 0);
	*ret_regression = regression;
out:
	rest_answer_release(&json);
	rest_client_close(&c);
	return rc;
}

struct compare_options {
	const char *format, *series, *against, *job;
	char threshold[160]; /* query arguments: "&max_regression=PCT&metric=M&intervals=S&require_power=1" */
	bool require_power;
	char max_regression[40], metric[32], intervals[32];
};

static int compare_option(void *context, int option, const char *value)
{
	struct compare_options *o = context;
	double max_regression = 0;
	int rc = 0;

	switch (option) {
	case 'm':
		rc = parse_percent(value, &max_regression);
		if (rc == 0)
			snprintf(o->max_regression, sizeof(o->max_regression), "&max_regression=%g",
				 max_regression);
		break;
	case 'M':
		if (strcmp(value, "auto") && strcmp(value, "median") && strcmp(value, "min") &&
		    strcmp(value, "over-floor") && strcmp(value, "floor-ratio") && strcmp(value, "cpu") &&
		    strcmp(value, "faults") && strcmp(value, "instructions"))
			rc = err_set(
				LL_EINVAL,
				"--metric must be auto, median, min, over-floor, floor-ratio, cpu, faults "
				"or instructions, not '%s'.",
				value);
		else
			snprintf(o->metric, sizeof(o->metric), "&metric=%s", value);
		break;
	case 'P':
		o->require_power = true;
		break;
	case 'I':
		if (strcmp(value, "across-jobs") && strcmp(value, "within-job"))
			rc = err_set(LL_EINVAL, "--intervals must be across-jobs or within-job, not '%s'.",
				     value);
		else
			snprintf(o->intervals, sizeof(o->intervals), "&intervals=%s", value);
		break;
	case 'f':
		rc = args_format(value, &o->format);
		if (rc == 0 && strcmp(value, "table") == 0)
			o->format = "table"; /* drawn here from the JSON */
		break;
	case 's':
		o->series = value;
		break;
	case 'a':
		o->against = value;
		break;
	case 'j':
		o->job = value;
		break;
	}
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	static const struct option options[] = {
		{"max-regression", required_argument, NULL, 'm'},
		{"format", required_argument, NULL, 'f'},
		{"series", required_argument, NULL, 's'},
		{"against", required_argument, NULL, 'a'},
		{"metric", required_argument, NULL, 'M'},
		{"intervals", required_argument, NULL, 'I'},
		{"job", required_argument, NULL, 'j'},
		{"require-power", no_argument, NULL, 'P'},
		{NULL, 0, NULL, 0},
	};
	struct compare_options o = {.format = "table"};
	long long base, candidate;
	int rc = args_parse(argc, argv, "compare", usage_text, options, compare_option, &o);
	int regression = 0;

	if (rc >= 0)
		return rc;
	snprintf(o.threshold, sizeof(o.threshold), "%s%s%s%s", o.max_regression, o.metric, o.intervals,
		 o.require_power ? "&require_power=1" : "");
	if (o.against && !o.series)
		return args_usage_error("compare", "--against needs --series");
	if (o.job) {
		char query[sizeof(o.threshold)]; /* --intervals: two jobs only (pairs by pass have none) */
		if (argc != optind || o.series || o.intervals[0])
			return args_usage_error("compare",
						"takes no job ids, --series nor --intervals with --job");
		snprintf(query, sizeof(query), "%s%s%s", o.max_regression, o.metric,
			 o.require_power ? "&require_power=1" : "");
		if ((rc = args_job_id(o.job, &base)) == 0)
			rc = compare_ab(base, query, o.format, &regression);
	} else if (o.series) {
		if (argc != optind)
			return args_usage_error("compare", "takes no job ids with --series");
		rc = series_pick(o.series, o.against, &base, &candidate);
	} else {
		if (argc - optind != 2)
			return args_usage_error("compare", "expects two job ids, BASE and CAND");
		if ((rc = args_job_id(argv[optind], &base)) == 0)
			rc = args_job_id(argv[optind + 1], &candidate);
	}
	if (rc == 0 && !o.job)
		rc = compare_jobs(base, candidate, o.threshold, o.format, &regression);
	if (rc == 0 && regression < 0)
		rc = err_set(LL_ESTATE,
			     o.job ? "No build of the job could be compared with its base (see the "
				     "reasons above)."
				   : "No variant and cell of the two jobs could be compared (see "
				     "the reasons above).");
	if (rc < 0)
		return client_fail("compare", rc);
	if (regression == 2)
		fprintf(stderr, "loadlab compare: rows could only see changes above --max-regression, and "
				"--require-power asks that every row could (see DETECTABLE).\n");
	return regression ? 1 : 0;
}
