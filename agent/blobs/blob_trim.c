/* blob_trim.c - blob_trim_plan(), the cache's trimming rule (blob_trim.h). */
#include "blobs/blob_trim.h"

#include <stdlib.h>

#include "loadlab/err.h"

struct candidate {
	long long used;
	size_t index;
};

static int least_recent_first(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->used != y->used)
		return x->used < y->used ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static bool within(long long total, size_t count, long long free_bytes, const struct blob_trim_limits *limits)
{
	return total <= limits->cap_bytes && count <= limits->max_entries &&
	       (limits->want_free_bytes <= 0 || free_bytes >= limits->want_free_bytes);
}

int blob_trim_plan(const struct blob_trim_entry *entries, size_t count, const struct blob_trim_limits *limits,
		   size_t *order, struct blob_trim_plan *ret_plan)
{
	struct candidate *candidates = NULL;
	struct blob_trim_plan plan = {0, 0, false};
	long long total = 0, free_bytes = limits->free_bytes;
	size_t left = count, n = 0;

	for (size_t i = 0; i < count; i++)
		total += entries[i].size;
	if (!within(total, left, free_bytes, limits)) {
		if (!(candidates = malloc((count ? count : 1) * sizeof(*candidates))))
			return err_set(LL_ENOMEM, "Out of memory.");
		for (size_t i = 0; i < count; i++)
			if (!entries[i].pinned)
				candidates[n++] = (struct candidate){entries[i].used, i};
		qsort(candidates, n, sizeof(*candidates), least_recent_first);
		for (size_t k = 0; k < n && !within(total, left, free_bytes, limits); k++) {
			long long size = entries[candidates[k].index].size;
			order[plan.count++] = candidates[k].index;
			plan.freed_bytes += size;
			total -= size;
			free_bytes += size;
			left--;
		}
		free(candidates);
	}
	plan.enough = within(total, left, free_bytes, limits);
	*ret_plan = plan;
	return 0;
}
