/*
 * measure_sample.c - measure_sample(): the passes, rounds, noise and
 * adaptive stop both timers share (measure.h).
 */
#include "measure/measure.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/stats.h"
#include "measure/plat_measure.h"
#include "measure/plat_noise.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Readings kept to find a run's window start (one per run). */
#define RING 2048

struct sampler {
	const struct measure_program *programs;
	size_t count;
	const struct measure_options *o;
	int (*run)(void *ctx, size_t program, long slot, double *ret_us);
	void *ctx;
	struct measure_sampled *s;
	struct plat_noise noise;
	struct plat_noise_reading ring[RING];
	size_t ring_next, ring_count;
	size_t *order;
	uint64_t state;
	cJSON *order_json;
};

static void ring_push(struct sampler *w, const struct plat_noise_reading *r)
{
	w->ring[w->ring_next] = *r;
	w->ring_next = (w->ring_next + 1) % RING;
	if (w->ring_count < RING)
		w->ring_count++;
}

/* The newest reading at least the window before END; the oldest kept
 * when none is that old. */
static const struct plat_noise_reading *window_start(const struct sampler *w, long long end_ns)
{
	const struct plat_noise_reading *oldest = NULL;

	for (size_t k = 1; k <= w->ring_count; k++) {
		const struct plat_noise_reading *r = &w->ring[(w->ring_next + RING - k) % RING];
		if (end_ns - r->at_ns >= MEASURE_NOISE_WINDOW_MS * 1000000LL)
			return r;
		oldest = r;
	}
	return oldest;
}

/* Program I into SLOT (or untimed, SLOT -1), taken again while others
 * were busy beyond the threshold and retakes are left. */
static int run_one(struct sampler *w, size_t i, long slot)
{
	struct measure_sampled *s = w->s;
	size_t at = i * s->capacity + (size_t)slot;
	int rc;

	for (;;) {
		struct plat_noise_reading before, after;
		bool noise = s->noise_ok && slot >= 0 && plat_noise_read(&w->noise, &before) == 0;
		double us = 0, pct;
		if (noise)
			ring_push(w, &before);
		if ((rc = w->run(w->ctx, i, slot, &us)) < 0)
			return rc;
		if (slot < 0)
			return 0;
		s->samples_us[at] = us;
		s->other_cpu_pct[at] = -1;
		s->disk_ios[at] = -1;
		if (!noise || plat_noise_read(&w->noise, &after) < 0)
			return 0;
		const struct plat_noise_reading *from = window_start(w, after.at_ns);
		double seconds = (double)(after.at_ns - from->at_ns) / 1e9;
		double other = (after.busy_cpu_s - from->busy_cpu_s) - (after.ours_cpu_s - from->ours_cpu_s);
		pct = seconds > 0 ? 100.0 * (other > 0 ? other : 0) / seconds : 0;
		s->other_cpu_pct[at] = pct;
		if (before.disk_ios >= 0 && after.disk_ios >= 0)
			s->disk_ios[at] = (double)(after.disk_ios - before.disk_ios);
		if (pct <= MEASURE_NOISE_THRESHOLD_PCT)
			return 0;
		s->flagged[i]++;
		if (s->retaken[i] >= s->max_retakes)
			return 0;
		s->retaken[i]++;
		/* The retake's window then holds the pause, not the burst. */
		plat_sleep_ms(MEASURE_NOISE_WINDOW_MS);
	}
}

/* One pass: every program once in a new shuffle, into SLOT (-1 untimed). */
static int pass(struct sampler *w, long slot)
{
	cJSON *names = NULL;
	int rc;

	measure_shuffle(w->order, w->count, &w->state);
	if (slot >= 0 && (!(names = cJSON_CreateArray()) || !cJSON_AddItemToArray(w->order_json, names))) {
		cJSON_Delete(names);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	for (size_t k = 0; k < w->count; k++) {
		cJSON *name;
		if ((rc = run_one(w, w->order[k], slot)) < 0)
			return rc;
		if (!names)
			continue;
		if (!(name = cJSON_CreateString(w->programs[w->order[k]].name)) ||
		    !cJSON_AddItemToArray(names, name)) {
			cJSON_Delete(name);
			return err_set(LL_ENOMEM, "Out of memory.");
		}
	}
	return 0;
}

static int progress(const struct sampler *w, size_t done, size_t total)
{
	const struct measure_options *o = w->o;

	if (o->progress && o->progress(o->progress_ctx, (int)(100 * done / (total ? total : 1))))
		return err_set(LL_ESTATE, "The measurement was cancelled.");
	return 0;
}

/* A round of N passes: after the gap (and an untimed pass) unless first. */
static int round_of(struct sampler *w, size_t n, bool with_warmup)
{
	struct measure_sampled *s = w->s;
	int rc;

	if (s->rounds > 0) {
		plat_sleep_ms(measure_round_gap_ms(w->o));
		if (with_warmup && w->o->warmup > 0 && (rc = pass(w, -1)) < 0)
			return rc;
	}
	for (size_t k = 0; k < n; k++) {
		if ((rc = progress(w, s->taken, s->capacity)) < 0 || (rc = pass(w, (long)s->taken)) < 0)
			return rc;
		s->taken++;
	}
	s->round_sizes[s->rounds++] = n;
	return 0;
}

/* True when every program's median has a 95 % interval narrower than
 * o->precision times the median. */
static int precise_enough(const struct sampler *w, bool *ret)
{
	const struct measure_sampled *s = w->s;
	int rc;

	*ret = true;
	for (size_t i = 0; i < s->count && *ret; i++) {
		const double *x = s->samples_us + i * s->capacity;
		double median, lo, hi;
		if ((rc = stats_median(x, s->taken, &median)) < 0 ||
		    (rc = stats_bootstrap_ci(x, s->taken, STATS_MEDIAN, 0.95, MEASURE_BOOTSTRAP_RESAMPLES,
					     w->o->seed + i, &lo, &hi)) < 0)
			return rc;
		*ret = hi - lo < w->o->precision * median;
	}
	return 0;
}

/* True when every variant's paired interval against the baseline
 * (measure.h, paired_precision) is within +-o->paired_precision; fills
 * s->paired_ci. With one variant there is nothing to judge: true. */
static int paired_enough(const struct sampler *w, bool *ret)
{
	const struct measure_sampled *s = w->s;
	const double *base = s->samples_us;
	double *ratios = malloc(sizeof(double) * (s->taken ? s->taken : 1));
	int rc = 0;

	if (!ratios)
		return err_set(LL_ENOMEM, "Out of memory.");
	*ret = true;
	for (size_t i = 1; i < w->o->paired_count; i++) {
		const double *x = s->samples_us + i * s->capacity;
		double lo, hi;
		for (size_t k = 0; k < s->taken; k++)
			ratios[k] = base[k] > 0 ? x[k] / base[k] : 1;
		if ((rc = stats_bootstrap_ci(ratios, s->taken, STATS_MEDIAN, 0.95,
					     MEASURE_BOOTSTRAP_RESAMPLES, w->o->seed + 7919 * i, &lo, &hi)) <
		    0)
			break;
		s->paired_ci[2 * i] = lo;
		s->paired_ci[2 * i + 1] = hi;
		if ((hi - lo) / 2 > w->o->paired_precision)
			*ret = false;
	}
	free(ratios);
	return rc;
}

static int sample_all(struct sampler *w, bool with_warmup)
{
	const struct measure_options *o = w->o;
	struct measure_sampled *s = w->s;
	size_t rounds = o->rounds > 0 ? (size_t)o->rounds : 1;
	int rc;

	if (s->noise_ok) {
		/* The first run's window starts a full window before it. */
		struct plat_noise_reading r;
		if (plat_noise_read(&w->noise, &r) == 0)
			ring_push(w, &r);
		plat_sleep_ms(MEASURE_NOISE_WINDOW_MS);
	}
	for (int k = 0; with_warmup && k < o->warmup; k++)
		if ((rc = progress(w, 0, s->capacity)) < 0 || (rc = pass(w, -1)) < 0)
			return rc;
	if (!o->auto_runs) {
		for (size_t r = 0; r < rounds; r++)
			if ((rc = round_of(w, s->capacity / rounds + (r < s->capacity % rounds),
					   with_warmup)) < 0)
				return rc;
		return 0;
	}
	size_t step = MEASURE_AUTO_STEP > rounds ? MEASURE_AUTO_STEP : rounds;
	bool paired = o->paired_precision > 0;
	long long start = clock_monotonic_us();
	while (s->taken < s->capacity) {
		size_t sweep = s->capacity - s->taken < step ? s->capacity - s->taken : step;
		for (size_t r = 0; r < rounds && r < sweep; r++)
			if ((rc = round_of(w, sweep / rounds + (r < sweep % rounds), with_warmup)) < 0)
				return rc;
		if ((rc = paired ? paired_enough(w, &s->reached) : precise_enough(w, &s->reached)) < 0)
			return rc;
		if (paired && s->taken < MEASURE_PRECISION_MIN_PASSES && s->taken < s->capacity)
			s->reached = false; /* the first widths are too noisy to stop on (measure.h) */
		s->seconds = (double)(clock_monotonic_us() - start) / 1e6;
		s->stopped = "precision";
		if (s->reached)
			break;
		s->stopped = "max_seconds";
		if (paired && s->seconds >= o->max_seconds)
			break;
		s->stopped = "max_runs";
	}
	return 0;
}

int measure_sample(const struct measure_program *programs, size_t count, const struct measure_options *o,
		   bool with_warmup, struct plat_measure_conditions *c, cJSON *order_json,
		   int (*run)(void *ctx, size_t program, long slot, double *ret_us), void *ctx,
		   struct measure_sampled *ret)
{
	struct sampler *w = calloc(1, sizeof(*w));
	struct measure_sampled *s = ret;
	size_t n = count * (size_t)o->runs;
	size_t max_rounds = o->auto_runs ? (size_t)o->runs : (size_t)(o->rounds > 0 ? o->rounds : 1);
	int rc;

	memset(s, 0, sizeof(*s));
	s->count = count;
	s->capacity = (size_t)o->runs;
	s->max_retakes = o->max_retakes == MEASURE_NO_RETAKES ? 0
			 : o->max_retakes > 0                 ? o->max_retakes
							      : MEASURE_NOISE_MAX_RETAKES;
	s->samples_us = calloc(n, sizeof(double));
	s->other_cpu_pct = calloc(n, sizeof(double));
	s->disk_ios = calloc(n, sizeof(double));
	s->flagged = calloc(count, sizeof(int));
	s->retaken = calloc(count, sizeof(int));
	s->round_sizes = calloc(max_rounds, sizeof(size_t));
	s->paired_ci = malloc(2 * count * sizeof(double));
	for (size_t i = 0; s->paired_ci && i < 2 * count; i++)
		s->paired_ci[i] = NAN;
	if (!w || !s->paired_ci || !s->samples_us || !s->other_cpu_pct || !s->disk_ios || !s->flagged ||
	    !s->retaken || !s->round_sizes || !(w->order = calloc(count, sizeof(size_t)))) {
		if (w)
			free(w->order);
		free(w);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	w->programs = programs;
	w->count = count;
	w->o = o;
	w->run = run;
	w->ctx = ctx;
	w->s = s;
	w->state = o->seed;
	w->order_json = order_json;
	s->noise_ok = plat_noise_open(&w->noise) == 0;
	plat_noise_add_companion(&w->noise, o->companion_pid);
	snprintf(s->noise_source, sizeof(s->noise_source), "%s", w->noise.source);
	plat_measure_begin(c);
	plat_measure_companion(c, o->companion_pid);
	rc = sample_all(w, with_warmup);
	/* Statistics after the agent's normal scheduling is back. */
	plat_measure_end(c);
	if (rc == 0)
		rc = progress(w, 1, 1);
	free(w->order);
	free(w);
	return rc;
}

void measure_sampled_release(struct measure_sampled *s)
{
	free(s->samples_us);
	free(s->other_cpu_pct);
	free(s->disk_ios);
	free(s->flagged);
	free(s->retaken);
	free(s->round_sizes);
	free(s->paired_ci);
	memset(s, 0, sizeof(*s));
}

static bool add_number_or_null(cJSON *obj, const char *name, bool known, double value)
{
	return known ? cJSON_AddNumberToObject(obj, name, value) != NULL
		     : cJSON_AddNullToObject(obj, name) != NULL;
}

int measure_sampled_json(const struct measure_sampled *s, size_t program, const struct measure_options *o,
			 cJSON *obj)
{
	const double *pct = s->other_cpu_pct + program * s->capacity;
	const double *ios = s->disk_ios + program * s->capacity;
	double *known = malloc(sizeof(double) * (s->taken ? s->taken : 1)), median = 0, max = 0, disk = 0;
	size_t n = 0, disk_n = 0;
	cJSON *arr, *noise, *a;
	bool ok = known != NULL;

	for (size_t k = 0; ok && k < s->taken; k++) {
		if (pct[k] >= 0) {
			known[n++] = pct[k];
			max = pct[k] > max ? pct[k] : max;
		}
		if (ios[k] >= 0) {
			disk += ios[k];
			disk_n++;
		}
	}
	if (ok && n > 0)
		ok = stats_median(known, n, &median) == 0;
	free(known);
	ok = ok && cJSON_AddNumberToObject(obj, "runs", (double)s->taken) &&
	     (arr = cJSON_AddArrayToObject(obj, "round_sizes"));
	for (size_t r = 0; ok && r < s->rounds; r++) {
		cJSON *v = cJSON_CreateNumber((double)s->round_sizes[r]);
		ok = v && cJSON_AddItemToArray(arr, v);
		if (!ok)
			cJSON_Delete(v);
	}
	ok = ok && (noise = cJSON_AddObjectToObject(obj, "noise")) &&
	     add_number_or_null(noise, "other_cpu_pct", n > 0, median) &&
	     add_number_or_null(noise, "max_other_cpu_pct", n > 0, max) &&
	     add_number_or_null(noise, "disk_ios", disk_n == s->taken && s->taken > 0, disk) &&
	     cJSON_AddNumberToObject(noise, "flagged", s->flagged[program]) &&
	     cJSON_AddNumberToObject(noise, "retaken", s->retaken[program]);
	if (ok && o->auto_runs)
		ok = (a = cJSON_AddObjectToObject(obj, "auto")) &&
		     cJSON_AddNumberToObject(a, "precision", o->precision) &&
		     cJSON_AddNumberToObject(a, "max_runs", o->runs) &&
		     cJSON_AddNumberToObject(a, "runs_taken", (double)s->taken) &&
		     cJSON_AddBoolToObject(a, "reached", s->reached);
	if (ok && o->auto_runs && o->paired_precision > 0) {
		double lo = s->paired_ci[2 * program], hi = s->paired_ci[2 * program + 1];
		ok = cJSON_AddNumberToObject(a, "precision_pct", o->paired_precision * 100) &&
		     cJSON_AddNumberToObject(a, "max_seconds", o->max_seconds) &&
		     cJSON_AddNumberToObject(a, "seconds", s->seconds) &&
		     cJSON_AddStringToObject(a, "stopped", s->stopped ? s->stopped : "max_runs");
		if (ok && !isnan(lo))
			ok = measure_add_numbers(a, "paired_ratio_ci", s->paired_ci + 2 * program, 2) &&
			     cJSON_AddNumberToObject(a, "paired_half_width_pct", (hi - lo) / 2 * 100);
	}
	return ok ? 0 : err_set(LL_ENOMEM, "Out of memory.");
}

int measure_noise_method_json(const struct measure_sampled *s, cJSON *result)
{
	cJSON *n = cJSON_AddObjectToObject(result, "noise");

	if (!n || !cJSON_AddStringToObject(n, "source", s->noise_source))
		return err_set(LL_ENOMEM, "Out of memory.");
	if (s->noise_ok &&
	    (!cJSON_AddNumberToObject(n, "threshold_other_cpu_pct", MEASURE_NOISE_THRESHOLD_PCT) ||
	     !cJSON_AddNumberToObject(n, "max_retakes", s->max_retakes) ||
	     !cJSON_AddNumberToObject(n, "window_ms", MEASURE_NOISE_WINDOW_MS)))
		return err_set(LL_ENOMEM, "Out of memory.");
	return 0;
}
