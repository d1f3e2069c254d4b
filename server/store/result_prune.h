/*
 * result_prune.h - what retention drops of a stored result (docs/
 * operations.md, "Bounded growth"): its raw samples, the per-run arrays
 * that grow with the runs a job asks for. Kept: everything else, the
 * facts, verification, files, summaries the agent sent, churn figures,
 * and (beside the result, in the store) the report's summary and the
 * compare data, whose sorted samples let compare answer as before.
 *
 * Dropped, per variant: warm.samples_us; cold.samples_us, page_faults,
 * hard_faults, soft_faults, read_bytes, read_ops; and the result's
 * measurement.warm_order. A pruned result says so: "raw_samples":
 * "dropped". A backend's retention calls it (store.h,
 * store_retention_apply()); a pure function on the JSON text.
 */
#ifndef LOADLAB_SERVER_STORE_RESULT_PRUNE_H
#define LOADLAB_SERVER_STORE_RESULT_PRUNE_H

#include <stddef.h>

/* The result TEXT (LEN bytes) without its raw samples, as new text
 * (free()); LL_EFORMAT when TEXT is not a JSON object. */
int result_prune_samples(const char *text, size_t len, char **ret_text);

#endif
