/* maintenance.c - retention, then compaction (maintenance.h). */
#include "maintenance.h"

#include "loadlab/log.h"

#include <stdio.h>

int maintenance_run(struct store *store, long long now, bool full, struct maintenance_outcome *ret_outcome)
{
	struct maintenance_outcome o = {0};
	char pruned[32], before[32], after[32];
	int n, rc;

	do {
		if ((rc = store_retention_apply(store, now, MAINTENANCE_PRUNE_BATCH, &n)) < 0)
			return rc;
		o.pruned_results += n;
	} while (n == MAINTENANCE_PRUNE_BATCH);
	if ((rc = store_compact(store, full, &o.bytes_before, &o.bytes_after)) < 0)
		return rc;
	snprintf(pruned, sizeof(pruned), "%lld", o.pruned_results);
	snprintf(before, sizeof(before), "%lld", o.bytes_before);
	snprintf(after, sizeof(after), "%lld", o.bytes_after);
	log_event(LOG_INFO, "store_maintained", "pruned_results", pruned, "bytes_before", before,
		  "bytes_after", after, NULL);
	*ret_outcome = o;
	return 0;
}
