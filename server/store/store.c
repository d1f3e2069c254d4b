/*
 * store.c - store.h's functions: store_open() picks the backend by the
 * --db value's scheme, and every other call goes to the backend of its
 * handle (store_backend.h).
 */
#include "db_driver.h"
#include "store_backend.h"
#include "store_cache.h"
#include "store_stats.h"
#include "store_token_cache.h"

#include "loadlab/err.h"

#include <string.h>

/* The backends, the first being the one of a --db value without a scheme. */
static const struct store_backend *const backends[] = {
	&store_backend_sqlite,
	&store_backend_pg,
};

/* Whether SCHEME (may be NULL) is the N bytes at PATH. */
static bool scheme_is(const char *scheme, const char *path, size_t n)
{
	return scheme && strlen(scheme) == n && strncmp(scheme, path, n) == 0;
}

static const struct store_backend *backend_of(const struct store *store)
{
	return ((const struct store_base *)store)->backend;
}

static const struct store_backend *backend_of_call(const struct store_call *call)
{
	return ((const struct store_base *)call)->backend;
}

/* The length of LOCATION's scheme ("sqlite" of "sqlite:/var/lib/x.db"): a
 * letter, then letters, digits, '+', '-' or '.', up to a ':'; 0 when it has
 * none (a path, "/var/lib/x.db" or "./a:b"). RFC 3986, section 3.1. */
static size_t scheme_length(const char *location)
{
	size_t n = 0;

	if (!((location[0] >= 'a' && location[0] <= 'z') || (location[0] >= 'A' && location[0] <= 'Z')))
		return 0;
	while (location[n] &&
	       strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.", location[n]))
		n++;
	return location[n] == ':' ? n : 0;
}

/* The backend of PATH's scheme (store_open()), *RET_LOCATION what follows
 * the scheme; LL_EINVAL when no backend has the scheme. */
static int backend_for(const char *path, const struct store_backend **ret_backend, const char **ret_location)
{
	size_t n = scheme_length(path);
	const struct store_backend *backend = n ? NULL : backends[0];

	for (size_t i = 0; !backend && i < sizeof(backends) / sizeof(backends[0]); i++)
		if (scheme_is(backends[i]->scheme, path, n) || scheme_is(backends[i]->alias, path, n))
			backend = backends[i];
	if (!backend)
		return err_set(LL_EINVAL, "No store backend for '%.*s:' (--db).", (int)n, path);
	*ret_backend = backend;
	*ret_location = n ? path + n + 1 : path;
	return 0;
}

int store_open(const char *path, const struct store_options *options, struct store **ret_store)
{
	const struct store_backend *backend;
	const char *location;
	struct store *store = NULL;
	int rc;

	if ((rc = backend_for(path, &backend, &location)) < 0 ||
	    (rc = backend->handle->open(location, options, &store)) < 0)
		return rc;
	((struct store_base *)store)->backend = backend;
	((struct store_base *)store)->options = *options;
	/* Live tokens are remembered: until a token is written where this
	 * daemon is the only writer, else for a few seconds (store_token_cache.h). */
	((struct store_base *)store)->token_cache =
		token_cache_new(backend->db->single_writer ? 0 : STORE_TOKEN_CACHE_SHARED_MS);
	((struct store_base *)store)->cache = store_cache_new();
	*ret_store = store;
	return 0;
}

/* backend_for() of a backend that has its own backup (RESTORE: restore);
 * LL_EUNSUPPORTED naming the tool to use otherwise. */
static int backend_with_backup(const char *path, bool restore, const struct store_backend **ret_backend,
			       const char **ret_location)
{
	int rc = backend_for(path, ret_backend, ret_location);

	if (rc == 0 && (restore ? !(*ret_backend)->handle->restore : !(*ret_backend)->handle->backup))
		rc = err_set(LL_EUNSUPPORTED, "The %s store is %s with its own tool (docs/operations.md).",
			     (*ret_backend)->scheme, restore ? "restored" : "backed up");
	return rc;
}

int store_backup(const char *path, const char *to, struct store_counts *ret_counts)
{
	const struct store_backend *backend;
	const char *location;
	int rc = backend_with_backup(path, false, &backend, &location);

	return rc < 0 ? rc : backend->handle->backup(location, to, ret_counts);
}

int store_restore(const char *from, const char *path, struct store_counts *ret_counts)
{
	const struct store_backend *backend;
	const char *location;
	int rc = backend_with_backup(path, true, &backend, &location);

	return rc < 0 ? rc : backend->handle->restore(from, location, ret_counts);
}

int store_task_lease(struct store *store, long long agent_id, long long now, cJSON **ret_lease)
{
	struct store_call *call = NULL;
	int rc = store_task_lease_begin(store, agent_id, now, NULL, NULL, &call);

	return rc < 0 ? rc : store_task_lease_end(call, ret_lease);
}

int store_agent_heartbeat(struct store *store, long long agent_id, long long now, cJSON **ret_body)
{
	struct store_call *call = NULL;
	int rc = store_agent_heartbeat_begin(store, agent_id, now, NULL, NULL, &call);

	return rc < 0 ? rc : store_agent_heartbeat_end(call, ret_body);
}

int store_task_result(struct store *store, long long agent_id, long long task_id, long long attempt,
		      const char *body, size_t body_len, long long now, cJSON **ret_body, bool *ret_replayed)
{
	struct store_call *call = NULL;
	int rc = store_task_result_begin(store, agent_id, task_id, attempt, body, body_len, now, NULL, NULL,
					 &call);

	return rc < 0 ? rc : store_task_result_end(call, ret_body, ret_replayed);
}

void store_close(struct store *store)
{
	struct token_cache *tokens;
	struct store_cache *cache;

	if (!store)
		return;
	tokens = ((struct store_base *)store)->token_cache;
	cache = ((struct store_base *)store)->cache;
	backend_of(store)->handle->close(store); /* its writes are over */
	token_cache_free(tokens);
	store_cache_free(cache);
}

int store_watch_tasks(struct store *store, store_watch_fn fn, void *arg)
{
	const struct store_handle_ops *ops = backend_of(store)->handle;

	return ops->watch_tasks ? ops->watch_tasks(store, fn, arg) : 0;
}

int store_role_take(struct store *store, const char *role, bool *ret_held)
{
	const struct store_handle_ops *ops = backend_of(store)->handle;

	*ret_held = !ops->role_take;
	return ops->role_take ? ops->role_take(store, role, ret_held) : 1;
}

int store_integrity_check(struct store *store)
{
	return backend_of(store)->handle->integrity_check(store);
}

int store_alert_webhook_status(struct store *store, long long id, const char *status, long long retry_at_ms)
{
	return backend_of(store)->series->alert_webhook_status(store, id, status, retry_at_ms);
}

int store_webhook_due(struct store *store, long long now, int limit, cJSON **ret_due)
{
	return backend_of(store)->series->webhook_due(store, now, limit, ret_due);
}

int store_stats(struct store *store, long long now, struct store_stats *ret_stats)
{
	struct store_stats st = {0};
	int rc = store_stats_count(store, now, &st);

	if (rc == 0)
		rc = backend_of(store)->handle->stats(store, &st);
	if (rc == 0)
		*ret_stats = st;
	return rc;
}

void store_call_free(struct store_call *call)
{
	if (call)
		backend_of_call(call)->handle->call_free(call);
}

/* A backend without retention or compaction has nothing to do (store_backend.h). */
int store_retention_apply(struct store *store, long long now, int limit, int *ret_pruned)
{
	const struct store_series_ops *ops = backend_of(store)->series;

	*ret_pruned = 0;
	return ops->retention_apply ? ops->retention_apply(store, now, limit, ret_pruned) : 0;
}

int store_compact(struct store *store, bool full, long long *ret_bytes_before, long long *ret_bytes_after)
{
	const struct store_series_ops *ops = backend_of(store)->series;

	*ret_bytes_before = *ret_bytes_after = 0;
	return ops->compact ? ops->compact(store, full, ret_bytes_before, ret_bytes_after) : 0;
}
