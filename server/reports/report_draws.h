/*
 * report_draws.h - the draws of the report's bootstraps (report_draws.c),
 * for report_stats.c, which computes the statistics of what they draw.
 *
 * The draws are stats.c's (splitmix64 and Lemire's multiply-shift), so a
 * bootstrap here draws what stats_bootstrap_ci() draws for the same seed.
 * They depend on the seed and the sample sizes only, not on the samples:
 * for samples of at most REPORT_RANKED_MAX_N they are a table of bytes
 * (how often each position was drawn in each resample), kept for seeds
 * that repeat; larger samples draw per resample. Only report_stats.c and
 * report_draws.c include this.
 */
#ifndef LOADLAB_SERVER_REPORT_DRAWS_H
#define LOADLAB_SERVER_REPORT_DRAWS_H

#include "report_int.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest sample whose draws are a table of bytes. */
#define REPORT_RANKED_MAX_N 255

/* Draws K .. K+COUNT-1 of the stream SEED as indexes in [0, N) into OUT
 * (COUNT, N < 2^32). */
void report_draw_indexes(uint64_t seed, uint64_t k, uint32_t count, uint32_t n, uint32_t *out);

/* Draws 0 .. RESAMPLES * PER - 1 of the stream SEED into OUT, draw
 * r * PER + i as an index in [0, RANGE[i]). */
void report_draw_patterned(uint64_t seed, uint32_t resamples, uint32_t per, const uint32_t *range,
			   uint32_t *out);

/* How often each position of a sample of N was drawn by the N indexes
 * DRAWN, into COUNT[0..N). */
void report_count_drawn(const uint32_t *drawn, uint32_t n, uint32_t *count);

/* The same for draws K .. K+N-1 of the stream SEED; SCRATCH holds N
 * indexes. */
void report_draw_counts(uint64_t seed, uint64_t k, uint32_t n, uint32_t *scratch, uint32_t *count);

/* Grows S's table of draws to at least TABLE_BYTES and its batch of
 * draws to at least BATCH_DRAWS indexes (to exactly those sizes when it
 * grows them; 0: that one left as it is); LL_ENOMEM (S then as it was,
 * or with its table grown). */
int report_draws_room(struct report_sample *s, size_t table_bytes, size_t batch_draws);

/* The table of draws for SEED, N1, N2 (0, or the second sample's size),
 * RESAMPLES (each at most REPORT_RANKED_MAX_N): kept (KEEP: the seed will
 * come again), or drawn into S's room; NULL: no memory. */
const uint8_t *report_draws_table(struct report_sample *s, uint64_t seed, uint32_t n1, uint32_t n2,
				  int resamples, bool keep);

/* For every resample r of the table rows T (N rows of RESAMPLES counts,
 * walked in the sorted order ORDER): LO[r] and HI[r], the ranks of the
 * resample's values AT_LO and AT_HI in its own order; CUM is room for
 * RESAMPLES bytes. */
void report_draws_ranks(const uint8_t *t, size_t resamples, const uint32_t *order, uint32_t n, uint8_t at_lo,
			uint8_t at_hi, uint8_t *cum, uint8_t *lo, uint8_t *hi);

/* The ranks (report_ranked_value()) of STATISTIC in every resample of S
 * whose table rows are T. */
void report_draws_sample_ranks(const struct report_sample *s, const uint8_t *t, int resamples,
			       enum stats_statistic statistic, uint8_t *lo, uint8_t *hi);

#endif
