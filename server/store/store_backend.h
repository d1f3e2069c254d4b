/*
 * store_backend.h - what a store backend implements: the one internal
 * interface behind store.h and store_async.h, as curl's vtls.h is behind
 * its TLS backends. store.c dispatches every store_*() call through the
 * backend that opened the handle; callers see store.h only.
 *
 * Adding a backend (the PostgreSQL one, say): a folder beside sqlite/
 * with its files, which define a `const struct store_backend` with its
 * scheme, and one entry in store.c's table of backends. store_open()
 * picks the backend by the --db value's scheme ("SCHEME:LOCATION"; a value
 * without a scheme is a path for the first backend, SQLite).
 *
 * Each backend defines struct store (the handle) and struct store_call (a
 * write in flight, store_async.h) for its own files only, both beginning
 * with a struct store_base; no file sees two backends' definitions.
 * store.c reads only that first member. The backend's functions keep
 * store.h's contracts: ids, plain values and cJSON bodies in, the same
 * bodies out, and 0 or a negative LL_E* code with a message.
 *
 * Most resources are no backend's either: store_<resource>.c (tokens,
 * jobs, results, series, schedules, blobs, history, bisections) define
 * store.h's functions once, over the statement layer (db.h), whose driver
 * a backend names (.db, db_driver.h); the tasks and their leases too
 * (store_lease.c, store_tasks.c). The ops below are what is still a
 * backend's: the webhook queue (PostgreSQL's daemons claim deliveries),
 * retention and the handle.
 *
 * Not a backend's: the queue's policy (queue.h), the writers' caches
 * (store_cache.h, kept in struct store_base), the blob files (blob_files.h), token kinds' names
 * (store_token_kind.c); a backend uses them.
 */
#ifndef LOADLAB_SERVER_STORE_BACKEND_H
#define LOADLAB_SERVER_STORE_BACKEND_H

#include "store.h"
#include "store_async.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct store_backend;
struct store_cache;

/* The first member of every backend's struct store and struct store_call:
 * set by store_open() on the handle, by the backend on a call. */
struct store_base {
	const struct store_backend *backend;
	/* The live tokens remembered (store_token_cache.h), NULL when out of
	 * memory. */
	struct token_cache *token_cache;
	/* The writers' caches (store_cache.h: leases' "job" members, the
	 * agents' last touches), shared by every write of the store, whichever
	 * thread runs it; NULL when out of memory (nothing remembered). The
	 * driver forgets them when a write is rolled back. */
	struct store_cache *cache;
	/* What the store was opened with (store_open()): the resources' view. */
	struct store_options options;
};

/* The options STORE was opened with. */
static inline const struct store_options *store_options_of(const struct store *store)
{
	return &((const struct store_base *)store)->options;
}

/* The operations still a backend's, each as store.h's function of the same
 * name without "store_". */

/* The series' webhook deliveries (store_webhooks.h), retention and
 * compaction (store.h, "series"). */
struct store_series_ops {
	int (*alert_webhook_status)(struct store *store, long long id, const char *status,
				    long long retry_at_ms);
	int (*webhook_due)(struct store *store, long long now, int limit, cJSON **ret_due);
	/* Retention and compaction (store.h); NULL for a backend that has
	 * none (nothing pruned, nothing compacted; PostgreSQL's autovacuum). */
	int (*retention_apply)(struct store *store, long long now, int limit, int *ret_pruned);
	int (*compact)(struct store *store, bool full, long long *ret_bytes_before,
		       long long *ret_bytes_after);
};

/* The handle: opening, checking and closing the store, its figures, and a
 * call dropped unanswered (store.h, store_async.h). */
struct store_handle_ops {
	/* Opens the store at LOCATION (what follows "SCHEME:") with OPTIONS. */
	int (*open)(const char *location, const struct store_options *options, struct store **ret_store);
	void (*close)(struct store *store);
	int (*integrity_check)(struct store *store);
	/* Adds to STATS what only the backend knows: store_bytes,
	 * store_free_bytes, commits, committed_ops, syncs (store_stats.c
	 * counts the rest). */
	int (*stats)(struct store *store, struct store_stats *stats);
	/* store_watch_tasks(); NULL for a backend whose daemon is the only
	 * writer (SQLite): a no-op. */
	int (*watch_tasks)(struct store *store, store_watch_fn fn, void *arg);
	/* store_role_take(); NULL for a store of one daemon: always held. */
	int (*role_take)(struct store *store, const char *role, bool *ret_held);
	void (*call_free)(struct store_call *call);
	/* store_backup(), store_restore() with LOCATION as open() takes it;
	 * NULL for a backend that has none (LL_EUNSUPPORTED). */
	int (*backup)(const char *location, const char *to, struct store_counts *ret_counts);
	int (*restore)(const char *from, const char *location, struct store_counts *ret_counts);
};

/* The handle's functions every backend has, PREFIX_open() ..
 * PREFIX_call_free() (store.h's store_open() .. store_stats(),
 * store_async.h's store_call_free()): their declarations, for the
 * backend's *_int.h, and its table's members, for its *_backend.c. */
#define STORE_HANDLE_DECLARE(prefix)                                                 \
	int prefix##_open(const char *location, const struct store_options *options, \
			  struct store **ret_store);                                 \
	void prefix##_close(struct store *s);                                        \
	int prefix##_integrity_check(struct store *s);                               \
	int prefix##_stats(struct store *s, struct store_stats *stats);              \
	void prefix##_call_free(struct store_call *call)
#define STORE_HANDLE_FUNCTIONS(prefix)                                                               \
	.open = prefix##_open, .close = prefix##_close, .integrity_check = prefix##_integrity_check, \
	.stats = prefix##_stats, .call_free = prefix##_call_free

struct db_driver;

struct store_backend {
	const char *scheme; /* "sqlite": --db sqlite:PATH */
	const char *alias;  /* another scheme of the same backend, or NULL ("postgres") */
	/* The statement layer's driver (db_driver.h), which the resources
	 * written once over db.h use. */
	const struct db_driver *db;
	const struct store_handle_ops *handle;
	const struct store_series_ops *series;
};

/* The backends (store.c's table names them). */
extern const struct store_backend store_backend_sqlite;
/* PostgreSQL (store/pg/): --db postgresql://... and postgres://... */
extern const struct store_backend store_backend_pg;

#endif
