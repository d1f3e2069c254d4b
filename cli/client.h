/*
 * client.h - the CLI's HTTP client for loadlabd's REST API.
 *
 * One libcurl easy handle per struct client, reused for every request of a
 * command. The server URL and token are set once by main() from the global
 * options or the environment. Every response body goes into a struct buf
 * with a size limit; an error response's JSON body
 * ({"error": {"code", "message"}}) becomes the err_message() of the
 * returned code, so that a command prints one clear line and exits 2.
 *
 *	struct client c;
 *	cJSON *job = NULL;
 *	if (client_open(&c) < 0 || client_get_object(&c, "GET", "/api/v1/jobs/7", NULL, &job) < 0)
 *		return client_fail("status", rc);
 *	...
 *	cJSON_Delete(job);
 *	client_close(&c);
 */
#ifndef LOADLAB_CLI_CLIENT_H
#define LOADLAB_CLI_CLIENT_H

#include "loadlab/buf.h"

#include <cjson/cJSON.h>

/* Largest JSON answer the CLI reads (a job with 256 tasks is ~100 KiB). */
#define CLIENT_BODY_LIMIT ((size_t)4 << 20)
/* Largest report or comparison the CLI reads. */
#define CLIENT_REPORT_LIMIT ((size_t)16 << 20)
/* Seconds to connect, and for a whole request. */
#define CLIENT_CONNECT_TIMEOUT 10L
#define CLIENT_REQUEST_TIMEOUT 120L

struct client {
	void *curl;        /* CURL *, opaque to callers */
	char *base_url;    /* the server URL without a trailing '/' */
	char *auth_header; /* "Authorization: Bearer ...", NULL without a token */
};

/* Sets the server URL and token every later client_open() uses. Both are
 * borrowed and must outlive the clients; TOKEN may be NULL. */
void client_configure(const char *server, const char *token);

/* The configured server URL (borrowed), for messages. */
const char *client_server(void);

/* Prepares C for requests to the configured server. LL_EINVAL for a server
 * URL that is not http:// or https:// or a token with control characters,
 * LL_ENOMEM. On failure C needs no client_close(). */
int client_open(struct client *c);

/* Frees what client_open() made; a zeroed client is fine. */
void client_close(struct client *c);

/* Sends METHOD to PATH (the part after the server URL, starting with '/',
 * query included) with the JSON text BODY (NULL: no body) and appends the
 * response body to RESPONSE, whose limit caps what is read. Returns 0 for a
 * 2xx answer and stores its status in *RET_STATUS (may be NULL). Otherwise:
 * LL_EIO when the server cannot be reached or the transfer fails,
 * LL_ETOOBIG when the answer exceeds RESPONSE's limit, and for 4xx/5xx a
 * code for the status (400 LL_EINVAL, 401 LL_EAUTH, 403 LL_EFORBIDDEN, 404
 * LL_ENOTFOUND, 409 LL_ECONFLICT, 413 LL_ETOOBIG, 501 LL_EUNSUPPORTED,
 * other 5xx LL_ESTORE, other 4xx LL_EINVAL) with the server's message. */
int client_request(struct client *c, const char *method, const char *path, const char *body,
		   struct buf *response, long *ret_status);

/* client_request() for an answer that must be a JSON object (at most
 * CLIENT_BODY_LIMIT bytes); LL_EFORMAT when it is not. The caller deletes
 * *RET_ROOT. */
int client_get_object(struct client *c, const char *method, const char *path, const char *body,
		      cJSON **ret_root);

/* Prints "loadlab COMMAND: <err_message(RC)>" as one line on stderr and
 * returns 2, the CLI's exit code for errors. */
int client_fail(const char *command, int rc);

#endif
