/* The one writer of the summary cache (summary.h): every summary and
 * every compare data cached, whichever thread made it (the summarizer's,
 * a report's, a compare's), is written by summary_cache_put(). */
#include "summary.h"

#include "report.h"
#include "store/store.h"

#include "loadlab/array.h"

#include <stdlib.h>
#include <string.h>

int summary_cache_put(struct store *store, size_t count, const long long *result_ids,
		      const char *const *summaries, const void *const *compare, const size_t *compare_len)
{
	if (!store)
		return 0;
	if (summaries)
		return store_summaries_put(store, count, result_ids, REPORT_SUMMARY_VERSION, summaries,
					   compare, compare_len);
	return store_compare_data_put(store, count, result_ids, REPORT_SUMMARY_VERSION, compare, compare_len);
}

void report_data_keep(struct report_data_kept *k, long long result_id, const void *data, size_t len)
{
	size_t ids_room = k->room, data_room = k->room, len_room = k->room;
	long long *ids;
	void **d, *copy;
	size_t *lens;

	/* Three arrays of one length, each grown on its own copy of ROOM:
	 * when one cannot grow, those grown stay valid and KEPT's room is
	 * the old one (the next call grows them again, to the same size). */
	if (!(ids = array_grow(k->ids, k->count, &ids_room, sizeof(*ids), 64)))
		return;
	k->ids = ids;
	if (!(d = array_grow(k->data, k->count, &data_room, sizeof(*d), 64)))
		return;
	k->data = d;
	if (!(lens = array_grow(k->len, k->count, &len_room, sizeof(*lens), 64)))
		return;
	k->len = lens;
	k->room = len_room;
	if (!(copy = malloc(len)))
		return;
	memcpy(copy, data, len);
	k->ids[k->count] = result_id;
	k->data[k->count] = copy;
	k->len[k->count++] = len;
}

void report_data_store(struct report_data_kept *k, struct store *store)
{
	summary_cache_put(store, k->count, k->ids, NULL, (const void *const *)k->data, k->len);
	for (size_t i = 0; i < k->count; i++)
		free(k->data[i]);
	free(k->ids);
	free(k->data);
	free(k->len);
	*k = (struct report_data_kept){0};
}
