/*
 * auth.h - tokens: making them, hashing them, checking a request's.
 *
 * A token is a prefix naming its kind ("lladm_", "llusr_", "llenr_",
 * "llagt_") and 64 hex digits of 256 random bits from the OS. The store
 * keeps only its SHA-256 (OpenSSL); lookups compare hashes in constant
 * time. Tokens set through LOADLAB_ADMIN_TOKEN / LOADLAB_ENROLL_TOKEN may
 * be any 16..256 characters of [A-Za-z0-9._~+/=-].
 */
#ifndef LOADLAB_SERVER_AUTH_H
#define LOADLAB_SERVER_AUTH_H

#include "store/store.h"

#include <stdbool.h>
#include <stddef.h>

/* Who may call a route. */
enum auth_class {
	AUTH_ANYONE,          /* no token needed */
	AUTH_METRICS,         /* anyone when public_metrics, else a user */
	AUTH_READER,          /* anyone when public_read, else a user */
	AUTH_USER,            /* a user or admin token */
	AUTH_ADMIN,           /* the admin token */
	AUTH_ENROLL,          /* an enrollment (or admin) token */
	AUTH_AGENT,           /* an agent's own token */
	AUTH_USER_OR_AGENT,   /* a user, admin or agent token (blob HEAD, PUT: a builder) */
	AUTH_READER_OR_AGENT, /* anyone when public_read, else as AUTH_USER_OR_AGENT (blob GET) */
};

#define AUTH_TOKEN_MAX 256

/* Writes PREFIX followed by 64 random hex digits into OUT. */
int auth_token_generate(const char *prefix, char *out, size_t out_size);

/* SHA-256 of TOKEN. */
void auth_token_hash(const char *token, unsigned char hash[STORE_TOKEN_HASH_SIZE]);

/* True when TOKEN has the shape of a token (see above). */
bool auth_token_well_formed(const char *token);

/* Checks the Authorization header value HEADER (may be NULL) against
 * CLASS. 0 and *RET_TOKEN filled (kind, id, agent) when allowed;
 * LL_EAUTH for a missing, malformed, unknown or revoked token;
 * LL_EFORBIDDEN for a valid token of the wrong kind. */
int auth_check(struct store *store, enum auth_class class, bool public_read, bool public_metrics,
	       const char *header, struct store_token *ret_token);

/* On first start: makes the admin and enrollment tokens (or takes them
 * from LOADLAB_ADMIN_TOKEN / LOADLAB_ENROLL_TOKEN) and writes generated
 * ones to DATA_DIR/admin.token and DATA_DIR/enroll.token, mode 0600. */
int auth_bootstrap(struct store *store, const char *data_dir);

#endif
