/*
 * pipeline.c - pipeline_run(): the driver of the experiment families
 * (family.h). Looks the job's family up in families[], calls its stages in
 * order, times what the family gives it (warm and cold runs through
 * measure/measure.h, the churn test through measure/churn.h) and builds
 * the result around the family's part of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "family/family.h"
#include "family/family_util.h"
#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "loadlab/stats.h"
#include "measure/churn.h"
#include "measure/loader_stats.h"
#include "measure/measure.h"

/* Per run: a generated program that hangs is killed after this long. */
#define PIPELINE_MEASURE_TIMEOUT_MS 60000
/* Reruns of a warm run whose program failed to start or exited non-zero. */
#define PIPELINE_MEASURE_RERUNS 2
/* Most DLL sets one churn measurement runs. */
#define PIPELINE_MAX_CHURN_SETS 8

/* The job's "measure" section: runs 0 where a kind is not asked for. */
struct pipeline_measure {
	int warm_runs, warmup, warm_rounds, warm_gap_ms; /* warm_runs: the cap when warm_auto */
	bool warm_auto;
	double precision;
	double precision_pct, max_seconds;       /* warm.precision_pct (0: not asked for), max_seconds */
	int cold_runs, cold_rounds, cold_gap_ms; /* *_gap_ms: round_gap_ms */
	int churn_processes;
	const cJSON *churn_sets; /* borrowed: measure.churn.dll_sets */
	int max_retakes;         /* measure.noise.max_retakes, as measure_options takes it */
};

/* One run's state beside the family's. */
struct pipeline_state {
	struct family_run run;
	const struct family *family;
	void *family_state;
	struct pipeline_measure measure;
	uint64_t seed;
	struct family_timing timing;
	cJSON *warm, *cold, *churn;
	cJSON *loader[MEASURE_MAX_PROGRAMS]; /* per timed program, loader_statistics only */
	/* The self-test's environment per timed program (set_delays). */
	const char **delay_env[MEASURE_MAX_PROGRAMS];
	char delay_text[MEASURE_MAX_PROGRAMS][48];
};

/* The family named by JOB, or LL_EUNSUPPORTED naming the ones there are. */
static int find_family(const cJSON *job, const struct family **ret)
{
	char have[256] = "";
	const char *name;
	size_t len = 0;
	int rc;

	if ((rc = json_get_string(job, "family", 16, true, NULL, &name)) < 0)
		return rc;
	for (const struct family *const *f = families; *f; f++) {
		if (strcmp((*f)->name, name) == 0 && (!(*f)->claims || (*f)->claims(job))) {
			*ret = *f;
			return 0;
		}
		int n = snprintf(have + len, sizeof(have) - len, "%s%s", len ? ", " : "", (*f)->name);
		if (n > 0 && (size_t)n < sizeof(have) - len)
			len += (size_t)n;
	}
	return err_set(LL_EUNSUPPORTED, "No family '%s' on this agent; it has: %s.", name, have);
}

/* SECTION's "rounds" and "round_gap_ms" (warm and cold alike), checked
 * again here as the server should have. */
static int read_rounds(const cJSON *section, int *ret_rounds, int *ret_gap_ms)
{
	long long rounds, gap;
	int rc;

	if ((rc = json_get_int(section, "rounds", 1, JOB_SPEC_MAX_ROUNDS, false, 1, &rounds)) < 0 ||
	    (rc = json_get_int(section, "round_gap_ms", JOB_SPEC_MIN_ROUND_GAP_MS, JOB_SPEC_MAX_ROUND_GAP_MS,
			       false, JOB_SPEC_DEFAULT_ROUND_GAP_MS, &gap)) < 0)
		return rc;
	*ret_rounds = (int)rounds;
	*ret_gap_ms = (int)gap;
	return 0;
}

static int read_measure(const cJSON *job, struct pipeline_measure *m)
{
	const cJSON *measure = cJSON_GetObjectItemCaseSensitive(job, "measure"), *item;
	long long value;
	int rc;

	memset(m, 0, sizeof(*m));
	if ((item = cJSON_GetObjectItemCaseSensitive(measure, "warm"))) {
		const cJSON *runs = cJSON_GetObjectItemCaseSensitive(item, "runs");
		m->warm_auto = cJSON_IsString(runs);
		if ((rc = json_get_int(item, m->warm_auto ? "max_runs" : "runs", 1,
				       m->warm_auto ? JOB_SPEC_MAX_AUTO_RUNS : JOB_SPEC_MAX_WARM_RUNS, false,
				       m->warm_auto ? JOB_SPEC_DEFAULT_AUTO_RUNS : 30, &value)) < 0)
			return rc;
		m->warm_runs = (int)value;
		runs = cJSON_GetObjectItemCaseSensitive(item, "precision");
		m->precision = cJSON_IsNumber(runs) ? runs->valuedouble : JOB_SPEC_DEFAULT_PRECISION;
		runs = cJSON_GetObjectItemCaseSensitive(item, "precision_pct");
		m->precision_pct = m->warm_auto && cJSON_IsNumber(runs) ? runs->valuedouble : 0;
		runs = cJSON_GetObjectItemCaseSensitive(item, "max_seconds");
		m->max_seconds = cJSON_IsNumber(runs) ? runs->valuedouble : JOB_SPEC_DEFAULT_MAX_SECONDS;
		if ((rc = read_rounds(item, &m->warm_rounds, &m->warm_gap_ms)) < 0)
			return rc;
		if ((rc = json_get_int(item, "warmup", 0, JOB_SPEC_MAX_WARMUP, false, 3, &value)) < 0)
			return rc;
		m->warmup = (int)value;
	}
	if ((item = cJSON_GetObjectItemCaseSensitive(measure, "cold"))) {
		if ((rc = json_get_int(item, "runs", 1, JOB_SPEC_MAX_COLD_RUNS, false, 10, &value)) < 0)
			return rc;
		m->cold_runs = (int)value;
		if ((rc = read_rounds(item, &m->cold_rounds, &m->cold_gap_ms)) < 0)
			return rc;
	}
	if ((item = cJSON_GetObjectItemCaseSensitive(measure, "noise"))) {
		if ((rc = json_get_int(item, "max_retakes", 0, JOB_SPEC_MAX_NOISE_RETAKES, true, 0, &value)) <
		    0)
			return rc;
		m->max_retakes = value == 0 ? MEASURE_NO_RETAKES : (int)value;
	}
	if ((item = cJSON_GetObjectItemCaseSensitive(measure, "churn"))) {
		if ((rc = json_get_int(item, "processes", 1, JOB_SPEC_MAX_CHURN_PROCESSES, false, 1000,
				       &value)) < 0)
			return rc;
		m->churn_processes = (int)value;
		m->churn_sets = cJSON_GetObjectItemCaseSensitive(item, "dll_sets");
	}
	return 0;
}

/* The seed of the timer's shuffles and bootstrap: FNV-1a of the cell, so
 * jobs in one cell are shuffled alike and a rerun, or a job compared with
 * another in the same cell, meets the same orders (`loadlab-agent
 * calibrate` gives its consecutive jobs distinct cells). */
static uint64_t seed_of(const struct pipeline_task *task)
{
	char *text = cJSON_PrintUnformatted(task->cell);
	uint64_t h = stats_seed_of(text ? text : "");

	free(text);
	return h;
}

struct measure_progress {
	const struct pipeline_task *task;
	const char *phase;
};

/* The timer's and the churn's progress: true when the task was cancelled. */
static bool measure_progress(void *context, int percent)
{
	struct measure_progress *p = context;

	return family_progress(p->task, p->phase, percent) < 0;
}

/* Warm (when asked), then cold (when asked) runs of the family's programs. */
static int time_programs(struct pipeline_state *s)
{
	struct measure_progress progress = {s->run.task, "warm"};
	struct measure_options o = {
		.runs = s->measure.warm_runs,
		.warmup = s->measure.warmup,
		.seed = s->seed,
		.timeout_ms = s->timing.timeout_ms > 0 ? s->timing.timeout_ms : PIPELINE_MEASURE_TIMEOUT_MS,
		.progress = measure_progress,
		.progress_ctx = &progress,
		/* The generated programs always exit 0; under Wine on a busy
		 * machine a start fails now and then: run it again, listed (a
		 * cold run with a new eviction). */
		.reruns = PIPELINE_MEASURE_RERUNS,
		.rounds = s->measure.warm_rounds,
		.round_gap_ms = s->measure.warm_gap_ms,
		.max_retakes = s->measure.max_retakes,
		.auto_runs = s->measure.warm_auto,
		.companion_pid = s->timing.companion_pid,
		/* precision_pct: the variants against the first; the floor
		 * (the last program) is timed, not judged. */
		.paired_precision = s->measure.precision_pct / 100,
		.precision =
			s->measure.precision_pct > 0 ? s->measure.precision_pct / 100 : s->measure.precision,
		.max_seconds = s->measure.max_seconds,
		.paired_count = s->timing.count > 1 ? s->timing.count - 1 : 1,
	};
	int rc;

	if (s->measure.warm_runs > 0 &&
	    (rc = measure_warm(s->timing.programs, s->timing.count, &o, &s->warm)) < 0)
		return rc;
	if (s->measure.cold_runs > 0) {
		progress.phase = "cold";
		o.runs = s->measure.cold_runs;
		o.warmup = 0;
		o.rounds = s->measure.cold_rounds;
		o.round_gap_ms = s->measure.cold_gap_ms;
		o.auto_runs = false;
		o.paired_precision = 0;
		if ((rc = measure_cold(s->timing.programs, s->timing.count, &o, &s->cold)) < 0)
			return rc;
	}
	return 0;
}

/* The loader's own work, once per timed program (family_timing's
 * loader_statistics): an untimed run with LD_DEBUG=statistics, after the
 * timed ones so that it never disturbs them. */
static int loader_statistics(struct pipeline_state *s)
{
	char dir[PLAT_MAX_PATH + 1], name[32];
	long long timeout = s->timing.timeout_ms > 0 ? s->timing.timeout_ms : PIPELINE_MEASURE_TIMEOUT_MS;
	int rc;

	for (size_t i = 0; i < s->timing.count; i++) {
		snprintf(name, sizeof(name), "ld-stats/%zu", i);
		if ((rc = family_progress(s->run.task, "loader", (int)(100 * i / s->timing.count))) < 0 ||
		    (rc = family_path(dir, s->run.work, name)) < 0 ||
		    (rc = loader_stats_take(&s->timing.programs[i], dir, timeout, &s->loader[i])) < 0)
			return rc;
	}
	return 0;
}

/* Adds each program's "loader" to its variant in RESULT (by name) or to
 * the floor (the last program); the objects move into RESULT. */
static int add_loader(struct pipeline_state *s, cJSON *result)
{
	cJSON *v;

	for (size_t i = 0; i < s->timing.count; i++) {
		cJSON *target = NULL;
		if (!s->loader[i])
			continue;
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(result, "variants")) {
			const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "name"));
			if (!target && name && strcmp(name, s->timing.programs[i].name) == 0)
				target = v;
		}
		if (!target && i + 1 == s->timing.count)
			target = cJSON_GetObjectItemCaseSensitive(result, "floor");
		if (!cJSON_IsObject(target) || cJSON_HasObjectItem(target, "loader"))
			continue;
		if (!cJSON_AddItemToObject(target, "loader", s->loader[i]))
			return LL_ENOMEM;
		s->loader[i] = NULL;
	}
	return 0;
}

/* The churn test for every DLL set the job names, in its own folder. */
static int churn(struct pipeline_state *s)
{
	struct measure_progress progress = {s->run.task, "churn"};
	const char *sets[PIPELINE_MAX_CHURN_SETS + 1] = {NULL};
	char work[PLAT_MAX_PATH + 1];
	struct churn_options o = {
		.processes = s->measure.churn_processes,
		.work_dir = work,
		.timeout_ms = 0,
		.generated_libs = s->timing.churn_libs,
		.wine = s->timing.churn_wine,
		.progress = measure_progress,
		.progress_ctx = &progress,
	};
	static const char *const no_libs[] = {NULL};
	const cJSON *set;
	size_t n = 0;
	int rc;

	if (!o.generated_libs)
		o.generated_libs = no_libs;
	cJSON_ArrayForEach(set, s->measure.churn_sets)
		if (cJSON_IsString(set) && n < PIPELINE_MAX_CHURN_SETS)
			sets[n++] = set->valuestring;
	if ((rc = family_path(work, s->run.work, "churn")) < 0 || (rc = plat_mkdirs(work)) < 0)
		return rc;
	return churn_run_sets(&o, sets, &s->churn);
}

/* The known-effect self-test: in a job where a variant has delay_us
 * (job_spec_has_delay), every timed program gets LOADLAB_DELAY_US, its
 * variant's delay_us or 0 (the floor, variants without one), beside the
 * family's environment; the generated first library's entry point waits
 * that long. */
static int set_delays(struct pipeline_state *s)
{
	if (!job_spec_has_delay(s->run.job))
		return 0;
	for (size_t i = 0; i < s->timing.count; i++) {
		struct plat_spawn_options *spawn = &s->timing.programs[i].spawn;
		const cJSON *v, *delay = NULL;
		size_t n = 0;
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(s->run.job, "variants"))
			if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(v, "name")) &&
			    strcmp(cJSON_GetObjectItemCaseSensitive(v, "name")->valuestring,
				   s->timing.programs[i].name) == 0)
				delay = cJSON_GetObjectItemCaseSensitive(v, "delay_us");
		snprintf(s->delay_text[i], sizeof(s->delay_text[i]), "LOADLAB_DELAY_US=%d",
			 cJSON_IsNumber(delay) ? (int)delay->valuedouble : 0);
		while (spawn->env_add && spawn->env_add[n])
			n++;
		if (!(s->delay_env[i] = calloc(n + 2, sizeof(char *))))
			return LL_ENOMEM;
		for (size_t k = 0; k < n; k++)
			s->delay_env[i][k] = spawn->env_add[k];
		s->delay_env[i][n] = s->delay_text[i];
		spawn->env_add = s->delay_env[i];
	}
	return 0;
}

/* One stage of the family: progress at its start, its phase at its end. */
static int stage(struct pipeline_state *s, const char *name, int (*fn)(struct family_run *, void *))
{
	int rc;

	if ((rc = family_progress(s->run.task, name, 0)) < 0 || (rc = fn(&s->run, s->family_state)) < 0)
		return rc;
	return family_phase_done(&s->run, name);
}

static int stages(struct pipeline_state *s)
{
	const struct family *f = s->family;
	int rc;

	if ((rc = stage(s, "generate", f->generate)) < 0 || (rc = stage(s, "build", f->build)) < 0 ||
	    (rc = stage(s, "transform", f->transform)) < 0)
		return rc;
	/* A build task describes what it built: nothing is verified or timed
	 * on the builder. */
	if (s->run.task->build_only)
		return family_progress(s->run.task, "report", 100);
	if ((rc = stage(s, "verify", f->verify)) < 0 ||
	    (rc = f->timing(&s->run, s->family_state, &s->timing)) < 0 || (rc = set_delays(s)) < 0)
		return rc;
	if ((s->measure.warm_runs > 0 || s->measure.cold_runs > 0) &&
	    ((rc = time_programs(s)) < 0 || (rc = family_phase_done(&s->run, "measure")) < 0))
		return rc;
	if (s->timing.loader_statistics && (s->measure.warm_runs > 0 || s->measure.cold_runs > 0) &&
	    ((rc = loader_statistics(s)) < 0 || (rc = family_phase_done(&s->run, "loader")) < 0))
		return rc;
	if (s->measure.churn_processes > 0 &&
	    ((rc = churn(s)) < 0 || (rc = family_phase_done(&s->run, "churn")) < 0))
		return rc;
	return family_progress(s->run.task, "report", 100);
}

/* facts, cell and family; the family's part; churn and phases_ms. */
static int result_json(struct pipeline_state *s, cJSON **ret)
{
	const struct pipeline_task *task = s->run.task;
	struct family_measured measured = {s->warm, s->cold};
	cJSON *r = cJSON_CreateObject(), *item;
	int rc = LL_ENOMEM;

	if (!r)
		return LL_ENOMEM;
	item = task->facts ? cJSON_Duplicate(task->facts, true) : cJSON_CreateObject();
	if (!item || !cJSON_AddItemToObject(r, "facts", item))
		goto fail_item;
	item = task->cell ? cJSON_Duplicate(task->cell, true) : cJSON_CreateObject();
	if (!item || !cJSON_AddItemToObject(r, "cell", item))
		goto fail_item;
	if (!cJSON_AddStringToObject(r, "family", s->family->name))
		goto out;
	if (task->build_only &&
	    (!cJSON_AddStringToObject(r, "kind", "build") ||
	     !cJSON_AddItemToObject(r, "target",
				    task->cell ? cJSON_Duplicate(task->cell, true) : cJSON_CreateObject())))
		goto out;
	if ((rc = s->family->describe(&s->run, s->family_state, &measured, r)) < 0 ||
	    (rc = add_loader(s, r)) < 0)
		goto out;
	rc = LL_ENOMEM;
	/* How the noise was read: the timer's, at the top of "measurement". */
	item = cJSON_GetObjectItemCaseSensitive(s->warm ? s->warm : s->cold, "noise");
	if (item && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r, "measurement")) &&
	    !cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(r, "measurement"), "noise",
				   cJSON_Duplicate(item, true)))
		goto out;
	if (s->churn) {
		if (!cJSON_AddItemToObject(r, "churn", s->churn))
			goto out;
		s->churn = NULL;
	}
	if (!cJSON_AddItemToObject(r, "phases_ms", s->run.phases))
		goto out;
	s->run.phases = NULL;
	*ret = r;
	return 0;
fail_item:
	cJSON_Delete(item);
out:
	cJSON_Delete(r);
	return rc;
}

int pipeline_run(const struct pipeline_task *task, cJSON **ret_result)
{
	struct pipeline_state *s = calloc(1, sizeof(*s));
	cJSON *normalized = NULL;
	int rc;

	if (!s)
		return LL_ENOMEM;
	s->run.task = task;
	s->run.work = task->work_dir;
	s->run.phase_start = clock_monotonic_us();
	if (!task->work_dir || !task->work_dir[0] || strlen(task->work_dir) > PLAT_MAX_PATH - 200) {
		rc = err_set(LL_EINVAL, "The work folder's path is empty or too long.");
		goto out;
	}
	/* The job's bounds again, on this side of the wire. */
	if ((rc = job_spec_normalize(task->job, &normalized)) < 0 ||
	    (rc = find_family(normalized, &s->family)) < 0)
		goto out;
	s->run.job = normalized;
	if ((rc = s->family->validate(&s->run, &s->family_state)) < 0 ||
	    (rc = read_measure(normalized, &s->measure)) < 0)
		goto out;
	s->seed = seed_of(task);
	if (!(s->run.phases = cJSON_CreateObject())) {
		rc = LL_ENOMEM;
		goto out;
	}
	if ((rc = stages(s)) < 0)
		goto out;
	rc = result_json(s, ret_result);
out:
	if (rc < 0)
		log_event(LOG_WARN, "pipeline_failed", "message", err_message(rc), NULL);
	if (s->family)
		s->family->release(s->family_state);
	cJSON_Delete(s->run.phases);
	cJSON_Delete(s->warm);
	cJSON_Delete(s->cold);
	cJSON_Delete(s->churn);
	cJSON_Delete(normalized);
	for (size_t i = 0; i < MEASURE_MAX_PROGRAMS; i++) {
		free(s->delay_env[i]);
		cJSON_Delete(s->loader[i]);
	}
	free(s);
	return rc;
}
