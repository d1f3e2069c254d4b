/*
 * identity.h - the agent's own credentials, kept in DATA_DIR/agent.json
 * ({"id": N, "token": "llagt_...", "server": URL, "name": NAME}, readable
 * by its owner only) after enrolling, and read again on every start.
 */
#ifndef LOADLAB_AGENT_IDENTITY_H
#define LOADLAB_AGENT_IDENTITY_H

#include <stdbool.h>

#define IDENTITY_TOKEN_MAX 128

struct identity {
	long long id;
	char token[IDENTITY_TOKEN_MAX + 1];
};

/* True when TOKEN has the shape of an agent token as loadlabd makes them
 * (server/auth.h): "llagt_" and 64 hex digits, nothing else. An enroll
 * answer whose token is not of that shape is refused before anything is
 * saved: a hostile server cannot put control characters in agent.json. */
bool identity_token_valid(const char *token);

/* Reads DATA_DIR/agent.json. LL_ENOTFOUND when there is none (the agent
 * must enroll), LL_EFORMAT when it is damaged (its token not of the shape
 * above included). *RET untouched on failure. */
int identity_load(const char *data_dir, struct identity *ret);

/* Writes DATA_DIR/agent.json (mode 0600), replacing it atomically. */
int identity_save(const char *data_dir, const struct identity *identity, const char *server,
		  const char *name);

/* The path of the identity file into OUT, for messages. */
void identity_path(const char *data_dir, char *out, unsigned size);

#endif
