/*
 * route_util.h - what several route_*.c handlers do alike: answer with the
 * outcome of a store call, take a body that must be empty, and serve a
 * store read (a list, or one row by the path's id) as it is.
 */
#ifndef LOADLAB_SERVER_ROUTE_UTIL_H
#define LOADLAB_SERVER_ROUTE_UTIL_H

#include "server.h"

/* Replies with BODY (owned by the reply from now) as STATUS when RC is 0,
 * else with the error RC (reply_from_err()). Returns 0, like reply_*(). */
int route_reply(struct http_reply *reply, int rc, int status, cJSON *body);

/* Replies 200 with the file open as FD (owned by the reply from now),
 * SIZE bytes, as application/octet-stream, read by libmicrohttpd as it
 * sends; when RC is negative, with that error instead (FD unused).
 * Returns 0. */
int route_reply_file(struct http_reply *reply, int rc, int fd, long long size);

/* Takes REQ's body, which must be absent or "{}" (WHAT names it in the
 * message): 0 when it is; else REPLY holds the 400 and a negative LL_E*
 * code is returned, for the handler to return 0. */
int route_empty_body(struct http_request *req, struct http_reply *reply, const char *what);

/* Replies 200 with what LIST(store, &list) gives, or with its error. */
int route_reply_list(struct http_request *req, struct http_reply *reply,
		     int (*list)(struct store *store, cJSON **ret_list));

/* Replies 200 with what READ(store, the path's id, &body) gives, or with
 * its error. */
int route_reply_by_id(struct http_request *req, struct http_reply *reply,
		      int (*read)(struct store *store, long long id, cJSON **ret_body));

/* --- owners (docs/series.md, "Owners") ---
 * A series and a schedule belong to a token's "KIND:NAME" (their owner,
 * store.h), or to "team:TEAM" when an admin names a team: every user token
 * of that team (POST /api/v1/tokens {"team"}) is then its owner. Others
 * may read them; only owners and admin tokens change them. */

#define ROUTE_CALLER_MAX 96

/* REQ's caller as an owner is named, "KIND:NAME", into OUT (SIZE bytes). */
const char *route_caller(const struct http_request *req, char *out, size_t size);

#define ROUTE_TEAM_MAX 64

/* Whether TEAM is a team's name: 1..ROUTE_TEAM_MAX of [A-Za-z0-9._-]. */
bool route_team_valid(const char *team);

/* Reads the "owner" an admin names in BODY, if any, into OWNER
 * (STORE_OWNER_MAX + 1 bytes): "user:NAME", "admin:NAME" or "team:TEAM".
 * 0 when absent (OWNER untouched) or read; LL_EFORBIDDEN when REQ's caller
 * is not an admin; LL_EINVAL for a bad value. */
int route_owner_named(const struct http_request *req, const cJSON *body, char *owner);

/* Whether REQ's caller is an admin or OWNER (or of OWNER's team; "" owns
 * nothing). */
bool route_is_owner(const struct http_request *req, const char *owner);

/* 0 when REQ's caller may change WHAT, owned by OWNER ("": nobody yet,
 * so anyone may); else LL_EFORBIDDEN with a message naming the owner. */
int route_owner_check(const struct http_request *req, const char *owner, const char *what);

/* What a caller who is not the owner sees of ALERT: its "webhook" status
 * without the reason ("failed", "pending", "delivered"). */
void route_alert_redact(cJSON *alert);

#endif
