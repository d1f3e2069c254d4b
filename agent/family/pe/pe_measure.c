/*
 * pe_measure.c - times the pe pipeline's variants with the load timer
 * (measure.h): every valid variant and the empty program (the floor), warm
 * in a shuffled round-robin and, when the job asks, cold; the figures are
 * kept in the context for the result (pipeline.c).
 */
#include "measure/churn.h"
#include "measure/measure.h"
#include "pe_family.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per run: a generated program that hangs is killed after this long. */
#define PE_MEASURE_TIMEOUT_MS 60000
/* Reruns of a warm run whose program failed to start or exited non-zero. */
#define PE_MEASURE_RERUNS 2

struct pe_measured {
	const char *argv[3];
	char exe[PLAT_MAX_PATH + 1];
	char **files;            /* exe + DLLs, NULL-terminated */
};

struct pe_measure_progress {
	const struct pe_context *ctx;
	const char *phase;
};

/* The timer's and the churn's progress: true when the task was cancelled. */
static bool measure_progress(void *context, int percent)
{
	struct pe_measure_progress *p = context;

	return pe_progress(p->ctx, p->phase, percent) < 0;
}

static void measured_release(struct pe_measured *m)
{
	for (size_t i = 0; m->files && m->files[i]; i++)
		free(m->files[i]);
	free(m->files);
	m->files = NULL;
}

/* The spawn options and file list of the program in DIR (main.exe and
 * lt0.dll.. when not EMPTY, else empty.exe), started as pe_runner_run()
 * starts it. */
static int measured_init(const struct pe_context *ctx, const char *dir, bool empty,
			 struct pe_measured *m, struct measure_program *p)
{
	size_t n = 0, count = empty ? 1 : (size_t)ctx->dlls + 1;
	int rc;

	if ((rc = pe_path(m->exe, dir, empty ? "empty.exe" : "main.exe")) < 0)
		return rc;
	if (!(m->files = calloc(count + 1, sizeof(*m->files))) || !(m->files[0] = strdup(m->exe)))
		return LL_ENOMEM;
	for (int i = 0; !empty && i < ctx->dlls; i++) {
		char name[32], path[PLAT_MAX_PATH + 1];
		snprintf(name, sizeof(name), "lt%d.dll", i);
		if ((rc = pe_path(path, dir, name)) < 0)
			return rc;
		if (!(m->files[++n] = strdup(path)))
			return LL_ENOMEM;
	}
	n = 0;
	if (ctx->runner.through_wine64)
		m->argv[n++] = ctx->runner.wine64;
	m->argv[n++] = m->exe;
	m->argv[n] = NULL;
	p->spawn.argv = m->argv;
	p->spawn.env_add = ctx->runner.through_wine64 ? ctx->runner.env : NULL;
	p->spawn.cwd = dir;
	p->files = (const char *const *)m->files;
	return 0;
}

int pe_measure(struct pe_context *ctx)
{
	struct measure_program programs[MEASURE_MAX_PROGRAMS];
	struct pe_measured measured[MEASURE_MAX_PROGRAMS];
	struct pe_measure_progress progress = {ctx, "warm"};
	struct measure_options o = {
		.runs = ctx->warm_runs, .warmup = ctx->warmup, .seed = ctx->seed,
		.timeout_ms = PE_MEASURE_TIMEOUT_MS, .progress = measure_progress,
		.progress_ctx = &progress,
		/* The generated programs always exit 0; under Wine on a busy
		 * machine a start fails now and then: run it again, listed. */
		.reruns = PE_MEASURE_RERUNS,
	};
	char empty_dir[PLAT_MAX_PATH + 1];
	size_t count = 0;
	int rc = 0;

	memset(programs, 0, sizeof(programs));
	memset(measured, 0, sizeof(measured));
	for (size_t v = 0; v < ctx->variant_count && rc == 0; v++) {
		if (!ctx->variants[v].valid)
			continue;
		if (count + 1 >= MEASURE_MAX_PROGRAMS) {
			rc = err_set(LL_ETOOBIG, "At most %d variants can be timed together.", MEASURE_MAX_PROGRAMS - 1);
			break;
		}
		programs[count].name = ctx->variants[v].name;
		rc = measured_init(ctx, ctx->variants[v].dir, false, &measured[count], &programs[count]);
		count++;
	}
	if (rc == 0 && (rc = pe_path(empty_dir, ctx->work, "empty")) == 0) {
		programs[count].name = PE_FLOOR_NAME;
		rc = measured_init(ctx, empty_dir, true, &measured[count], &programs[count]);
		count++;
	}
	if (rc == 0 && ctx->warm_runs > 0)
		rc = measure_warm(programs, count, &o, &ctx->warm);
	if (rc == 0 && ctx->cold_runs > 0) {
		progress.phase = "cold";
		o.runs = ctx->cold_runs;
		o.warmup = 0;
		o.reruns = 0; /* a rerun would no longer be cold */
		rc = measure_cold(programs, count, &o, &ctx->cold);
	}
	for (size_t i = 0; i < count; i++)
		measured_release(&measured[i]);
	return rc;
}

int pe_churn(struct pe_context *ctx)
{
	struct pe_measure_progress progress = {ctx, "churn"};
	const char *sets[9] = {NULL};
	char *libs[CHURN_MAX_LIBS + 1] = {NULL};
	char work[PLAT_MAX_PATH + 1];
	struct churn_options o = {
		.processes = ctx->churn_processes, .work_dir = work, .timeout_ms = 0,
		.wine = ctx->runner.through_wine64, .progress = measure_progress,
		.progress_ctx = &progress,
	};
	const cJSON *set;
	size_t n = 0;
	int rc;

	cJSON_ArrayForEach(set, ctx->churn_sets)
		if (cJSON_IsString(set) && n < 8)
			sets[n++] = set->valuestring;
	if ((rc = pe_path(work, ctx->work, "churn")) < 0 || (rc = plat_mkdirs(work)) < 0)
		return rc;
	/* "generated": the DLLs of the first variant that proved valid. */
	for (size_t v = 0; v < ctx->variant_count; v++) {
		if (!ctx->variants[v].valid)
			continue;
		for (int i = 0; i < ctx->dlls && i < CHURN_MAX_LIBS && rc == 0; i++) {
			char name[32], path[PLAT_MAX_PATH + 1];
			snprintf(name, sizeof(name), "lt%d.dll", i);
			if ((rc = pe_path(path, ctx->variants[v].dir, name)) == 0 && !(libs[i] = strdup(path)))
				rc = LL_ENOMEM;
		}
		break;
	}
	o.generated_libs = (const char *const *)libs;
	if (rc == 0)
		rc = churn_run_sets(&o, sets, &ctx->churn);
	for (size_t i = 0; libs[i]; i++)
		free(libs[i]);
	return rc;
}
