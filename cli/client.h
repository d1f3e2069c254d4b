/*
 * client.h - the CLI's use of the REST client (loadlab/rest_client.h).
 *
 * The server URL and token are set once by main() from the global options
 * or the environment. Unlike the agent, the CLI treats every status outside
 * 2xx as a failure: the error body's message becomes the err_message() of
 * the returned code, so that a command prints one clear line and exits 2.
 *
 *	cJSON *job = NULL;
 *	int rc = client_fetch_object("GET", "/api/v1/jobs/7", NULL, &job);
 *	if (rc < 0)
 *		return client_fail("status", rc);
 *	...
 *	cJSON_Delete(job);
 */
#ifndef LOADLAB_CLI_CLIENT_H
#define LOADLAB_CLI_CLIENT_H

#include "loadlab/rest_client.h"

#include <cjson/cJSON.h>

/* Largest JSON answer the CLI reads (a job with 256 tasks is ~100 KiB). */
#define CLIENT_BODY_LIMIT ((size_t)4 << 20)
/* Largest report or comparison the CLI reads. */
#define CLIENT_REPORT_LIMIT ((size_t)16 << 20)

/* Sets the server URL and token every later client_open() uses. Both are
 * borrowed and must outlive the clients; TOKEN may be NULL or "". */
void client_configure(const char *server, const char *token);

/* rest_client_open() for the configured server and token (same errors). */
int client_open(struct rest_client *c);

/* Sends METHOD to PATH with the JSON text BODY (NULL: no body), reading at
 * most LIMIT bytes of answer. Returns 0 for a 2xx answer, stored in
 * *ANSWER for the caller to release. Otherwise *ANSWER is empty and the
 * code is rest_client_send()'s (LL_EIO, LL_ETOOBIG) or, for any other
 * status, rest_answer_error()'s, with a hint when a 401 came to a request
 * sent without a token. */
int client_request(struct rest_client *c, const char *method, const char *path, const char *body,
		   size_t limit, struct rest_answer *answer);

/* client_request() for an answer that must be a JSON object (at most
 * CLIENT_BODY_LIMIT bytes); LL_EFORMAT when it is not. The caller deletes
 * *RET_ROOT, untouched on failure. */
int client_get_object(struct rest_client *c, const char *method, const char *path, const char *body,
		      cJSON **ret_root);

/* client_request() and client_get_object() on a client of their own, for
 * a command that makes one request. */
int client_fetch(const char *method, const char *path, const char *body, size_t limit,
		 struct rest_answer *answer);

int client_fetch_object(const char *method, const char *path, const char *body, cJSON **ret_root);

/* Writes BODY to stdout as the server sent it, ending with a newline. */
void client_print_body(const struct buf *body);

/* Prints "loadlab COMMAND: <err_message(RC)>" as one line on stderr and
 * returns 2, the CLI's exit code for errors. */
int client_fail(const char *command, int rc);

#endif
