/* storage_full.c - writes refused for a full disk (storage_full.h). */
#include "storage_full.h"
#include "server.h"

void storage_full_init(struct server *server)
{
	atomic_store(&server->storage_full_free_bytes, -1);
}

void storage_full_note(struct server *server)
{
	long long free_bytes = 0;

	metrics_add(&server->metrics.storage_full_refusals, 1);
	if (!server->blobs || blobs_disk_free(server->blobs, &free_bytes) < 0)
		free_bytes = 0;
	atomic_store(&server->storage_full_free_bytes, free_bytes);
}

bool storage_full_holds(struct server *server, long long free_bytes)
{
	long long at_refusal = atomic_load(&server->storage_full_free_bytes);

	if (at_refusal < 0)
		return false;
	if (free_bytes < at_refusal + STORAGE_FULL_RECOVERY_BYTES)
		return true;
	/* Freed: over unless a refusal came in meanwhile. */
	atomic_compare_exchange_strong(&server->storage_full_free_bytes, &at_refusal, -1);
	return false;
}
