/*
 * loadlab-agent calibrate [--family pe|elf] [--delay-us X] [--runs N]
 * [--rounds R] [--out FILE] [--keep]: the known-effect self-test. Runs,
 * here and through the same pipeline as a leased task (pipeline_run()), a
 * job of three variants of one small generated program that differ only
 * in the cost injected into the first library's entry point (delay_us 0,
 * X and 2X: docs/rest-bodies.md, "delay_us"), and reports how much of it
 * the timer recovers (calibration_from_result(), loadlab/calibration.h:
 * the median of the per-pass differences to the undelayed variant when the
 * samples pair by pass, else the difference of the medians; a 95 %
 * bootstrap interval resampling rounds, then passes or runs within them,
 * from 3 rounds on), against the injected cost, and the noise the runs saw. A text summary goes to
 * stdout, the JSON to --out. Exit 0 when the job ran (whatever it
 * recovered), 1 when it failed, 2 for bad arguments.
 */
#include "cmd/commands.h"

#include "loadlab/calibration.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/plat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Defaults: a program small enough to build in seconds. */
#define CALIBRATE_DLLS 2
#define CALIBRATE_EXPORTS 16
/* 150 runs in 3 rounds: natively, paired, 200 us comes back within
 * +-10 % every time measured, in about 8 s (docs/agent.md, "Calibration",
 * has the figures); 3 rounds let the interval resample rounds. */
#define CALIBRATE_RUNS 150
#define CALIBRATE_ROUNDS 3
/* Under Wine (the pe family on Linux, or a Windows agent under Wine) a
 * start varies by far more: 1,000 runs, the most a job takes, in 5 rounds
 * (about a minute; 200 us within +-10 % in 9 of 12 such calibrations on
 * the idle development VM, docs/agent.md, "Calibration"). */
#define CALIBRATE_WINE_RUNS 1000
#define CALIBRATE_WINE_ROUNDS 5
#define CALIBRATE_DELAY_US 200
/* A recovered cost within this share of the injected one "agrees". */
#define CALIBRATE_TOLERANCE 0.10

static const char usage_text[] =
	"usage: loadlab-agent calibrate [--family pe|elf] [--delay-us X] [--runs N] [--rounds R]\n"
	"                               [--out FILE] [--keep]\n"
	"\n"
	"The known-effect self-test: times, through the whole pipeline, three\n"
	"variants of one generated program whose first library's entry point\n"
	"waits 0, X and 2X microseconds (X: --delay-us, 1..50000, default 200),\n"
	"and prints the cost recovered against the injected one, with its 95 %\n"
	"interval, and the noise seen. The cost is the median of the per-pass\n"
	"differences to the 0 variant when the samples pair by pass (\"paired\"),\n"
	"else the difference of the medians.\n"
	"--family: elf (Linux, the default there) or pe (Windows, or Linux with\n"
	"Wine). --runs 1..1000 (default 150; under Wine 1000) in --rounds 1..20\n"
	"(default 3; under Wine 5).\n"
	"--out writes the JSON; --keep leaves the work folder. Exit 0 when the\n"
	"job ran, 1 when it failed, 2 for bad arguments.\n";

static int usage_error(const char *what)
{
	fprintf(stderr, "loadlab-agent calibrate: %s (see loadlab-agent calibrate --help)\n", what);
	return 2;
}

static bool parse_int(const char *text, long min, long max, long *ret)
{
	char *end;
	long v = strtol(text, &end, 10);

	if (!*text || *end || v < min || v > max)
		return false;
	*ret = v;
	return true;
}

/* The job: variants d0, dX and d2X of the family's default build. */
static cJSON *calibration_job(const char *family, long delay, long runs, long rounds)
{
	cJSON *job = cJSON_CreateObject(), *gen, *variants, *measure, *warm;
	long delays[3] = {0, delay, 2 * delay};

	if (!job || !cJSON_AddStringToObject(job, "name", "calibrate") ||
	    !cJSON_AddStringToObject(job, "family", family) ||
	    !(gen = cJSON_AddObjectToObject(job, "generator")) ||
	    !cJSON_AddNumberToObject(gen, "dlls", CALIBRATE_DLLS) ||
	    !cJSON_AddNumberToObject(gen, "exports", CALIBRATE_EXPORTS) ||
	    !(variants = cJSON_AddArrayToObject(job, "variants")) ||
	    !(measure = cJSON_AddObjectToObject(job, "measure")) ||
	    !(warm = cJSON_AddObjectToObject(measure, "warm")) ||
	    !cJSON_AddNumberToObject(warm, "runs", runs) ||
	    !cJSON_AddNumberToObject(warm, "rounds", rounds) || !cJSON_AddNumberToObject(warm, "warmup", 3))
		goto fail;
	for (int k = 0; k < 3; k++) {
		cJSON *v = cJSON_CreateObject();
		char name[32];
		snprintf(name, sizeof(name), "d%ld", delays[k]);
		if (!v || !cJSON_AddItemToArray(variants, v) || !cJSON_AddStringToObject(v, "name", name) ||
		    (strcmp(family, "elf") == 0 && !cJSON_AddStringToObject(v, "preset", "default")) ||
		    (delays[k] > 0 && !cJSON_AddNumberToObject(v, "delay_us", (double)delays[k])))
			goto fail;
	}
	return job;
fail:
	cJSON_Delete(job);
	return NULL;
}

/* OBJ's string member KEY, or "". */
static const char *text_of(const cJSON *obj, const char *key)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
	return s ? s : "";
}

/* RESULT's variant NAME's warm.noise (borrowed), or NULL. */
static const cJSON *noise_of(const cJSON *result, const char *name)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(result, "variants"))
		if (strcmp(text_of(v, "name"), name) == 0)
			return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(v, "warm"),
								"noise");
	return NULL;
}

/* The report of RESULT (calibration_from_result()'s figures): recovered
 * against injected, and the noise. */
static int report_json(const cJSON *result, const char *family, long delay, long runs, long rounds,
		       cJSON **ret)
{
	char names[3][32];
	const char *variants[3] = {names[0], names[1], names[2]};
	struct calibration c;
	cJSON *r = NULL, *rec, *noise, *medians;
	bool agree = true;
	int rc;

	for (int k = 0; k < 3; k++)
		snprintf(names[k], sizeof(names[k]), "d%ld", k * delay);
	if ((rc = calibration_from_result(result, variants, (double)delay, &c)) < 0)
		return rc;
	if (!(r = cJSON_CreateObject()) || !cJSON_AddStringToObject(r, "family", family) ||
	    !cJSON_AddStringToObject(r, "runner", text_of(result, "runner")) ||
	    !cJSON_AddNumberToObject(r, "delay_us", (double)delay) ||
	    !cJSON_AddNumberToObject(r, "runs", runs) || !cJSON_AddNumberToObject(r, "rounds", rounds) ||
	    !cJSON_AddBoolToObject(r, "paired", c.paired) ||
	    !(medians = cJSON_AddObjectToObject(r, "medians_us")) ||
	    !(rec = cJSON_AddArrayToObject(r, "recovered")) || !(noise = cJSON_AddObjectToObject(r, "noise")))
		goto fail;
	for (int k = 0; k < 3; k++) {
		const cJSON *n = noise_of(result, names[k]);
		if (!cJSON_AddNumberToObject(medians, names[k], c.median_us[k]) ||
		    !cJSON_AddItemToObject(noise, names[k],
					   n ? cJSON_Duplicate(n, true) : cJSON_CreateNull()))
			goto fail;
	}
	for (int k = 0; k < 2; k++) {
		const struct calibration_cost *got = &c.cost[k];
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(rec, o) ||
		    !cJSON_AddStringToObject(o, "variant", names[k + 1]) ||
		    !cJSON_AddNumberToObject(o, "injected_us", got->injected_us) ||
		    !cJSON_AddNumberToObject(o, "recovered_us", got->recovered_us) ||
		    !cJSON_AddItemToObject(
			    o, "ci_us",
			    got->have_interval
				    ? cJSON_CreateDoubleArray((double[]){got->low_us, got->high_us}, 2)
				    : cJSON_CreateNull()) ||
		    !cJSON_AddNumberToObject(o, "ratio", got->ratio))
			goto fail;
		agree = agree &&
			fabs(got->recovered_us - got->injected_us) <= CALIBRATE_TOLERANCE * got->injected_us;
	}
	if (!cJSON_AddNumberToObject(r, "tolerance", CALIBRATE_TOLERANCE) ||
	    !cJSON_AddBoolToObject(r, "within_tolerance", agree) ||
	    !cJSON_AddItemToObject(
		    r, "measurement_noise",
		    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(
					    cJSON_GetObjectItemCaseSensitive(result, "measurement"), "noise"),
				    true)))
		goto fail;
	*ret = r;
	return 0;
fail:
	cJSON_Delete(r);
	return err_set(LL_ENOMEM, "Out of memory.");
}

static void print_report(const cJSON *r)
{
	const cJSON *o;

	printf("calibrate: family %s (%s), %g runs in %g rounds, %s\n",
	       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "family")),
	       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "runner")),
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "runs")),
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "rounds")),
	       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "paired"))
		       ? "paired by pass (median of per-pass differences)"
		       : "unpaired (difference of medians)");
	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(r, "recovered")) {
		const cJSON *ci = cJSON_GetObjectItemCaseSensitive(o, "ci_us");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(r, "noise"),
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "variant")));
		char interval[64] = "[no interval]";
		if (cJSON_IsArray(ci))
			snprintf(interval, sizeof(interval), "[%.1f, %.1f]",
				 cJSON_GetNumberValue(cJSON_GetArrayItem(ci, 0)),
				 cJSON_GetNumberValue(cJSON_GetArrayItem(ci, 1)));
		printf("  injected %8.0f us  recovered %9.1f us  %s  (%.1f %%)  other CPU %.1f %%, "
		       "flagged %g, retaken %g\n",
		       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "injected_us")),
		       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "recovered_us")), interval,
		       100.0 * cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "ratio")),
		       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(n, "other_cpu_pct")),
		       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(n, "flagged")),
		       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(n, "retaken")));
	}
	printf("  within %.0f %%: %s\n",
	       100.0 * cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "tolerance")),
	       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "within_tolerance")) ? "yes" : "no");
	fflush(stdout);
}

static bool quiet_progress(void *context, const char *phase, int percent)
{
	(void)context;
	(void)phase;
	(void)percent;
	return plat_stop_requested();
}

int cmd_calibrate(int argc, char **argv)
{
#ifdef _WIN32
	const char *family = "pe";
#else
	const char *family = "elf";
#endif
	const char *out_path = NULL;
	long delay = CALIBRATE_DELAY_US, runs = 0, rounds = 0;
	bool keep = false, wine;
	cJSON *submitted = NULL, *job = NULL, *result = NULL, *report = NULL;
	int rc, exit_code = 1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage_text, stdout);
			return 0;
		} else if (strcmp(a, "--keep") == 0) {
			keep = true;
			continue;
		} else if (!v) {
			return usage_error("an option without its value");
		} else if (strcmp(a, "--family") == 0 && (strcmp(v, "pe") == 0 || strcmp(v, "elf") == 0)) {
			family = v;
		} else if (strcmp(a, "--delay-us") == 0 &&
			   parse_int(v, 1, JOB_SPEC_MAX_DELAY_US / 2, &delay)) {
		} else if (strcmp(a, "--runs") == 0 && parse_int(v, 1, JOB_SPEC_MAX_WARM_RUNS, &runs)) {
		} else if (strcmp(a, "--rounds") == 0 && parse_int(v, 1, JOB_SPEC_MAX_ROUNDS, &rounds)) {
		} else if (strcmp(a, "--out") == 0) {
			out_path = v;
		} else {
			fprintf(stderr, "loadlab-agent calibrate: bad argument '%s %s'\n", a, v);
			return usage_error(
				"--family pe|elf, --delay-us 1..50000, --runs 1..1000, --rounds 1..20");
		}
		i++;
	}
	wine = strcmp(family, "pe") == 0 && (!plat_runs_windows_programs() || plat_under_wine());
	if (runs == 0)
		runs = wine ? CALIBRATE_WINE_RUNS : CALIBRATE_RUNS;
	if (rounds == 0) {
		rounds = wine ? CALIBRATE_WINE_ROUNDS : CALIBRATE_ROUNDS;
		rounds = rounds > runs ? runs : rounds;
	}
	if (rounds > runs)
		return usage_error("more rounds than runs");
	if (!(submitted = calibration_job(family, delay, runs, rounds)))
		return usage_error("out of memory");
	rc = job_spec_normalize(submitted, &job);
	cJSON_Delete(submitted);
	if (rc < 0) {
		fprintf(stderr, "loadlab-agent calibrate: %s\n", err_message(rc));
		return 2;
	}
	if ((rc = cmd_run_here("calibrate", job, 1, keep, quiet_progress, NULL, &result)) < 0 ||
	    (rc = report_json(result, family, delay, runs, rounds, &report)) < 0 ||
	    (out_path && (rc = cmd_write_json(out_path, report)) < 0))
		fprintf(stderr, "loadlab-agent calibrate: %s\n", err_message(rc));
	else {
		print_report(report);
		exit_code = 0;
	}
	cJSON_Delete(report);
	cJSON_Delete(result);
	cJSON_Delete(job);
	return exit_code;
}
