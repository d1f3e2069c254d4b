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
 * from 3 rounds on), against the injected cost, and the noise the runs saw.
 * Over a job's 1,000 runs it takes consecutive jobs of the same programs
 * and pools their passes. Its intervals are one job's ("interval_scope":
 * "within-job"): what varies between calibrations enters those the daemon
 * keeps per agent (server/calibration.h). A text summary goes to stdout, the JSON to
 * --out. Exit 0 when the job ran (whatever it
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
/* A job takes at most JOB_SPEC_MAX_WARM_RUNS runs; calibrate takes more
 * as consecutive jobs of the same programs (each with its own shuffles),
 * at most this many, and pools their passes (each job's rounds stay
 * rounds). */
#define CALIBRATE_MAX_JOBS 5
#define CALIBRATE_MAX_RUNS (CALIBRATE_MAX_JOBS * JOB_SPEC_MAX_WARM_RUNS)
/* Under Wine (the pe family on Linux, or a Windows agent under Wine) a
 * start varies by far more: a run's own jitter, which pairing by pass
 * cannot remove, is about 170 us, so 1,000 paired runs leave the median
 * difference a standard error of 7-13 us, 4-6 % of 200 us (200 us within
 * +-10 % in 9 of 12 such calibrations on a noisy day). 3,000 runs in 15
 * rounds (three jobs, about 3 minutes) divide it by the square root of 3:
 * docs/agent.md, "Calibration", has the figures. */
#define CALIBRATE_WINE_RUNS 3000
#define CALIBRATE_WINE_ROUNDS 15
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
	"Wine). --runs 1..5000 (default 150; under Wine 3000) in --rounds 1..100\n"
	"(default 3, under Wine 15; at least one per job). Runs over 1000 are\n"
	"taken as consecutive jobs of at most 1000 runs, each in 1..20 rounds,\n"
	"whose passes are pooled.\n"
	"--out writes the JSON; --keep leaves the work folder. Exit 0 when the\n"
	"job ran, 1 when it failed, 2 for bad arguments.\n";

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

/* Appends FROM's number array KEY to INTO's. */
static bool append_numbers(cJSON *into, const cJSON *from, const char *key)
{
	cJSON *to = cJSON_GetObjectItemCaseSensitive(into, key);
	const cJSON *item;

	if (!cJSON_IsArray(to))
		return false;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(from, key)) {
		cJSON *copy = cJSON_CreateNumber(item->valuedouble);
		if (!cJSON_IsNumber(item) || !copy || !cJSON_AddItemToArray(to, copy)) {
			cJSON_Delete(copy);
			return false;
		}
	}
	return true;
}

/* INTO's number KEY set to VALUE (null when VALUE is NaN). */
static bool set_number(cJSON *into, const char *key, double value)
{
	cJSON *item = isnan(value) ? cJSON_CreateNull() : cJSON_CreateNumber(value);

	if (item && (cJSON_GetObjectItemCaseSensitive(into, key)
			     ? cJSON_ReplaceItemInObjectCaseSensitive(into, key, item)
			     : cJSON_AddItemToObject(into, key, item)))
		return true;
	cJSON_Delete(item);
	return false;
}

static double number_or_nan(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNumber(item) ? item->valuedouble : NAN;
}

/* Warm samples FROM (a later job's) appended to INTO: samples and round
 * sizes in order, runs, disk I/O and the flag counts added, the largest
 * other-CPU share kept. "other_cpu_pct" is a median over a job's runs,
 * which the jobs' medians cannot give for the pool: it becomes the largest
 * of them, which bounds the pooled median from above. */
static bool pool_warm(cJSON *into, const cJSON *from)
{
	cJSON *n = cJSON_GetObjectItemCaseSensitive(into, "noise");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(from, "noise");
	double a = number_or_nan(into, "runs"), b = number_or_nan(from, "runs");

	if (!(a >= 1 && b >= 1) || !append_numbers(into, from, "samples_us") ||
	    !append_numbers(into, from, "round_sizes") || !set_number(into, "runs", a + b))
		return false;
	if (!cJSON_IsObject(n) || !cJSON_IsObject(m))
		return true;
	return set_number(n, "other_cpu_pct",
			  fmax(number_or_nan(n, "other_cpu_pct"), number_or_nan(m, "other_cpu_pct"))) &&
	       set_number(
		       n, "max_other_cpu_pct",
		       fmax(number_or_nan(n, "max_other_cpu_pct"), number_or_nan(m, "max_other_cpu_pct"))) &&
	       set_number(n, "disk_ios", number_or_nan(n, "disk_ios") + number_or_nan(m, "disk_ios")) &&
	       set_number(n, "flagged", number_or_nan(n, "flagged") + number_or_nan(m, "flagged")) &&
	       set_number(n, "retaken", number_or_nan(n, "retaken") + number_or_nan(m, "retaken"));
}

/* POOLED (the first job's result) with MORE's passes appended, variant by
 * variant. Only what the calibration reads is pooled: the summaries and
 * the order stay the first job's, so POOLED is for calibration_from_result()
 * and this file's report alone. */
static int pool_result(cJSON *pooled, const cJSON *more)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(pooled, "variants")) {
		const cJSON *w = NULL, *u;
		cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(more, "variants"))
			if (strcmp(text_of(u, "name"), text_of(v, "name")) == 0)
				w = u;
		if (!w || !pool_warm(cJSON_GetObjectItemCaseSensitive(v, "warm"),
				     cJSON_GetObjectItemCaseSensitive(w, "warm")))
			return err_set(LL_EFORMAT, "The calibration jobs' samples of '%s' do not pool.",
				       text_of(v, "name"));
	}
	return 0;
}

/* The report of RESULT (calibration_from_result()'s figures): recovered
 * against injected, and the noise. */
static int report_json(const cJSON *result, const char *family, long delay, long jobs, cJSON **ret)
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
	    !cJSON_AddNumberToObject(r, "runs", (double)c.runs) ||
	    !cJSON_AddNumberToObject(r, "rounds", (double)c.rounds) ||
	    !cJSON_AddNumberToObject(r, "jobs", jobs) || !cJSON_AddBoolToObject(r, "paired", c.paired) ||
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
	/* One machine, no history: the daemon widens an agent's interval by
	 * what varies between its calibrations (server/calibration.h). */
	if (!cJSON_AddStringToObject(r, "interval_scope", "within-job") ||
	    !cJSON_AddNumberToObject(r, "tolerance", CALIBRATE_TOLERANCE) ||
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

	printf("calibrate: family %s (%s), %g runs in %g rounds (%g job%s), %s\n",
	       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "family")),
	       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "runner")),
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "runs")),
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "rounds")),
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "jobs")),
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "jobs")) == 1 ? "" : "s",
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
		printf("  injected %8.0f us  recovered %9.1f us  %s within-job  (%.1f %%)  other CPU %.1f "
		       "%%, "
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
	long delay = CALIBRATE_DELAY_US, runs = 0, rounds = 0, jobs;
	bool keep = false, wine;
	cJSON *submitted = NULL, *job = NULL, *cell = NULL, *result = NULL, *report = NULL;
	char number[24];
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
			return err_exit_usage("loadlab-agent calibrate", "an option without its value");
		} else if (strcmp(a, "--family") == 0 && (strcmp(v, "pe") == 0 || strcmp(v, "elf") == 0)) {
			family = v;
		} else if (strcmp(a, "--delay-us") == 0 &&
			   parse_int(v, 1, JOB_SPEC_MAX_DELAY_US / 2, &delay)) {
		} else if (strcmp(a, "--runs") == 0 && parse_int(v, 1, CALIBRATE_MAX_RUNS, &runs)) {
		} else if (strcmp(a, "--rounds") == 0 &&
			   parse_int(v, 1, CALIBRATE_MAX_JOBS * JOB_SPEC_MAX_ROUNDS, &rounds)) {
		} else if (strcmp(a, "--out") == 0) {
			out_path = v;
		} else {
			fprintf(stderr, "loadlab-agent calibrate: bad argument '%s %s'\n", a, v);
			return err_exit_usage(
				"loadlab-agent calibrate",
				"--family pe|elf, --delay-us 1..50000, --runs 1..5000, --rounds 1..100");
		}
		i++;
	}
	wine = strcmp(family, "pe") == 0 && (!plat_runs_windows_programs() || plat_under_wine());
	if (runs == 0)
		runs = wine ? CALIBRATE_WINE_RUNS : CALIBRATE_RUNS;
	jobs = (runs + JOB_SPEC_MAX_WARM_RUNS - 1) / JOB_SPEC_MAX_WARM_RUNS;
	if (rounds == 0) { /* the default, but at least one a job and at most one a run */
		rounds = wine ? CALIBRATE_WINE_ROUNDS : CALIBRATE_ROUNDS;
		rounds = rounds < jobs ? jobs : rounds;
		rounds = rounds > runs ? runs : rounds;
	}
	if (rounds > runs)
		return err_exit_usage("loadlab-agent calibrate", "more rounds than runs");
	if (rounds < jobs || rounds > jobs * JOB_SPEC_MAX_ROUNDS)
		return err_exit_usage("loadlab-agent calibrate",
				      "runs over 1000 are taken as jobs of at most 1000 runs, each in 1..20 "
				      "rounds: --rounds must be at least the jobs and at most 20 per job");
	rc = 0;
	for (long k = 0; k < jobs && rc == 0; k++) {
		/* Job K's share: the runs and rounds split as evenly as they go. */
		long job_runs = runs / jobs + (k < runs % jobs),
		     job_rounds = rounds / jobs + (k < rounds % jobs);
		cJSON *one = NULL;
		if (jobs > 1)
			fprintf(stderr, "loadlab-agent calibrate: job %ld of %ld, %ld runs in %ld rounds\n",
				k + 1, jobs, job_runs, job_rounds);
		if (!(submitted = calibration_job(family, delay, job_runs, job_rounds))) {
			rc = err_set(LL_ENOMEM, "Out of memory.");
			break;
		}
		rc = job_spec_normalize(submitted, &job);
		cJSON_Delete(submitted);
		if (rc < 0) {
			fprintf(stderr, "loadlab-agent calibrate: %s\n", err_message(rc));
			cJSON_Delete(result);
			return 2;
		}
		/* The cell seeds the shuffles: each job its own orders (one job
		 * keeps the empty cell). */
		snprintf(number, sizeof(number), "%ld", k + 1);
		if (jobs > 1 && (!(cell = cJSON_CreateObject()) ||
				 !cJSON_AddStringToObject(cell, "calibration_job", number)))
			rc = err_set(LL_ENOMEM, "Out of memory.");
		else if ((rc = cmd_run_here("calibrate", job, cell, 1, keep, quiet_progress, NULL,
					    result ? &one : &result)) == 0 &&
			 one)
			rc = pool_result(result, one);
		cJSON_Delete(cell);
		cell = NULL;
		cJSON_Delete(one);
		cJSON_Delete(job);
		job = NULL;
	}
	if (rc < 0 || (rc = report_json(result, family, delay, jobs, &report)) < 0 ||
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
