/*
 * summary.h - what the summarizer (summarizer.c) makes of a stored result
 * besides its summary (report.h, report_summarize_result()).
 *
 * A result's summary is what its job's report reads; compare's data
 * (report_compare_data.c: the sorted samples and the ranks of compare's
 * resampled medians and minima) is what a compare reads, and costs about
 * twice a summary's CPU time (issue 16's profile, tests/bench/README.md,
 * pass 6). They are made apart, so that a report waits for summaries only:
 * the summarizer makes summaries first and compare data after them, and a
 * compare computes what is not cached yet.
 */
#ifndef LOADLAB_SERVER_SUMMARY_H
#define LOADLAB_SERVER_SUMMARY_H

#include <stddef.h>

struct store;

/* Compare's data of the result text BODY of a task in CELL (JSON object
 * text): a new buffer *RET_COMPARE of *RET_COMPARE_LEN bytes, the same
 * bytes report_summarize_cell() makes. LL_EFORMAT (or another code of
 * json_parse_object()) when BODY is not a JSON object, LL_ENOMEM. */
int report_compare_data_of(const char *body, const char *cell, void **ret_compare, size_t *ret_compare_len);

/* The summary cache's one writer (summary_cache.c): every path that
 * caches what it computed calls it. Caches, for COUNT results
 * RESULT_IDS, their SUMMARIES (text) of REPORT_SUMMARY_VERSION with
 * COMPARE[i] (COMPARE_LEN[i] bytes; COMPARE or COMPARE[i] NULL: none)
 * in one write: store_summaries_put(). SUMMARIES NULL: compare data only,
 * beside summaries of this version already cached (results not
 * summarized yet are left as they are): store_compare_data_put(). STORE
 * NULL: nothing. The store's error, or 0. */
int summary_cache_put(struct store *store, size_t count, const long long *result_ids,
		      const char *const *summaries, const void *const *compare, const size_t *compare_len);

/* Compare data computed by a compare (report_compare.c) for results
 * whose data was not cached, kept to be cached once for later compares. */
struct report_data_kept {
	size_t count, room;
	long long *ids;
	void **data;
	size_t *len;
};

/* Keeps a copy of DATA (LEN bytes), compare's data of RESULT_ID; nothing
 * when there is no memory (it is then computed again next time). */
void report_data_keep(struct report_data_kept *kept, long long result_id, const void *data, size_t len);

/* Caches what KEPT holds beside the results' summaries of this version
 * (summary_cache_put() without summaries: results not summarized yet are
 * left to the summarizer) in one write, and frees it. STORE NULL: frees
 * only. */
void report_data_store(struct report_data_kept *kept, struct store *store);

#endif
