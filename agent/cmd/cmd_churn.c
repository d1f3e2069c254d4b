/* loadlab-agent churn: the process-churn test by hand (churn.h). */
#include "cmd/commands.h"
#include "measure/churn.h"
#include "loadlab/plat.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most --dll-set values one run takes. */
#define MAX_SETS 8

static const char usage_text[] =
	"usage: loadlab-agent churn [--processes N] [--dll-set SET]... [--lib PATH]...\n"
	"                           [--wine] [--work-dir DIR] [--timeout-ms MS] [--json]\n"
	"\n"
	"Creates N processes that each load a DLL set and wait on a shared event,\n"
	"and times their creation (first spawn until every one is ready) and their\n"
	"destruction (the event until every one has exited). On Windows, and under\n"
	"Wine with --wine, the processes are generated Windows programs and a probe\n"
	"thread times a PeekMessage every 10 ms (time blocked on the window\n"
	"manager's lock); on Linux the children are this agent re-executed, which\n"
	"dlopen()s the libraries, and nothing is probed. At most 1000 processes\n"
	"(fewer if RLIMIT_NPROC or memory says so) live at once: more run in waves.\n"
	"\n"
	"options:\n"
	"  --processes N     1..5000 (default 1000)\n"
	"  --dll-set SET     none, user32, user32+gdi32 (Windows programs only) or\n"
	"                    generated (the --lib files); repeat or separate with\n"
	"                    commas to run several sets in one go (default none)\n"
	"  --lib PATH        a library the 'generated' set loads (a DLL for Windows\n"
	"                    programs, a shared object on Linux); repeatable, <= 64\n"
	"  --wine            on Linux: the Windows churn under Wine (wine64, a private\n"
	"                    WINEPREFIX in the work folder, its own wineserver)\n"
	"  --work-dir DIR    where programs are built (default: a new temporary\n"
	"                    folder, removed afterwards)\n"
	"  --timeout-ms MS   per phase of a wave (default 120000)\n"
	"  --json            print the results as a JSON array (one object per set)\n"
	"\n"
	"exit: 0 measured; 1 the test failed (every child it started is gone);\n"
	"2 usage error.\n";

static int parse_int(const char *text, long long min, long long max, long long *ret)
{
	char *end;
	long long v;

	if (!text || !*text)
		return -1;
	v = strtoll(text, &end, 10);
	if (*end || v < min || v > max)
		return -1;
	*ret = v;
	return 0;
}

/* Splits TEXT at commas into SETS (COUNT so far, at most MAX_SETS); the
 * pieces point into TEXT, which is modified. */
static int add_sets(char *text, const char **sets, int *count)
{
	char *save = NULL;

	for (char *item = strtok_r(text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (*count >= MAX_SETS)
			return -1;
		sets[(*count)++] = item;
	}
	return 0;
}

static void print_table(const cJSON *results)
{
	const cJSON *r;

	printf("%-14s %9s %12s %12s %14s %14s\n", "dll set", "processes", "create ms", "destroy ms",
	       "blocked ms", "blocked max ms");
	cJSON_ArrayForEach(r, results) {
		const cJSON *total = cJSON_GetObjectItemCaseSensitive(r, "blocked_total_ms");
		const cJSON *max = cJSON_GetObjectItemCaseSensitive(r, "blocked_max_ms");
		char blocked[32] = "-", blocked_max[32] = "-";
		if (cJSON_IsNumber(total) && cJSON_IsNumber(max)) {
			snprintf(blocked, sizeof(blocked), "%.3f", total->valuedouble);
			snprintf(blocked_max, sizeof(blocked_max), "%.3f", max->valuedouble);
		}
		printf("%-14s %9d %12.3f %12.3f %14s %14s\n",
		       cJSON_GetObjectItemCaseSensitive(r, "dll_set")->valuestring,
		       cJSON_GetObjectItemCaseSensitive(r, "processes")->valueint,
		       cJSON_GetObjectItemCaseSensitive(r, "create_us")->valuedouble / 1000.0,
		       cJSON_GetObjectItemCaseSensitive(r, "destroy_us")->valuedouble / 1000.0, blocked,
		       blocked_max);
	}
	r = cJSON_GetArrayItem(results, 0);
	if (r && cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "method"), "note"))
		printf("\n%s\n",
		       cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "method"), "note")
			       ->valuestring);
	else if (r && cJSON_GetObjectItemCaseSensitive(r, "blocked"))
		printf("\nblocked time: not measured on this platform\n");
}

int cmd_churn(int argc, char **argv)
{
	struct churn_options o;
	const char *sets[MAX_SETS + 1], *libs[CHURN_MAX_LIBS + 1], *work_dir;
	int set_count = 0, lib_count = 0, rc;
	bool json = false;
	char *temp = NULL, *text;
	cJSON *results = NULL;
	long long v;

	if (argc >= 2 && strcmp(argv[1], "--child") == 0)
		return churn_child_main(argc - 2, argv + 2);
	memset(&o, 0, sizeof(o));
	o.processes = CHURN_DEFAULT_PROCESSES;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			fputs(usage_text, stdout);
			return 0;
		} else if (strcmp(arg, "--json") == 0) {
			json = true;
		} else if (strcmp(arg, "--wine") == 0) {
			o.wine = true;
		} else if (strcmp(arg, "--processes") == 0 && value) {
			if (parse_int(value, -1000000, 1000000, &v) < 0)
				return err_exit_usage("loadlab-agent churn", "--processes needs a number");
			o.processes = (int)v;
			i++;
		} else if (strcmp(arg, "--dll-set") == 0 && value) {
			if (add_sets(argv[++i], sets, &set_count) < 0)
				return err_exit_usage("loadlab-agent churn", "at most 8 DLL sets");
		} else if (strcmp(arg, "--lib") == 0 && value) {
			if (lib_count >= CHURN_MAX_LIBS)
				return err_exit_usage("loadlab-agent churn", "at most 64 --lib files");
			libs[lib_count++] = argv[++i];
		} else if (strcmp(arg, "--work-dir") == 0 && value) {
			o.work_dir = argv[++i];
		} else if (strcmp(arg, "--timeout-ms") == 0 && value) {
			if (parse_int(value, 1, 24ll * 3600 * 1000, &v) < 0)
				return err_exit_usage("loadlab-agent churn",
						      "--timeout-ms needs 1..86400000");
			o.timeout_ms = v;
			i++;
		} else {
			fprintf(stderr,
				"loadlab-agent churn: unknown argument or missing value: '%s' (see "
				"loadlab-agent churn --help)\n",
				arg);
			return 2;
		}
	}
	if (set_count == 0)
		sets[set_count++] = "none";
	sets[set_count] = NULL;
	libs[lib_count] = NULL;
	o.generated_libs = lib_count ? libs : NULL;
	/* Every set checked before anything runs, with a placeholder folder. */
	work_dir = o.work_dir;
	o.work_dir = work_dir ? work_dir : ".";
	for (int i = 0; i < set_count; i++) {
		o.dll_set = sets[i];
		if ((rc = churn_options_check(&o)) < 0)
			return err_exit_usage("loadlab-agent churn", err_message(rc));
	}
	if (!work_dir) {
		if ((rc = plat_make_temp_dir("loadlab-churn", &temp)) < 0) {
			fprintf(stderr, "loadlab-agent churn: %s\n", err_message(rc));
			return 1;
		}
		o.work_dir = temp;
	}
	rc = churn_run_sets(&o, sets, &results);
	if (temp) {
		plat_remove_tree(temp);
		free(temp);
	}
	if (rc < 0) {
		fprintf(stderr, "loadlab-agent churn: %s\n", err_message(rc));
		return 1;
	}
	if (json) {
		if (!(text = cJSON_Print(results))) {
			cJSON_Delete(results);
			fprintf(stderr, "loadlab-agent churn: out of memory\n");
			return 1;
		}
		puts(text);
		free(text);
	} else {
		print_table(results);
	}
	cJSON_Delete(results);
	return fflush(stdout) == 0 ? 0 : 1;
}
