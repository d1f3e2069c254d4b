/*
 * store_async.h - the writes of an agent's loop (lease, heartbeat,
 * result) without blocking the calling thread, for the HTTP layer: the
 * request's connection is suspended while its write waits for the next
 * group commit, so that a few HTTP threads keep every client's write in
 * the writer's next batch instead of one blocked thread per request.
 *
 * Each X_begin() takes the arguments of store.h's store_X() plus DONE and
 * CONTEXT, and queues the write. It returns 0 with *RET_CALL set, and the
 * store's writer thread then calls DONE(CONTEXT) exactly once, after the
 * write is committed (durably) or failed; DONE must not block or call the
 * store. Then X_end(*RET_CALL, ...) gives store_X()'s result and answer
 * and frees the call. On a negative return (the store is closing) DONE is
 * never called and there is no call. store_call_free() drops a call whose
 * DONE ran without taking its result (the client went away).
 *
 * Arguments given by pointer (a result's body) must stay valid until DONE.
 */
#ifndef LOADLAB_SERVER_STORE_ASYNC_H
#define LOADLAB_SERVER_STORE_ASYNC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct store;
struct store_call;

/* Called on the store's writer thread once a call's write is over. */
typedef void (*store_done_fn)(void *context);

int store_task_lease_begin(struct store *store, long long agent_id, long long now, store_done_fn done,
			   void *context, struct store_call **ret_call);
int store_task_lease_end(struct store_call *call, cJSON **ret_lease);

int store_agent_heartbeat_begin(struct store *store, long long agent_id, long long now, store_done_fn done,
				void *context, struct store_call **ret_call);
int store_agent_heartbeat_end(struct store_call *call, cJSON **ret_body);

int store_task_result_begin(struct store *store, long long agent_id, long long task_id, long long attempt,
			    const char *body, size_t body_len, long long now, store_done_fn done,
			    void *context, struct store_call **ret_call);
int store_task_result_end(struct store_call *call, cJSON **ret_body, bool *ret_replayed);
/* Whether the result CALL stored belongs to a calibration job (its spec
 * has "calibration"), as the writer found when it stored it: false for a
 * replay or a failure. Asked after DONE ran and before X_end(). */
bool store_task_result_is_calibration(const struct store_call *call);

void store_call_free(struct store_call *call);

#endif
