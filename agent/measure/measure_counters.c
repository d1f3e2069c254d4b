/*
 * measure_counters.c - the run counters beside every timed run's time
 * (measure.h's "run_counters"): kept per program and run, then written
 * as counted series, and what was not counted named with its reason.
 */
#include "measure/measure.h"

#include "loadlab/err.h"
#include "measure/plat_measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int measure_counters_init(struct measure_counters *c, size_t programs, size_t capacity)
{
	size_t n = programs * capacity * PLAT_COUNTER_COUNT;

	memset(c, 0, sizeof(*c));
	if (!(c->values = malloc((n ? n : 1) * sizeof(double))))
		return err_set(LL_ENOMEM, "Out of memory.");
	for (size_t i = 0; i < n; i++)
		c->values[i] = -1;
	c->programs = programs;
	c->capacity = capacity;
	return 0;
}

void measure_counters_release(struct measure_counters *c)
{
	free(c->values);
	memset(c, 0, sizeof(*c));
}

static double *series(const struct measure_counters *c, size_t program, int counter)
{
	return c->values + (program * PLAT_COUNTER_COUNT + (size_t)counter) * c->capacity;
}

void measure_counters_put(struct measure_counters *c, size_t program, size_t slot,
			  const struct plat_measure_counters *k)
{
	if (!c->values || program >= c->programs || slot >= c->capacity)
		return;
	for (int i = 0; i < PLAT_COUNTER_COUNT; i++)
		series(c, program, i)[slot] = plat_measure_run_counter(k, (enum plat_measure_run_counter)i);
}

/* True when PROGRAM's first TAKEN runs all counted COUNTER. */
static bool counted(const struct measure_counters *c, size_t program, int counter, size_t taken)
{
	const double *x = series(c, program, counter);

	if (taken == 0)
		return false;
	for (size_t k = 0; k < taken; k++)
		if (x[k] < 0)
			return false;
	return true;
}

/* Adds to OBJ "counters": [names] and "not_counted": {name: why}; a
 * counter is counted when every run of every program in [FIRST, LAST)
 * counted it. */
static bool add_lists(const struct measure_counters *c, size_t first, size_t last, size_t taken, cJSON *obj)
{
	cJSON *names = cJSON_AddArrayToObject(obj, "counters");
	cJSON *missing = cJSON_AddObjectToObject(obj, "not_counted");

	if (!names || !missing)
		return false;
	for (int i = 0; i < PLAT_COUNTER_COUNT; i++) {
		const char *name = plat_measure_run_counter_names[i];
		bool all = first < last;
		char why[256];
		for (size_t p = first; all && p < last; p++)
			all = counted(c, p, i, taken);
		if (all) {
			cJSON *v = cJSON_CreateString(name);
			if (!v || !cJSON_AddItemToArray(names, v)) {
				cJSON_Delete(v);
				return false;
			}
			continue;
		}
		plat_measure_run_counter_why_not((enum plat_measure_run_counter)i, why, sizeof(why));
		if (!cJSON_AddStringToObject(missing, name, why[0] ? why : "not counted in every run"))
			return false;
	}
	return true;
}

int measure_counters_json(const struct measure_counters *c, size_t program, size_t taken, cJSON *obj)
{
	cJSON *rc = cJSON_AddObjectToObject(obj, "run_counters");

	if (!rc || !add_lists(c, program, program + 1, taken, rc))
		return err_set(LL_ENOMEM, "Out of memory.");
	for (int i = 0; i < PLAT_COUNTER_COUNT; i++)
		if (counted(c, program, i, taken) &&
		    !measure_add_numbers(rc, plat_measure_run_counter_names[i], series(c, program, i), taken))
			return err_set(LL_ENOMEM, "Out of memory.");
	return 0;
}

int measure_counters_method_json(const struct measure_counters *c, size_t taken, cJSON *method)
{
	cJSON *rc = cJSON_AddObjectToObject(method, "run_counters");
	char source[256];

	plat_measure_run_counters_source(source, sizeof(source));
	if (!rc || !cJSON_AddStringToObject(rc, "source", source) || !add_lists(c, 0, c->programs, taken, rc))
		return err_set(LL_ENOMEM, "Out of memory.");
	return 0;
}
