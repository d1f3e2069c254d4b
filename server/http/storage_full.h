/*
 * storage_full.h - what the door remembers of writes refused for a full
 * disk (507 storage_full: a blob, a result, a job, any store write that
 * met ENOSPC or SQLITE_FULL), so that /healthz reports the condition
 * while it lasts and stops reporting it, without a restart, once space
 * has been freed.
 *
 * The condition holds from a refusal until the data folder's disk has
 * STORAGE_FULL_RECOVERY_BYTES more free than it had at the latest
 * refusal (a disk that is still as full as when it refused would refuse
 * again). Threads: any.
 */
#ifndef LOADLAB_SERVER_HTTP_STORAGE_FULL_H
#define LOADLAB_SERVER_HTTP_STORAGE_FULL_H

#include <stdbool.h>

/* Free space beyond the latest refusal's that ends the condition. */
#define STORAGE_FULL_RECOVERY_BYTES (1LL << 20)

struct server;

/* No refusal yet (http_start()). */
void storage_full_init(struct server *server);

/* Counts a refusal (loadlab_storage_full_refusals_total) and the disk's
 * free bytes at it. */
void storage_full_note(struct server *server);

/* True while the condition holds, FREE_BYTES being the disk's free
 * space now; ends it when enough was freed. */
bool storage_full_holds(struct server *server, long long free_bytes);

#endif
