/*
 * report_compare_data.c - what compare needs of one result, computed once
 * (when the result is summarized) and cached beside its summary, so that a
 * compare reads no result text and draws no bootstrap (report_int.h,
 * struct report_compare_data).
 *
 * A compare row's median-ratio bootstrap is seeded by its cell and variant
 * and its minimum-ratio bootstrap by its variant; both draw, per resample,
 * the baseline's sample then the candidate's. A result knows its cell, so
 * for the usual case (both sides of a row with the same number of samples,
 * at most 255) the statistic of every resample of its sample, as baseline
 * and as candidate, is known at summary time: its ranks in the sorted
 * sample (report_sample_ratio_ranks()) are kept, one byte each, and
 * compare divides the values they point at. The figures are the same bit
 * for bit (the seeds, the draws and the arithmetic are those of
 * report_stats.c).
 *
 * The data (native byte order; written and read by this file only): a
 * common part, then the ranks a side reads as baseline, then those it
 * reads as candidate (two sections of the same length: a side copies the
 * common part and its own section only, report_compare_data_role()).
 *   u32 magic, u16 resamples, u16 variant count, u32 the common part's
 *     length, u32 a section's length,
 *   per compared fact (REPORT_COMPARED_FACTS): u16 length (0xffff: absent),
 *     its JSON text,
 *   per variant: u16 name length, the name, u8 flags, u32 n, padding to
 *     8 bytes, (DATA_ROUNDS) u32 R and R u32 round sizes and padding to 8
 *     bytes, then (DATA_SAMPLES) n doubles: sorted (DATA_RANKED) or as
 *     measured; DATA_RANKED: n bytes of order (order[k]: the measured
 *     position of sorted[k]); DATA_PAIRED (ranked, and the variant pairs
 *     with the floor, stats_paired_ratios()): padding to 8 bytes, n
 *     doubles: its per-pass ratios r_k sorted;
 *   the floor (the result's "floor": the empty program): one more entry
 *     as a variant's, its name empty, never ranked; padding to 8 bytes;
 *   each section, per ranked variant in the same order (R = resamples):
 *     3 x R bytes of ranks in that role: the median's (lo, hi), the
 *     minimum's; DATA_FLOOR_RANKS (the result has a floor of at most 255
 *     samples, the variant fewer than REPORT_MIN_ROUNDS rounds, see
 *     below): 4 x R bytes, the ranks of the medians of the over-floor
 *     bootstrap (report_median_ranks() of the variant and of the floor,
 *     lo then hi of each); DATA_PAIRED: 2 x R bytes, the ranks (lo, hi)
 *     of the medians of the paired floor-ratio bootstrap
 *     (report_paired.h).
 *
 * Compare's over-floor interval (docs/statistics.md) is seeded by the cell,
 * the variant and "over-floor" and draws per resample the baseline's
 * variant, its floor, the candidate's variant, its floor: for rows without
 * rounds whose two sides have the same sample counts, the ranks of those
 * four medians are known at summary time, as for the ratio of medians.
 *
 * Compare's paired floor ratio (report_paired.h) of a row without rounds
 * whose sides have the same sample counts draws, with the over-floor seed,
 * a resample of the baseline's r_k then one of the candidate's, as the
 * ratio of medians does: their medians' ranks are known at summary time
 * too (version "LLC4"; "LLC3" data is made again by the next compare).
 *
 * The run counters (issue 40, report_compare_counters.h; version "LLC5"):
 * a variant with samples whose warm has "run_counters" (DATA_COUNTERS)
 * ends its entry with, per REPORT_COUNTER_* in order, u8 1 and, after
 * padding to 8 bytes, n doubles (the figure per run, as measured), or u8
 * 2, u16 length and the reason it was not counted (at most
 * DATA_MAX_REASON bytes).
 *
 * Rounds (warm.round_sizes, docs/statistics.md) are kept when they are
 * 1 to STATS_MAX_ROUNDS positive counts adding up to the samples; others
 * are left out, and the sample is then one without rounds.
 */
#include "report_compare_counters.h"
#include "report_int.h"

#include "loadlab/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DATA_MAGIC 0x4c4c4335u /* "LLC5" */
#define DATA_INVALID 1u
#define DATA_SAMPLES 2u
#define DATA_RANKED 4u
#define DATA_ROUNDS 8u
#define DATA_FLOOR_RANKS 16u
#define DATA_PAIRED 32u
#define DATA_COUNTERS 64u
/* Most bytes of a counter's reason kept (the agent's are a line). */
#define DATA_MAX_REASON 512
#define DATA_MAX_VARIANTS 256
#define HEADER_SIZE 16

const char *const report_compared_facts[REPORT_COMPARED_FACTS] = {"os",   "os_version", "arch",  "cpu_model",
								  "disk", "fs",         "runner"};

struct out {
	uint8_t *data;
	size_t len, room;
	bool failed;
};

static void *put(struct out *o, const void *bytes, size_t n)
{
	void *at;

	if (o->len + n > o->room) {
		size_t room = o->room ? o->room * 2 : 4096;
		uint8_t *bigger;
		while (room < o->len + n)
			room *= 2;
		if (!(bigger = realloc(o->data, room))) {
			o->failed = true;
			return NULL;
		}
		o->data = bigger;
		o->room = room;
	}
	at = o->data + o->len;
	if (bytes)
		memcpy(at, bytes, n);
	else
		memset(at, 0, n);
	o->len += n;
	return at;
}

static void put_u16(struct out *o, uint16_t v)
{
	put(o, &v, sizeof(v));
}

static void put_text(struct out *o, const char *text, size_t n)
{
	put_u16(o, (uint16_t)n);
	put(o, text, n);
}

/* The round sizes of WARM (warm.round_sizes) into a new array when they
 * are 1 to STATS_MAX_ROUNDS positive integers adding up to N; else none. */
static uint32_t *rounds_of(const cJSON *warm, size_t n, uint32_t *ret_count)
{
	const cJSON *sizes = get(warm, "round_sizes"), *item;
	int count = cJSON_IsArray(sizes) ? cJSON_GetArraySize(sizes) : 0;
	uint32_t *out;
	size_t sum = 0, k = 0;

	*ret_count = 0;
	if (count < 1 || count > STATS_MAX_ROUNDS || !(out = malloc((size_t)count * sizeof(*out))))
		return NULL;
	cJSON_ArrayForEach(item, sizes) {
		double v = cJSON_IsNumber(item) ? item->valuedouble : 0;
		if (!(v >= 1 && v <= STATS_MAX_SAMPLES) || v != floor(v))
			break;
		out[k++] = (uint32_t)v;
		sum += (size_t)v;
	}
	if (k != (size_t)count || sum != n) {
		free(out);
		return NULL;
	}
	*ret_count = (uint32_t)count;
	return out;
}

/* The result's floor: sorted (SORTED, when HAS_SORTED) and as measured
 * (X, N, with its rounds; X NULL: no valid samples). */
struct floor_in {
	struct report_sample sorted;
	bool has_sorted;
	double *x;
	size_t n;
	uint32_t *sizes, rounds;
};

/* The over-floor ranks of the sample S over the sorted FLOOR for SEED
 * into RANKS (8 x REPORT_COMPARE_RESAMPLES bytes, see above); LL_ENOMEM. */
static int floor_ranks(struct report_sample *s, const struct report_sample *floor, uint64_t seed,
		       uint8_t *ranks)
{
	const size_t r = REPORT_COMPARE_RESAMPLES;
	struct report_sorted sides[4] = {report_sorted_of(s), report_sorted_of(floor), report_sorted_of(s),
					 report_sorted_of(floor)};
	uint8_t *lo[4] = {ranks, ranks + 2 * r, ranks + 4 * r, ranks + 6 * r};
	uint8_t *hi[4] = {ranks + r, ranks + 3 * r, ranks + 5 * r, ranks + 7 * r};

	return report_median_ranks(sides, 4, (int)r, seed, s, lo, hi);
}

/* The paired entry of a variant whose per-pass ratios are R[0..N): R
 * sorted into O, the ranks of its medians for SEED into the sections SEC
 * (see above); S is room. */
static void put_paired(struct out *o, struct out *sec, const double *r, uint32_t n, uint64_t seed,
		       struct report_sample *s)
{
	const int resamples = REPORT_COMPARE_RESAMPLES;
	uint8_t *ranks[2];

	put(o, NULL, (8 - o->len % 8) % 8);
	if (report_sample_set(s, r, n) < 0 || !put(o, s->sorted, n * sizeof(double)))
		o->failed = true;
	for (int role = 0; role < 2 && !o->failed; role++)
		if (!(ranks[role] = put(&sec[role], NULL, 2 * (size_t)resamples)) ||
		    report_sample_ratio_ranks(s, STATS_MEDIAN, resamples, seed, false, role, ranks[role],
					      ranks[role] + resamples) < 0)
			o->failed = true;
}

/* The run counters of WARM (N samples) into O (DATA_COUNTERS, above). */
static void put_counters(struct out *o, const cJSON *warm, size_t n)
{
	for (int c = 0; c < REPORT_COUNTERS; c++) {
		const char *why = NULL;
		double *x = NULL;
		uint8_t kind = report_counter_series(warm, (enum report_counter)c, n, &x, &why) == 0 ? 1 : 2;
		put(o, &kind, 1);
		if (kind == 1) {
			put(o, NULL, (8 - o->len % 8) % 8);
			put(o, x, n * sizeof(double));
		} else {
			size_t len = why ? strlen(why) : 0;
			put_text(o, why ? why : "", len > DATA_MAX_REASON ? DATA_MAX_REASON : len);
		}
		free(x);
	}
}

/* One variant's entry (the floor's: RANK false, NAME "", FL NULL) into O,
 * its ranks into the sections SEC (as baseline, as candidate); S is room
 * for its sample. */
static void put_variant(struct out *o, struct out *sec, const cJSON *v, const char *name, const char *key,
			bool rank, struct report_sample *s, const struct floor_in *fl)
{
	const struct report_sample *floor = fl && fl->has_sorted ? &fl->sorted : NULL;
	double r[255];
	const int resamples = REPORT_COMPARE_RESAMPLES;
	uint8_t flags = cJSON_IsFalse(get(v, "valid")) ? DATA_INVALID : 0, *ranks;
	double *x = NULL;
	size_t n = 0;
	uint32_t n32, rounds = 0, *sizes = NULL;
	uint8_t scratch[REPORT_MAX_RESAMPLES_RANKED], both[8 * REPORT_COMPARE_RESAMPLES], *at[2];

	if (report_samples_of(get(get(v, "warm"), "samples_us"), &x, &n) == 0)
		flags |= DATA_SAMPLES;
	if ((flags & DATA_SAMPLES) && (sizes = rounds_of(get(v, "warm"), n, &rounds)))
		flags |= DATA_ROUNDS;
	if ((flags & DATA_SAMPLES) && cJSON_IsObject(get(get(v, "warm"), "run_counters")))
		flags |= DATA_COUNTERS;
	if (rank && (flags & DATA_SAMPLES) && n <= 255 && report_sample_set(s, x, n) == 0)
		flags |= DATA_RANKED;
	if ((flags & DATA_RANKED) && floor && floor->n && rounds < REPORT_MIN_ROUNDS)
		flags |= DATA_FLOOR_RANKS; /* a variant in rounds is compared in rounds, mostly */
	if ((flags & DATA_RANKED) && fl && fl->x && fl->n == n) {
		struct stats_sample sv = {x, n, rounds ? sizes : NULL, rounds};
		struct stats_sample sf = {fl->x, fl->n, fl->rounds ? fl->sizes : NULL, fl->rounds};
		if (stats_paired_ratios(&sv, &sf, r) == 0)
			flags |= DATA_PAIRED;
	}
	put_text(o, name, strlen(name));
	put(o, &flags, 1);
	n32 = (uint32_t)n;
	put(o, &n32, sizeof(n32));
	put(o, NULL, (8 - o->len % 8) % 8);
	if (flags & DATA_ROUNDS) {
		put(o, &rounds, sizeof(rounds));
		put(o, sizes, rounds * sizeof(*sizes));
		put(o, NULL, (8 - o->len % 8) % 8);
	}
	if (flags & DATA_RANKED) {
		uint64_t cell_seed = stats_seed_of(key) ^ stats_seed_of(name);
		put(o, s->sorted, n * sizeof(double));
		if ((ranks = put(o, NULL, n)))
			for (size_t k = 0; k < n; k++)
				ranks[k] = (uint8_t)s->order[k];
		/* the medians' ranks in both roles first: one table of draws */
		for (int role = 0; role < 2; role++)
			if (!(at[role] = put(&sec[role], NULL, 3 * (size_t)resamples)) ||
			    report_sample_ratio_ranks(s, STATS_MEDIAN, resamples, cell_seed, false, role,
						      at[role], at[role] + resamples) < 0)
				o->failed = true;
		for (int role = 0; role < 2 && !o->failed; role++)
			if (report_sample_ratio_ranks(s, STATS_MIN, resamples, stats_seed_of(name), true,
						      role, at[role] + 2 * resamples, scratch) < 0)
				o->failed = true;
		if ((flags & DATA_FLOOR_RANKS) &&
		    floor_ranks(s, floor, cell_seed ^ stats_seed_of("over-floor"), both) == 0) {
			put(&sec[0], both, 4 * (size_t)resamples);
			put(&sec[1], both + 4 * resamples, 4 * (size_t)resamples);
		} else if (flags & DATA_FLOOR_RANKS) {
			o->failed = true;
		}
		if (flags & DATA_PAIRED)
			put_paired(o, sec, r, (uint32_t)n, cell_seed ^ stats_seed_of("over-floor"), s);
	} else if (flags & DATA_SAMPLES) {
		put(o, x, n * sizeof(double));
	}
	if (flags & DATA_COUNTERS)
		put_counters(o, get(v, "warm"), n);
	free(sizes);
	free(x);
}

/* The floor FLOOR (the result's "floor") into FL when it has valid warm
 * samples: as measured with its rounds, and sorted when at most 255
 * (compare's rows without rounds resample it without its rounds). */
static void floor_of(const cJSON *floor, struct floor_in *fl)
{
	if (report_samples_of(get(get(floor, "warm"), "samples_us"), &fl->x, &fl->n) < 0)
		return;
	fl->sizes = rounds_of(get(floor, "warm"), fl->n, &fl->rounds);
	if (fl->n <= 255 && report_sample_set(&fl->sorted, fl->x, fl->n) == 0)
		fl->has_sorted = true;
}

int report_compare_data(const cJSON *result, const char *key, struct report_sample *s, void **ret_data,
			size_t *ret_len)
{
	struct out o = {0};
	const cJSON *facts = get(result, "facts"), *v, *variants = get(result, "variants");
	struct floor_in floor = {0};
	uint32_t magic = DATA_MAGIC;
	struct out sec[2] = {{0}, {0}};
	uint16_t count = 0;
	uint32_t lens[2];

	put(&o, &magic, sizeof(magic));
	put_u16(&o, REPORT_COMPARE_RESAMPLES);
	put_u16(&o, 0);
	put(&o, NULL, sizeof(lens));
	for (int i = 0; i < REPORT_COMPARED_FACTS; i++) {
		const cJSON *fact = get(facts, report_compared_facts[i]);
		char *text = fact ? cJSON_PrintUnformatted(fact) : NULL;
		if (!fact)
			put_u16(&o, 0xffff);
		else if (!text || strlen(text) >= 0xffff)
			o.failed = true;
		else
			put_text(&o, text, strlen(text));
		free(text);
	}
	floor_of(get(result, "floor"), &floor);
	cJSON_ArrayForEach(v, variants) {
		const char *name = string(v, "name");
		if (!name || strlen(name) >= 0xffff || report_find_variant(variants, name) != v)
			continue; /* compare reads a name's first variant */
		if (count == DATA_MAX_VARIANTS) {
			o.failed = true;
			break;
		}
		put_variant(&o, sec, v, name, key, true, s, &floor);
		count++;
	}
	put_variant(&o, sec, get(result, "floor"), "", key, false, s, NULL);
	report_sample_release(&floor.sorted);
	free(floor.x);
	free(floor.sizes);
	put(&o, NULL, (8 - o.len % 8) % 8);
	lens[0] = (uint32_t)o.len;
	lens[1] = (uint32_t)sec[0].len;
	put(&o, sec[0].data, sec[0].len);
	put(&o, sec[1].data, sec[1].len);
	if (o.failed || sec[0].failed || sec[1].failed || sec[0].len != sec[1].len || o.len > UINT32_MAX) {
		free(o.data);
		free(sec[0].data);
		free(sec[1].data);
		return LL_ENOMEM;
	}
	free(sec[0].data);
	free(sec[1].data);
	memcpy(o.data + 6, &count, sizeof(count));
	memcpy(o.data + 8, lens, sizeof(lens));
	*ret_data = o.data;
	*ret_len = o.len;
	return 0;
}

struct in {
	const uint8_t *at, *end;
};

static const void *take(struct in *in, size_t n)
{
	const uint8_t *at = in->at;

	if ((size_t)(in->end - in->at) < n)
		return NULL;
	in->at += n;
	return at;
}

static bool take_u16(struct in *in, uint16_t *ret)
{
	const void *at = take(in, sizeof(*ret));

	if (at)
		memcpy(ret, at, sizeof(*ret));
	return at != NULL;
}

void report_compare_data_release(struct report_compare_data *d)
{
	free(d->variants);
	*d = (struct report_compare_data){0};
}

/* A variant's run counters at IN (DATA_COUNTERS) into V; LL_EFORMAT. */
static int take_counters(struct in *in, const void *data, struct report_compare_variant *v)
{
	const uint8_t *kind;

	v->has_counters = true;
	for (int c = 0; c < REPORT_COUNTERS; c++) {
		if (!(kind = take(in, 1)))
			return LL_EFORMAT;
		if (*kind == 1) {
			if (!take(in, (8 - (size_t)(in->at - (const uint8_t *)data) % 8) % 8) ||
			    !(v->counter[c] = take(in, v->n * sizeof(double))))
				return LL_EFORMAT;
		} else if (*kind != 2 || !take_u16(in, &v->not_counted_len[c]) ||
			   v->not_counted_len[c] > DATA_MAX_REASON ||
			   !(v->not_counted[c] = take(in, v->not_counted_len[c]))) {
			return LL_EFORMAT;
		}
	}
	return 0;
}

/* One variant's entry at IN and its ranks at SEC (DATA: the data's start,
 * for the padding) into V; LL_EFORMAT. */
static int take_variant(struct in *in, struct in *sec, const void *data, uint16_t resamples,
			struct report_compare_variant *v)
{
	const uint8_t *flags;
	const uint32_t *n, *rounds;

	if (!take_u16(in, &v->name_len) || !(v->name = take(in, v->name_len)) || !(flags = take(in, 1)) ||
	    !(n = take(in, sizeof(*n))))
		return LL_EFORMAT;
	memcpy(&v->n, n, sizeof(v->n));
	v->invalid = *flags & DATA_INVALID;
	if (!take(in, (8 - (size_t)(in->at - (const uint8_t *)data) % 8) % 8))
		return LL_EFORMAT;
	if (*flags & DATA_ROUNDS) {
		if (!(rounds = take(in, sizeof(*rounds))) || *rounds < 1 || *rounds > STATS_MAX_ROUNDS ||
		    !(v->round_sizes = take(in, *rounds * sizeof(uint32_t))) ||
		    !take(in, (8 - (size_t)(in->at - (const uint8_t *)data) % 8) % 8))
			return LL_EFORMAT;
		v->rounds = *rounds;
	}
	if (!(*flags & DATA_SAMPLES))
		return 0;
	if (v->n == 0 || v->n > STATS_MAX_SAMPLES || !(v->values = take(in, v->n * sizeof(double))))
		return LL_EFORMAT;
	v->ranked = *flags & DATA_RANKED;
	if (v->ranked &&
	    (v->n > 255 || !(v->order = take(in, v->n)) || !(v->ranks = take(sec, 3 * (size_t)resamples))))
		return LL_EFORMAT;
	if ((*flags & DATA_FLOOR_RANKS) &&
	    (!v->ranked || !(v->floor_ranks = take(sec, 4 * (size_t)resamples))))
		return LL_EFORMAT;
	if ((*flags & DATA_PAIRED) &&
	    (!v->ranked || !take(in, (8 - (size_t)(in->at - (const uint8_t *)data) % 8) % 8) ||
	     !(v->paired = take(in, v->n * sizeof(double))) ||
	     !(v->paired_ranks = take(sec, 2 * (size_t)resamples))))
		return LL_EFORMAT;
	return (*flags & DATA_COUNTERS) ? take_counters(in, data, v) : 0;
}

int report_compare_data_role(const void *data, size_t len, bool candidate, size_t *ret_common, size_t *ret_at,
			     size_t *ret_section)
{
	uint32_t magic, lens[2];

	if (len < HEADER_SIZE)
		return LL_EFORMAT;
	memcpy(&magic, data, sizeof(magic));
	memcpy(lens, (const uint8_t *)data + 8, sizeof(lens));
	if (magic != DATA_MAGIC || lens[0] < HEADER_SIZE || lens[0] % 8 || len < lens[0] ||
	    (len - lens[0] != 2 * (size_t)lens[1] && len - lens[0] != lens[1]))
		return LL_EFORMAT;
	*ret_common = lens[0];
	*ret_at = lens[0] + (len - lens[0] == lens[1] || !candidate ? 0 : lens[1]);
	*ret_section = lens[1];
	return 0;
}

int report_compare_data_read(const void *data, size_t len, bool candidate, struct report_compare_data *ret)
{
	const uint8_t *bytes = data;
	struct report_compare_data d = {0};
	size_t common, at, section;
	struct in in, sec;
	uint16_t resamples, count;

	if ((uintptr_t)data % 8 || report_compare_data_role(data, len, candidate, &common, &at, &section) < 0)
		return LL_EFORMAT;
	in = (struct in){bytes + 4, bytes + common};
	sec = (struct in){bytes + at, bytes + at + section};
	if (!take_u16(&in, &resamples) || resamples != REPORT_COMPARE_RESAMPLES || !take_u16(&in, &count) ||
	    !take(&in, 8))
		return LL_EFORMAT;
	for (int i = 0; i < REPORT_COMPARED_FACTS; i++) {
		uint16_t n;
		if (!take_u16(&in, &n))
			return LL_EFORMAT;
		d.facts[i] = n == 0xffff ? NULL : take(&in, n);
		d.fact_len[i] = n == 0xffff ? 0 : n;
		if (n != 0xffff && !d.facts[i])
			return LL_EFORMAT;
	}
	if (count && !(d.variants = calloc(count, sizeof(*d.variants))))
		return LL_ENOMEM;
	for (d.count = 0; d.count < count; d.count++)
		if (take_variant(&in, &sec, data, resamples, &d.variants[d.count]) < 0)
			goto bad;
	if (take_variant(&in, &sec, data, resamples, &d.floor) < 0)
		goto bad;
	if (!take(&in, (8 - (size_t)(in.at - bytes) % 8) % 8) || in.at != in.end || sec.at != sec.end)
		goto bad;
	*ret = d;
	return 0;
bad:
	report_compare_data_release(&d);
	return LL_EFORMAT;
}

const struct report_compare_variant *report_compare_data_variant(const struct report_compare_data *d,
								 const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < d->count; i++)
		if (d->variants[i].name_len == len && memcmp(d->variants[i].name, name, len) == 0)
			return &d->variants[i];
	return NULL;
}

const double *report_compare_variant_measured(const struct report_compare_variant *v, double **room)
{
	double *x;

	if (!v->ranked)
		return v->values;
	if (!(x = realloc(*room, v->n * sizeof(*x))))
		return NULL;
	*room = x;
	for (uint32_t k = 0; k < v->n; k++)
		x[v->order[k]] = v->values[k];
	return x;
}

int report_compare_variant_sample(const struct report_compare_variant *v, struct report_sample *s,
				  double **room)
{
	const double *x;

	if (!v->values)
		return LL_EINVAL;
	if (!(x = report_compare_variant_measured(v, room)))
		return LL_ENOMEM;
	return report_sample_set(s, x, v->n);
}
