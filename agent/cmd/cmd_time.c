/* loadlab-agent time: the load timer (measure.h) on any program. */
#include "cmd/commands.h"
#include "measure/measure.h"

#include "loadlab/err.h"
#include "loadlab/plat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXTRA_FILES 64

static const char usage_text[] =
	"usage: loadlab-agent time [--runs N] [--warmup W] [--cold] [--file PATH]...\n"
	"                          [--timeout MS] [--reruns R] [--seed S] [--json]\n"
	"                          -- PROGRAM [ARGS...]\n"
	"\n"
	"Times PROGRAM as the pipeline times a variant (docs/agent.md, Measurements):\n"
	"W untimed runs, then N timed ones (default 30 after 3), at the highest\n"
	"priority the OS grants, pinned to one CPU, each from just before the\n"
	"process is started to its exit. PROGRAM is a path or a name looked up in\n"
	"PATH; its output is discarded. A run that exits non-zero, or is still\n"
	"running after --timeout MS (default 60000; it is killed), fails the\n"
	"measurement; with --reruns R a run that exits non-zero is run again up to\n"
	"R times first (a cold run after a new eviction), and each rerun is listed.\n"
	"\n"
	"--cold: before each run, evicts PROGRAM's file and every --file PATH from\n"
	"the OS cache and checks it did; reports per run the wall time, page\n"
	"faults (hard/soft), read operations and bytes, the pages of each file\n"
	"resident after the run, and a warm run right after each cold one. The\n"
	"shared libraries a program loads are not evicted unless given with --file\n"
	"(the C library is mapped by every process and would not leave the cache).\n"
	"Under Wine, time /usr/lib/wine/wine64 with the .exe as argument and give\n"
	"the .exe and its DLLs with --file: the counters are the wine process's.\n"
	"\n"
	"Prints a summary (min, median, mean, MAD, p90, 95 % bootstrap intervals),\n"
	"or with --json one object: program, argv, runs, warmup, samples_us,\n"
	"min_us, median_us, mean_us, mad_us, p90_us, ci_median_us, ci_min_us,\n"
	"outliers (indexes into samples_us), method (how it measured); with --cold\n"
	"also cold, page_faults, hard_faults, soft_faults, read_bytes, read_ops,\n"
	"read_chars, resident_before_pages, cold_runs, modules, warm_check.\n"
	"\n"
	"exit: 0 measured; 1 the program failed, hung or could not start; 2 usage.";

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "loadlab-agent time: %s%s%s (see loadlab-agent time --help)\n", what, arg ? " " : "",
		arg ? arg : "");
	return 2;
}

static bool parse_int(const char *text, long long min, long long max, long long *ret)
{
	char *end;
	long long v;

	if (!text || !*text)
		return false;
	v = strtoll(text, &end, 10);
	if (*end || v < min || v > max)
		return false;
	*ret = v;
	return true;
}

static void print_pair(const char *label, const cJSON *summary, const char *key, const char *ci)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(summary, key);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(summary, ci);

	printf("  %-7s %10.1f us", label, cJSON_GetNumberValue(v));
	if (cJSON_IsArray(c) && cJSON_GetArraySize(c) == 2)
		printf("   95%% CI %.1f .. %.1f", cJSON_GetNumberValue(cJSON_GetArrayItem(c, 0)),
		       cJSON_GetNumberValue(cJSON_GetArrayItem(c, 1)));
	putchar('\n');
}

static double median_of(const cJSON *arr)
{
	int n = cJSON_GetArraySize(arr);
	double *x, m;

	if (n <= 0 || !(x = malloc((size_t)n * sizeof(*x))))
		return -1;
	for (int i = 0; i < n; i++)
		x[i] = cJSON_GetNumberValue(cJSON_GetArrayItem(arr, i));
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && x[j - 1] > x[j]; j--) {
			double t = x[j];
			x[j] = x[j - 1];
			x[j - 1] = t;
		}
	m = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	free(x);
	return m;
}

/* "  run counters (median per run): NAME V, ...; not counted: NAME (why)". */
static void print_run_counters(const cJSON *p)
{
	const cJSON *rc = cJSON_GetObjectItemCaseSensitive(p, "run_counters"), *item;

	if (!rc)
		return;
	printf("  run counters (median per run):");
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(rc, "counters"))
		if (cJSON_IsString(item))
			printf(" %s %.0f", item->valuestring,
			       median_of(cJSON_GetObjectItemCaseSensitive(rc, item->valuestring)));
	printf("\n");
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(rc, "not_counted"))
		printf("  not counted: %s (%s)\n", item->string, cJSON_GetStringValue(item));
}

static void print_text(const char *program, const cJSON *p, const cJSON *method, bool cold)
{
	const cJSON *summary = cJSON_GetObjectItemCaseSensitive(p, "summary");
	const cJSON *outliers = cJSON_GetObjectItemCaseSensitive(summary, "outliers");
	const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(method, "cpu");

	printf("%s: %d %s runs", program,
	       (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(method, "runs")),
	       cold ? "cold" : "warm");
	if (!cold)
		printf(" after %d warm-ups",
		       (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(method, "warmup")));
	printf("\n");
	print_pair("min", summary, "min_us", "ci_min_us");
	print_pair("median", summary, "median_us", "ci_median_us");
	printf("  %-7s %10.1f us\n  %-7s %10.1f us\n  %-7s %10.1f us\n  outliers: %d\n", "mean",
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(summary, "mean_us")), "MAD",
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(summary, "mad_us")), "p90",
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(summary, "p90_us")),
	       cJSON_GetArraySize(outliers));
	print_run_counters(p);
	if (cold) {
		const cJSON *warm = cJSON_GetObjectItemCaseSensitive(p, "warm_check");
		printf("  cold: %s (%s)%s%s\n",
		       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "cold")) ? "yes" : "NO",
		       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "method")),
		       *cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "note")) ? ": " : "",
		       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "note")));
		printf("  median per cold run: %.0f page faults (%.0f hard), %.0f bytes read from storage, "
		       "%.0f "
		       "read calls\n",
		       median_of(cJSON_GetObjectItemCaseSensitive(p, "page_faults")),
		       median_of(cJSON_GetObjectItemCaseSensitive(p, "hard_faults")),
		       median_of(cJSON_GetObjectItemCaseSensitive(p, "read_bytes")),
		       median_of(cJSON_GetObjectItemCaseSensitive(p, "read_ops")));
		printf("  warm run after each: median %.1f us, %.0f bytes read from storage\n",
		       median_of(cJSON_GetObjectItemCaseSensitive(warm, "samples_us")),
		       median_of(cJSON_GetObjectItemCaseSensitive(warm, "read_bytes")));
		printf("  counters: %s\n",
		       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(method, "counters")));
	}
	printf("  priority %s (read back %s), ",
	       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(method, "priority")),
	       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(method, "priority_read_back")));
	if (cJSON_IsNumber(cpu))
		printf("CPU %d, ", (int)cpu->valuedouble);
	else
		printf("not pinned, ");
	printf("%s (resolution %g ns), %s\n",
	       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(method, "clock")),
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(method, "timer_resolution_ns")),
	       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(method, "spawn")));
}

/* The --json object: the program's entry and its summary flattened, with
 * the method. Takes RESULT apart (it is deleted by the caller). */
static cJSON *flatten(const char *program, char **argv, cJSON *result, const struct measure_options *o)
{
	cJSON *out = cJSON_CreateObject(), *programs = cJSON_GetObjectItemCaseSensitive(result, "programs");
	cJSON *p = programs ? programs->child : NULL, *summary, *item, *args;

	if (!out || !p || !cJSON_AddStringToObject(out, "program", program) ||
	    !(args = cJSON_AddArrayToObject(out, "argv")) || !cJSON_AddNumberToObject(out, "runs", o->runs) ||
	    !cJSON_AddNumberToObject(out, "warmup", o->warmup))
		goto fail;
	for (int i = 0; argv[i]; i++) {
		cJSON *s = cJSON_CreateString(argv[i]);
		if (!s || !cJSON_AddItemToArray(args, s)) {
			cJSON_Delete(s);
			goto fail;
		}
	}
	summary = cJSON_DetachItemFromObjectCaseSensitive(p, "summary");
	while (summary && (item = summary->child)) {
		cJSON_DetachItemViaPointer(summary, item);
		cJSON_AddItemToObject(out, item->string, item);
	}
	cJSON_Delete(summary);
	while ((item = p->child)) {
		cJSON_DetachItemViaPointer(p, item);
		if (strcmp(item->string, "method") == 0) { /* the eviction method, also in "method" */
			cJSON_Delete(item);
			continue;
		}
		cJSON_AddItemToObject(out, item->string, item);
	}
	if ((item = cJSON_DetachItemFromObjectCaseSensitive(result, "method")))
		cJSON_AddItemToObject(out, "method", item);
	if ((item = cJSON_DetachItemFromObjectCaseSensitive(result, "reruns")))
		cJSON_AddItemToObject(out, "reruns", item);
	return out;
fail:
	cJSON_Delete(out);
	return NULL;
}

int cmd_time(int argc, char **argv)
{
	struct measure_options o = {.runs = 30, .warmup = 3, .seed = 1, .timeout_ms = 60000};
	const char *files[MAX_EXTRA_FILES + 2];
	char program[PLAT_MAX_PATH + 1];
	size_t nfiles = 1;
	bool cold = false, json = false;
	cJSON *result = NULL, *out = NULL;
	long long v;
	int i, rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			puts(usage_text);
			return 0;
		} else if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else if (strcmp(a, "--cold") == 0) {
			cold = true;
		} else if (strcmp(a, "--json") == 0) {
			json = true;
		} else if (strcmp(a, "--runs") == 0) {
			if (!parse_int(i + 1 < argc ? argv[++i] : NULL, 1, MEASURE_MAX_RUNS, &v))
				return usage_error("--runs needs 1..10000", NULL);
			o.runs = (int)v;
		} else if (strcmp(a, "--warmup") == 0) {
			if (!parse_int(i + 1 < argc ? argv[++i] : NULL, 0, MEASURE_MAX_WARMUP, &v))
				return usage_error("--warmup needs 0..1000", NULL);
			o.warmup = (int)v;
		} else if (strcmp(a, "--timeout") == 0) {
			if (!parse_int(i + 1 < argc ? argv[++i] : NULL, 1, 86400000, &v))
				return usage_error("--timeout needs 1..86400000 ms", NULL);
			o.timeout_ms = v;
		} else if (strcmp(a, "--reruns") == 0) {
			if (!parse_int(i + 1 < argc ? argv[++i] : NULL, 0, MEASURE_MAX_RERUNS, &v))
				return usage_error("--reruns needs 0..10", NULL);
			o.reruns = (int)v;
		} else if (strcmp(a, "--seed") == 0) {
			if (!parse_int(i + 1 < argc ? argv[++i] : NULL, 0, (long long)(~0ULL >> 1), &v))
				return usage_error("--seed needs a non-negative integer", NULL);
			o.seed = (uint64_t)v;
		} else if (strcmp(a, "--file") == 0) {
			if (i + 1 >= argc)
				return usage_error("--file needs a path", NULL);
			if (nfiles > MAX_EXTRA_FILES)
				return usage_error("at most 64 --file paths", NULL);
			files[nfiles++] = argv[++i];
		} else if (a[0] == '-') {
			return usage_error("unknown option", a);
		} else {
			break;
		}
	}
	if (i >= argc)
		return usage_error("no PROGRAM to time", NULL);
	if (nfiles > 1 && !cold)
		return usage_error("--file is for --cold runs", NULL);
	if (strchr(argv[i], '/') || strchr(argv[i], '\\')) {
		if (strlen(argv[i]) > PLAT_MAX_PATH)
			return usage_error("program path too long", NULL);
		snprintf(program, sizeof(program), "%s", argv[i]);
	} else if ((rc = plat_find_program(argv[i], program, sizeof(program))) < 0) {
		fprintf(stderr, "loadlab-agent time: %s: %s\n", argv[i], err_message(rc));
		return 1;
	}
	files[0] = program;
	files[nfiles] = NULL;
	argv[i] = program; /* argv[0] of the child: the path found */
	struct measure_program p = {
		.name = program, .spawn = {.argv = (const char *const *)(argv + i)}, .files = files};
	rc = cold ? measure_cold(&p, 1, &o, &result) : measure_warm(&p, 1, &o, &result);
	if (rc < 0) {
		fprintf(stderr, "loadlab-agent time: %s\n", err_message(rc));
		return 1;
	}
	if (!json) {
		const cJSON *entry = cJSON_GetObjectItemCaseSensitive(result, "programs")->child;
		print_text(program, entry, cJSON_GetObjectItemCaseSensitive(result, "method"), cold);
		cJSON_Delete(result);
		return fflush(stdout) == 0 ? 0 : 2;
	}
	out = flatten(program, argv + i, result, &o);
	cJSON_Delete(result);
	return cmd_print_json("time", out);
}
