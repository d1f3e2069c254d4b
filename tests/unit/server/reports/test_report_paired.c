/* report_paired.c: the paired floor ratio against a hand-checked case,
 * the sides that do not pair (the caller then falls back, outputs
 * untouched), rounds, and the same answer for the same seed; the figures
 * from compare data's cached ranks (report_compare_data.c) bit for bit
 * those computed, each side reading its role's half of the data. */
#include "check.h"
#include "reports/report_paired.h"

#include "loadlab/err.h"

#include <stdlib.h>
#include <string.h>

/* A result of two variants, "a" and "b", and a floor of N samples in
 * ROUNDS equal rounds (0: none), drawn from STATE; "b" of N + 1 samples
 * (it does not pair) when ODD. */
static cJSON *result_of(uint64_t *state, int n, int rounds, double scale, bool odd)
{
	cJSON *result = cJSON_CreateObject(), *variants = cJSON_AddArrayToObject(result, "variants");
	const char *names[2] = {"a", "b"};

	cJSON_AddObjectToObject(cJSON_AddObjectToObject(result, "facts"), "os");
	for (int v = 0; v < 3; v++) {
		cJSON *item = cJSON_CreateObject(), *warm = cJSON_AddObjectToObject(item, "warm");
		cJSON *samples = cJSON_AddArrayToObject(warm, "samples_us");
		int count = n + (odd && v == 1);
		for (int k = 0; k < count; k++) {
			double u = (double)(stats_random_next(state) >> 11) / 9007199254740992.0;
			cJSON_AddItemToArray(samples, cJSON_CreateNumber(round((v < 2 ? 1000 : 500) * scale *
									       (1 + 0.3 * u) * 10) /
									 10));
		}
		if (rounds) {
			cJSON *sizes = cJSON_AddArrayToObject(warm, "round_sizes");
			for (int r = 0; r < rounds; r++)
				cJSON_AddItemToArray(
					sizes, cJSON_CreateNumber(count / rounds + (r < count % rounds)));
		}
		if (v < 2) {
			cJSON_AddStringToObject(item, "name", names[v]);
			cJSON_AddItemToArray(variants, item);
		} else {
			cJSON_AddItemToObject(result, "floor", item);
		}
	}
	return result;
}

/* A variant's samples as measured (ranked data holds them sorted). */
static void measured_of(const struct report_compare_variant *v, double *out)
{
	for (uint32_t k = 0; k < v->n; k++)
		out[v->ranked ? v->order[k] : k] = v->values[k];
}

/* Compare data of BASE and CAND (cell KEY) read in their roles, the
 * baseline's from its half only: the cached figures of variant NAME
 * against report_paired_floor_ratio()'s; whether they were cached. */
static bool cached_matches(const cJSON *base, const cJSON *cand, const char *key, const char *name)
{
	struct report_sample room = {0};
	struct report_compare_data bd = {0}, cd = {0};
	void *b = NULL, *c = NULL, *half = NULL;
	size_t blen, clen, common, at, section;
	double x[256], xf[256], y[256], yf[256], f1[4] = {-1, -1, -1, -1}, f2[4] = {-2, -2, -2, -2};
	bool cached = false;

	CHECK_EQ_INT(report_compare_data(base, key, &room, &b, &blen), 0);
	CHECK_EQ_INT(report_compare_data(cand, key, &room, &c, &clen), 0);
	CHECK_EQ_INT(report_compare_data_role(b, blen, false, &common, &at, &section), 0);
	CHECK(common % 8 == 0 && at == common && blen == common + 2 * section);
	half = malloc(common + section);
	memcpy(half, b, common);
	memcpy((char *)half + common, (char *)b + at, section);
	CHECK_EQ_INT(report_compare_data_read(half, common + section, false, &bd), 0);
	CHECK_EQ_INT(report_compare_data_read(c, clen, true, &cd), 0);
	CHECK_EQ_INT(report_compare_data_read(b, blen - 1, false, &(struct report_compare_data){0}),
		     LL_EFORMAT);
	const struct report_compare_variant *bv = report_compare_data_variant(&bd, name);
	const struct report_compare_variant *cv = report_compare_data_variant(&cd, name);
	CHECK(bv && cv && bd.floor.values && cd.floor.values);
	if (bv && cv && bd.floor.values && cd.floor.values) {
		int rc = report_paired_floor_ratio_cached(bv, cv, &f1[0], &f1[1], &f1[2], &f1[3]);
		uint64_t seed = stats_seed_of(key) ^ stats_seed_of(name) ^ stats_seed_of("over-floor");
		measured_of(bv, x);
		measured_of(&bd.floor, xf);
		measured_of(cv, y);
		measured_of(&cd.floor, yf);
		int want = report_paired_floor_ratio(&(struct report_paired_side){bv, &bd.floor, x, xf},
						     &(struct report_paired_side){cv, &cd.floor, y, yf},
						     false, seed, &f2[0], &f2[1], &f2[2], &f2[3]);
		cached = rc == 0;
		if (rc == 0)
			CHECK(want == 0 && memcmp(f1, f2, sizeof(f1)) == 0); /* bit for bit */
		else
			CHECK(rc == LL_ENOTFOUND && f1[0] == -1);
	}
	report_compare_data_release(&bd);
	report_compare_data_release(&cd);
	report_sample_release(&room);
	free(half);
	free(b);
	free(c);
	return cached;
}

#define NEAR(a, b, eps) (fabs((a) - (b)) <= (eps))

/* A variant (or floor) of N values in measured order, in ROUNDS rounds. */
static struct report_compare_variant variant_of(const double *x, uint32_t n, const uint32_t *sizes,
						uint32_t rounds)
{
	return (struct report_compare_variant){.n = n, .values = x, .rounds = rounds, .round_sizes = sizes};
}

int main(void)
{
	/* base: r = 1.5, 2, 2.2, 3 (median 2.1); candidate: r = 2.31 in every pass */
	const double bx[4] = {150, 220, 330, 480}, bf[4] = {100, 110, 150, 160};
	const double cx[4] = {231, 462, 346.5, 693}, cf[4] = {100, 200, 150, 300};
	const double zero[4] = {100, 0, 150, 160};
	const uint32_t two[2] = {2, 2}, other[2] = {1, 3};
	struct report_compare_variant bv = variant_of(bx, 4, two, 2), bfv = variant_of(bf, 4, two, 2);
	struct report_compare_variant cv = variant_of(cx, 4, two, 2), cfv = variant_of(cf, 4, two, 2);
	struct report_paired_side base = {&bv, &bfv, bx, bf}, cand = {&cv, &cfv, cx, cf};
	double b = -1, c = -1, lo = -1, hi = -1, lo2, hi2, b2, c2;

	CHECK_EQ_INT(report_paired_floor_ratio(&base, &cand, false, 7, &b, &c, &lo, &hi), 0);
	CHECK(NEAR(b, 2.1, 1e-12) && NEAR(c, 2.31, 1e-12));
	/* each resample's ratio is 2.31 over a median of base's r: 0.77 .. 1.54 */
	CHECK(lo >= 2.31 / 3 - 1e-12 && hi <= 2.31 / 1.5 + 1e-12 && lo <= 1.1 && 1.1 <= hi);
	CHECK_EQ_INT(report_paired_floor_ratio(&base, &cand, false, 7, &b2, &c2, &lo2, &hi2), 0);
	CHECK(lo2 == lo && hi2 == hi && b2 == b && c2 == c); /* seeded */

	/* sides that do not pair: outputs untouched */
	b = c = lo = hi = -1;
	bfv.round_sizes = other; /* the same count, other rounds */
	CHECK_EQ_INT(report_paired_floor_ratio(&base, &cand, false, 7, &b, &c, &lo, &hi), LL_ENOTFOUND);
	bfv.round_sizes = two;
	cfv.n = 3; /* a floor sample fewer */
	cfv.rounds = 0;
	CHECK_EQ_INT(report_paired_floor_ratio(&base, &cand, false, 7, &b, &c, &lo, &hi), LL_ENOTFOUND);
	cfv = variant_of(zero, 4, two, 2); /* a floor of 0 */
	cand.xf = zero;
	CHECK_EQ_INT(report_paired_floor_ratio(&base, &cand, false, 7, &b, &c, &lo, &hi), LL_ENOTFOUND);
	CHECK(b == -1 && c == -1 && lo == -1 && hi == -1);

	{
		/* rounds: three of 4 passes; the candidate 10 % above in every
		 * pass, each pass's load (x1 .. x1.9) shared by variant and floor */
		double x[12], xf[12], y[12], yf[12];
		const uint32_t sizes[3] = {4, 4, 4};
		for (int k = 0; k < 12; k++) {
			double load = 1 + 0.1 * (k * 7 % 10), jitter = 1 + 0.01 * (k % 3);
			xf[k] = 500 * load;
			x[k] = 1000 * load * jitter;
			yf[k] = 500 * load * (2 - 0.1 * (k % 4));
			y[k] = 1100 * load * jitter * (2 - 0.1 * (k % 4));
		}
		struct report_compare_variant v1 = variant_of(x, 12, sizes, 3),
					      f1 = variant_of(xf, 12, sizes, 3);
		struct report_compare_variant v2 = variant_of(y, 12, sizes, 3),
					      f2 = variant_of(yf, 12, sizes, 3);
		struct report_paired_side s1 = {&v1, &f1, x, xf}, s2 = {&v2, &f2, y, yf};
		CHECK_EQ_INT(report_paired_floor_ratio(&s1, &s2, true, 3, &b, &c, &lo, &hi), 0);
		/* r = 2 x jitter (1, 1.01, 1.02): median 2.02; the candidate 10 % above */
		CHECK(NEAR(b, 2.02, 1e-9) && NEAR(c, 2.222, 1e-9));
		CHECK(lo > 1.05 && hi < 1.15 && lo <= c / b && c / b <= hi);
	}

	{
		/* cached figures: without rounds, in 2 rounds (pairs, not a row in
		 * rounds), 30 and 31 samples; a variant that does not pair */
		uint64_t state = 11;
		int shapes[4][2] = {{30, 0}, {30, 2}, {31, 0}, {9, 1}};
		for (int i = 0; i < 4; i++)
			for (int trial = 0; trial < 5; trial++) {
				cJSON *x = result_of(&state, shapes[i][0], shapes[i][1], 1, true);
				cJSON *y =
					result_of(&state, shapes[i][0], shapes[i][1], 1 + 0.05 * trial, true);
				CHECK(cached_matches(x, y, "os=win", "a"));
				CHECK(!cached_matches(x, y, "os=win",
						      "b")); /* its floor has a sample fewer */
				cJSON_Delete(x);
				cJSON_Delete(y);
			}
	}
	return check_finish();
}
