/* The cold-start collector (measure.h). */
#include "measure.h"

#include "loadlab/err.h"
#include "measure/plat_measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The per-run series of one program, each `runs` long. */
enum series {
	COLD_WALL,
	COLD_PAGE_FAULTS,
	COLD_HARD_FAULTS,
	COLD_SOFT_FAULTS,
	COLD_READ_BYTES,
	COLD_READ_OPS,
	COLD_READ_CHARS,
	COLD_RESIDENT_BEFORE,
	WARM_WALL,
	WARM_READ_BYTES,
	WARM_READ_OPS,
	WARM_PAGE_FAULTS,
	WARM_HARD_FAULTS,
	WARM_SOFT_FAULTS,
	SERIES_COUNT
};

static const char *const cold_names[] = {"samples_us", "page_faults", "hard_faults", "soft_faults",
					 "read_bytes", "read_ops",    "read_chars",  "resident_before_pages"};
static const char *const warm_names[] = {"samples_us",  "read_bytes",  "read_ops",
					 "page_faults", "hard_faults", "soft_faults"};

struct cold_state {
	size_t files;                          /* how many files the program names */
	double *series;                        /* [SERIES_COUNT][runs] */
	double *resident;                      /* [files][runs]: pages resident after each run */
	bool *cold_runs;                       /* [runs] */
	struct plat_measure_eviction eviction; /* the last one */
	char note[200];                        /* the first reason a run was not cold */
	char counters[160];
};

static size_t count_files(const char *const *files)
{
	size_t n = 0;
	while (files && files[n])
		n++;
	return n;
}

static void release(struct cold_state *s, size_t count)
{
	for (size_t i = 0; s && i < count; i++) {
		free(s[i].series);
		free(s[i].resident);
		free(s[i].cold_runs);
	}
	free(s);
}

static void put_counters(double *series, int runs, int run, enum series first,
			 const struct plat_measure_counters *k)
{
	long long values[] = {k->page_faults, k->hard_faults, k->soft_faults, k->read_bytes, k->read_ops};
	series[first * runs + run] = (double)k->wall_ns / 1000.0;
	if (first == COLD_WALL) {
		for (int i = 0; i < 5; i++)
			series[(COLD_PAGE_FAULTS + i) * runs + run] = (double)values[i];
		series[COLD_READ_CHARS * runs + run] = (double)k->read_chars;
	} else {
		series[WARM_READ_BYTES * runs + run] = (double)k->read_bytes;
		series[WARM_READ_OPS * runs + run] = (double)k->read_ops;
		series[WARM_PAGE_FAULTS * runs + run] = (double)k->page_faults;
		series[WARM_HARD_FAULTS * runs + run] = (double)k->hard_faults;
		series[WARM_SOFT_FAULTS * runs + run] = (double)k->soft_faults;
	}
}

struct cold_attempt {
	const struct measure_program *p;
	struct plat_measure_eviction eviction;
};

/* measure_run_rerunning()'s PREPARE for a cold run: evict P's files. */
static int evict(void *ctx)
{
	struct cold_attempt *a = ctx;

	return plat_measure_evict(a->p->files, &a->eviction);
}

/* One cold run of P (evict, run, residency) and its warm check; a program
 * that exits non-zero is retaken as measure_run_rerunning() says, a cold
 * run with a new eviction. */
static int cold_run(const struct measure_program *p, struct cold_state *s, const struct measure_options *o,
		    int run, cJSON *reruns, struct plat_measure_counters *ret_cold)
{
	struct cold_attempt a = {.p = p};
	struct plat_measure_counters k;
	const struct plat_measure_eviction *e = &a.eviction;
	bool cold;
	int rc;

	if ((rc = measure_run_rerunning(p, o, run, "cold", true, evict, &a, reruns, &k)) < 0)
		return rc;
	s->eviction = *e;
	cold = s->files > 0 && e->done && (!e->verified || e->resident_pages == 0);
	if (!cold && !s->note[0])
		snprintf(s->note, sizeof(s->note), "%s",
			 s->files == 0 ? "No files to evict."
			 : e->note[0]  ? e->note
				       : "The eviction failed.");
	s->cold_runs[run] = cold;
	s->series[COLD_RESIDENT_BEFORE * o->runs + run] = (double)e->resident_pages;
	put_counters(s->series, o->runs, run, COLD_WALL, &k);
	*ret_cold = k;
	for (size_t f = 0; f < s->files; f++) {
		long long resident = -1, pages;
		rc = plat_measure_residency(p->files[f], &resident, &pages);
		if (rc < 0 && rc != LL_EUNSUPPORTED)
			return rc;
		s->resident[f * (size_t)o->runs + (size_t)run] = (double)resident;
	}
	if ((rc = measure_run_rerunning(p, o, run, "warm check", true, NULL, NULL, reruns, &k)) < 0)
		return rc;
	put_counters(s->series, o->runs, run, WARM_WALL, &k);
	return 0;
}

/* The result object of program P. */
static int program_json(const struct measure_program *p, const struct cold_state *s,
			const struct measure_options *o, uint64_t seed, cJSON **ret)
{
	size_t runs = (size_t)o->runs;
	cJSON *j = cJSON_CreateObject(), *warm, *modules, *arr, *summary = NULL;
	bool all_cold = true;
	int rc = err_set(LL_ENOMEM, "Out of memory.");

	if (!j)
		return rc;
	for (size_t i = 0; i < sizeof(cold_names) / sizeof(cold_names[0]); i++)
		if (!measure_add_numbers(j, cold_names[i], s->series + i * runs, runs))
			goto fail;
	if (!(arr = cJSON_AddArrayToObject(j, "cold_runs")))
		goto fail;
	for (size_t r = 0; r < runs; r++) {
		cJSON *b = cJSON_CreateBool(s->cold_runs[r]);
		all_cold = all_cold && s->cold_runs[r];
		if (!b || !cJSON_AddItemToArray(arr, b)) {
			cJSON_Delete(b);
			goto fail;
		}
	}
	if (!cJSON_AddBoolToObject(j, "cold", all_cold) ||
	    !cJSON_AddStringToObject(j, "method", s->eviction.method) ||
	    !cJSON_AddBoolToObject(j, "eviction_verified", s->eviction.verified) ||
	    !cJSON_AddStringToObject(j, "note", s->note) ||
	    !cJSON_AddStringToObject(j, "counters", s->counters))
		goto fail;
	if ((rc = measure_summary_json(s->series + COLD_WALL * runs, runs, seed, &summary)) < 0)
		goto fail;
	if (!cJSON_AddItemToObject(j, "summary", summary)) {
		cJSON_Delete(summary);
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto fail;
	}
	rc = err_set(LL_ENOMEM, "Out of memory.");
	if (!(modules = cJSON_AddArrayToObject(j, "modules")))
		goto fail;
	for (size_t f = 0; f < s->files; f++) {
		cJSON *m = cJSON_CreateObject();
		long long resident, pages = -1;
		if (plat_measure_residency(p->files[f], &resident, &pages) < 0)
			pages = -1;
		if (!m || !cJSON_AddItemToArray(modules, m)) {
			cJSON_Delete(m);
			goto fail;
		}
		if (!cJSON_AddStringToObject(m, "name", p->files[f]) ||
		    !cJSON_AddNumberToObject(m, "pages", (double)pages) ||
		    !measure_add_numbers(m, "resident_pages", s->resident + f * runs, runs))
			goto fail;
	}
	if (!(warm = cJSON_AddObjectToObject(j, "warm_check")))
		goto fail;
	for (size_t i = 0; i < sizeof(warm_names) / sizeof(warm_names[0]); i++)
		if (!measure_add_numbers(warm, warm_names[i], s->series + (WARM_WALL + i) * runs, runs))
			goto fail;
	*ret = j;
	return 0;
fail:
	cJSON_Delete(j);
	return rc;
}

struct cold_run {
	const struct measure_program *programs;
	struct cold_state *states;
	const struct measure_options *o;
	cJSON *reruns;
	struct measure_counters counters;
};

/* measure_sample()'s run: program I into SLOT (never untimed here). */
static int cold_one(void *ctx, size_t i, long slot, double *ret_us)
{
	struct cold_run *c = ctx;
	struct plat_measure_counters k;
	int rc;

	if (slot < 0)
		return 0;
	if ((rc = cold_run(&c->programs[i], &c->states[i], c->o, (int)slot, c->reruns, &k)) < 0)
		return rc;
	measure_counters_put(&c->counters, i, (size_t)slot, &k);
	*ret_us = c->states[i].series[COLD_WALL * c->o->runs + slot];
	return 0;
}

int measure_cold(const struct measure_program *programs, size_t count, const struct measure_options *o,
		 cJSON **ret)
{
	struct plat_measure_conditions conditions;
	struct cold_state *states = NULL;
	struct cold_run run = {0};
	struct measure_sampled sampled = {0};
	cJSON *result = NULL, *method = NULL, *progs, *order_json, *reruns;
	bool all_cold = true, verified = true;
	int rc;

	if ((rc = measure_check(programs, count, o)) < 0)
		return rc;
	if (o->auto_runs)
		return err_set(LL_EINVAL, "Cold runs are not adaptive.");
	rc = err_set(LL_ENOMEM, "Out of memory.");
	states = calloc(count, sizeof(*states));
	result = cJSON_CreateObject();
	if (!states || !result || !(order_json = cJSON_AddArrayToObject(result, "order")) ||
	    !(reruns = cJSON_AddArrayToObject(result, "reruns")))
		goto out;
	for (size_t i = 0; i < count; i++) {
		struct cold_state *s = &states[i];
		s->files = count_files(programs[i].files);
		s->series = calloc((size_t)SERIES_COUNT * (size_t)o->runs, sizeof(double));
		s->resident = calloc((s->files ? s->files : 1) * (size_t)o->runs, sizeof(double));
		s->cold_runs = calloc((size_t)o->runs, sizeof(bool));
		if (!s->series || !s->resident || !s->cold_runs)
			goto out;
		plat_measure_counters_source(programs[i].spawn.argv[0], s->counters, sizeof(s->counters));
	}
	run = (struct cold_run){programs, states, o, reruns, {0}};
	if ((rc = measure_counters_init(&run.counters, count, (size_t)o->runs)) < 0)
		goto out;
	if ((rc = measure_sample(programs, count, o, false, &conditions, order_json, cold_one, &run,
				 &sampled)) < 0 ||
	    (rc = measure_noise_method_json(&sampled, result)) < 0)
		goto out;
	if (!(progs = cJSON_AddObjectToObject(result, "programs"))) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		cJSON *p = NULL;
		if ((rc = program_json(&programs[i], &states[i], o, o->seed + i, &p)) < 0)
			goto out;
		if ((rc = measure_sampled_json(&sampled, i, o, p)) < 0 ||
		    (rc = measure_counters_json(&run.counters, i, sampled.taken, p)) < 0) {
			cJSON_Delete(p);
			goto out;
		}
		if (!cJSON_AddItemToObject(progs, programs[i].name, p)) {
			cJSON_Delete(p);
			rc = err_set(LL_ENOMEM, "Out of memory.");
			goto out;
		}
		for (int r = 0; r < o->runs; r++)
			all_cold = all_cold && states[i].cold_runs[r];
		verified = verified && states[i].eviction.verified;
	}
	if ((rc = measure_add_method(result, &conditions, o, "cold", &method)) < 0)
		goto out;
	if (!cJSON_AddStringToObject(method, "eviction", states[0].eviction.method) ||
	    !cJSON_AddBoolToObject(method, "eviction_verified", verified) ||
	    !cJSON_AddStringToObject(method, "counters", states[0].counters) ||
	    !cJSON_AddBoolToObject(method, "counters_reliable", conditions.counters_reliable) ||
	    !cJSON_AddBoolToObject(method, "cold", all_cold)) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	if ((rc = measure_counters_method_json(&run.counters, sampled.taken, method)) < 0)
		goto out;
	*ret = result;
	result = NULL;
	rc = 0;
out:
	measure_sampled_release(&sampled);
	measure_counters_release(&run.counters);
	cJSON_Delete(result);
	release(states, count);
	return rc;
}
