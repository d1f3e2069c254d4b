/*
 * report_draws.c - the draws of the report's bootstraps (report_draws.h):
 * which positions each resample takes, from a seed, exactly as stats.c
 * draws them, and the tables of draws kept between calls.
 */
#include "report_draws.h"

#include "loadlab/err.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64 and Lemire's multiply-shift: exactly stats.c's next_random()
 * and random_index(), so the draws are its draws. Draw K (from 0) of a
 * stream seeded SEED is mix(SEED + (K + 1) * golden): any block of a stream
 * can be drawn without the draws before it. */
#define GOLDEN 0x9e3779b97f4a7c15ULL

/* Draws K .. K+COUNT-1 of the stream SEED as indexes in [0, N) into OUT
 * (COUNT, N < 2^32). The high half of the 128-bit product r * N, from 32-bit halves
 * (r_hi * N + (r_lo * N >> 32) >> 32 cannot overflow), so that the loop
 * vectorizes where the CPU has 64-bit vector multiplies. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v4", "default"), optimize("O3")))
#endif
void
report_draw_indexes(uint64_t seed, uint64_t k, uint32_t count, uint32_t n, uint32_t *out)
{
	uint64_t base = seed + k * GOLDEN;

	for (uint32_t i = 0; i < count; i++) {
		uint64_t z = base + (uint64_t)(i + 1) * GOLDEN;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		out[i] = (uint32_t)(((z >> 32) * n + ((z & 0xffffffffu) * n >> 32)) >> 32);
	}
}

/* Draws 0 .. RESAMPLES * PER - 1 of the stream SEED into OUT, draw
 * r * PER + i as an index in [0, RANGE[i]) (RANGE[0..PER): each
 * resample's pattern of sample sizes), in one pass that vectorizes. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v4", "default"), optimize("O3")))
#endif
void
report_draw_patterned(uint64_t seed, uint32_t resamples, uint32_t per, const uint32_t *range, uint32_t *out)
{
	for (uint32_t r = 0; r < resamples; r++) {
		uint64_t base = seed + (uint64_t)r * per * GOLDEN;
		uint32_t *o = out + (size_t)r * per;
		for (uint32_t i = 0; i < per; i++) {
			uint64_t z = base + (uint64_t)(i + 1) * GOLDEN, n = range[i];
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
			z ^= z >> 31;
			o[i] = (uint32_t)(((z >> 32) * n + ((z & 0xffffffffu) * n >> 32)) >> 32);
		}
	}
}

/* How often each position of a sample of N was drawn by the N indexes
 * DRAWN, into COUNT[0..N). */
void report_count_drawn(const uint32_t *drawn, uint32_t n, uint32_t *count)
{
	memset(count, 0, n * sizeof(*count));
	for (uint32_t i = 0; i < n; i++)
		count[drawn[i]]++;
}

/* The same for draws K .. K+N-1 of the stream SEED; SCRATCH holds N
 * indexes. */
void report_draw_counts(uint64_t seed, uint64_t k, uint32_t n, uint32_t *scratch, uint32_t *count)
{
	report_draw_indexes(seed, k, n, n, scratch);
	report_count_drawn(scratch, n, count);
}

/*
 * The draws of a bootstrap: RESAMPLES resamples of a sample of N1 (and,
 * for a ratio, each followed by one of a sample of N2). They depend on the
 * seed and the sizes only, not on the samples.
 *
 * For samples of at most REPORT_RANKED_MAX_N, the draws are a table of bytes,
 * transposed: t[p * RESAMPLES + r] is how often position p (x's N1
 * positions, then y's N2) was drawn in resample r. A sample's statistic in
 * every resample is then found by walking its positions in sorted order
 * once, adding each position's row of counts to every resample's running
 * count at once (report_draws_ranks(): a loop over bytes that vectorizes), instead
 * of one walk per resample (profiled, perf on bench_reports: the
 * per-resample walk was 40 % of a summary's time).
 *
 * A summary's seeds are the variants' names and compare's minimum-ratio
 * seed is the variant's, so the same draws serve every result. Such tables
 * are kept (KEEP), up to DRAWS_KEPT of them and DRAWS_KEPT_BYTES in all,
 * never freed; the others are drawn per call. Larger samples draw per
 * resample and walk it (resampled()).
 */
#define DRAWS_KEPT 64
#define DRAWS_KEPT_BYTES (4u << 20)

struct draws {
	uint64_t seed;
	uint32_t n1, n2;
	int resamples;
	uint8_t *table;
};

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct draws kept[DRAWS_KEPT];
static size_t kept_count, kept_total;

/* The table of draws 0 .. RESAMPLES * (N1 + N2) - 1 of the stream SEED
 * into T (RESAMPLES * (N1 + N2) bytes); DRAWN holds RESAMPLES * N1
 * indexes (N2 is 0 or N1) or N1 + N2 (N2 differs). */
static void draw_table(uint64_t seed, uint32_t n1, uint32_t n2, int resamples, uint32_t *drawn, uint8_t *t)
{
	size_t per = n1 + n2, rr = (size_t)resamples;

	memset(t, 0, rr * per);
	if (n2 == 0 || n2 == n1) {
		report_draw_indexes(seed, 0, (uint32_t)(rr * per), n1, drawn);
		for (size_t r = 0; r < rr; r++) {
			const uint32_t *d = drawn + r * per;
			for (uint32_t i = 0; i < n1; i++)
				t[d[i] * rr + r]++;
			for (uint32_t i = 0; i < n2; i++)
				t[(n1 + d[n1 + i]) * rr + r]++;
		}
		return;
	}
	for (size_t r = 0; r < rr; r++) {
		report_draw_indexes(seed, r * per, n1, n1, drawn);
		report_draw_indexes(seed, r * per + n1, n2, n2, drawn + n1);
		for (uint32_t i = 0; i < n1; i++)
			t[drawn[i] * rr + r]++;
		for (uint32_t i = 0; i < n2; i++)
			t[(n1 + drawn[n1 + i]) * rr + r]++;
	}
}

/* Room for the indexes draw_table() draws at once. */
static size_t drawn_room(uint32_t n1, uint32_t n2, int resamples)
{
	return n2 == 0 || n2 == n1 ? (size_t)resamples * (n1 + n2) : n1 + n2;
}

/* The kept table for SEED, N1, N2 and RESAMPLES, made and kept when there
 * is room; NULL when it is not kept. */
static const uint8_t *kept_table(uint64_t seed, uint32_t n1, uint32_t n2, int resamples)
{
	size_t size = (size_t)resamples * (n1 + n2);
	const uint8_t *found = NULL;
	uint8_t *table;
	uint32_t *drawn;

	pthread_mutex_lock(&kept_lock);
	for (size_t i = 0; i < kept_count && !found; i++)
		if (kept[i].seed == seed && kept[i].n1 == n1 && kept[i].n2 == n2 &&
		    kept[i].resamples == resamples)
			found = kept[i].table;
	if (found || kept_count == DRAWS_KEPT || kept_total + size > DRAWS_KEPT_BYTES)
		goto done;
	table = malloc(size);
	drawn = malloc(drawn_room(n1, n2, resamples) * sizeof(*drawn));
	if (!table || !drawn) {
		free(table);
		free(drawn);
		goto done;
	}
	draw_table(seed, n1, n2, resamples, drawn, table);
	free(drawn);
	kept[kept_count++] = (struct draws){seed, n1, n2, resamples, table};
	kept_total += size;
	found = table;
done:
	pthread_mutex_unlock(&kept_lock);
	return found;
}

int report_draws_room(struct report_sample *s, size_t table_bytes, size_t batch_draws)
{
	if (table_bytes > s->table_room) {
		uint8_t *bigger = realloc(s->table, table_bytes);
		if (!bigger)
			return LL_ENOMEM;
		s->table = bigger;
		s->table_room = table_bytes;
	}
	if (batch_draws > s->batch_room) {
		uint32_t *bigger = realloc(s->batch, batch_draws * sizeof(*bigger));
		if (!bigger)
			return LL_ENOMEM;
		s->batch = bigger;
		s->batch_room = batch_draws;
	}
	return 0;
}

/* The table for SEED, N1, N2, RESAMPLES: kept, or drawn into S's room;
 * NULL: no memory. */
const uint8_t *report_draws_table(struct report_sample *s, uint64_t seed, uint32_t n1, uint32_t n2,
				  int resamples, bool keep)
{
	size_t size = (size_t)resamples * (n1 + n2), room = drawn_room(n1, n2, resamples);
	const uint8_t *t = keep ? kept_table(seed, n1, n2, resamples) : NULL;

	if (t)
		return t;
	if (s->table_resamples == resamples && s->table_seed == seed && s->table_n1 == n1 &&
	    s->table_n2 == n2)
		return s->table; /* drawn by the call before (compare's data: both roles) */
	s->table_resamples = 0;
	if (report_draws_room(s, size, room) < 0)
		return NULL;
	draw_table(seed, n1, n2, resamples, s->batch, s->table);
	s->table_seed = seed;
	s->table_n1 = n1;
	s->table_n2 = n2;
	s->table_resamples = resamples;
	return s->table;
}

/* For every resample r of the table rows T (S's N rows of RESAMPLES
 * counts): LO[r] = how many of S's sorted positions k have at most
 * AT_LO of the resample's values at positions <= k, the same for HI and
 * AT_HI: the rank in S of the resample's value AT_LO (and AT_HI) in its
 * own order. CUM is room for RESAMPLES bytes. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("O3")))
#endif
void
report_draws_ranks(const uint8_t *t, size_t resamples, const uint32_t *order, uint32_t n, uint8_t at_lo, uint8_t at_hi,
	 uint8_t *cum, uint8_t *lo, uint8_t *hi)
{
	memset(cum, 0, resamples);
	memset(lo, 0, resamples);
	memset(hi, 0, resamples);
	for (uint32_t k = 0; k < n; k++) {
		const uint8_t *c = t + (size_t)order[k] * resamples;
		for (size_t r = 0; r < resamples; r++) {
			uint8_t v = (uint8_t)(cum[r] + c[r]);
			cum[r] = v;
			lo[r] = (uint8_t)(lo[r] + (v <= at_lo));
			hi[r] = (uint8_t)(hi[r] + (v <= at_hi));
		}
	}
}

double report_ranked_value(const double *sorted, uint32_t n, enum stats_statistic statistic, uint8_t lo,
			   uint8_t hi)
{
	if (statistic == STATS_MIN || n % 2)
		return sorted[lo];
	return (sorted[lo] + sorted[hi]) / 2;
}

/* The ranks (report_ranked_value()) of STATISTIC in every resample of S
 * whose table rows are T. */
void report_draws_sample_ranks(const struct report_sample *s, const uint8_t *t, int resamples,
			       enum stats_statistic statistic, uint8_t *lo, uint8_t *hi)
{
	uint8_t cum[REPORT_MAX_RESAMPLES_RANKED];
	uint8_t at = statistic == STATS_MIN ? 0 : (uint8_t)((s->n - 1) / 2);

	report_draws_ranks(t, (size_t)resamples, s->order, s->n, at, (uint8_t)(at + 1), cum, lo, hi);
}
