/*
 * http_client.h - the agent's HTTP client for loadlabd (libcurl).
 *
 * One libcurl easy handle per struct http_client; a thread uses its own
 * client. Every answer body is read into a buffer with a limit and, when
 * it is JSON, parsed as an object. Unlike the CLI's client, an HTTP error
 * status is not a failure of the call: the fleet side decides what a 401,
 * a 409 stale_attempt or a 503 means, so it gets the status, the error
 * code and the message.
 *
 *	struct http_client c;
 *	struct http_answer a;
 *	if (http_client_open(&c, "http://127.0.0.1:8080", token) < 0) ...
 *	if (http_client_post(&c, "/api/v1/lease", "{\"wait\":20}", 30, &a) < 0)
 *		... the server could not be reached: err_message() says why ...
 *	else if (a.status == 200) ... a.body ...
 *	http_answer_release(&a);
 *	http_client_close(&c);
 */
#ifndef LOADLAB_AGENT_HTTP_CLIENT_H
#define LOADLAB_AGENT_HTTP_CLIENT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

/* Largest answer the agent reads (a lease is a few KiB). */
#define HTTP_CLIENT_BODY_LIMIT ((size_t)1 << 20)
/* Seconds allowed to connect. */
#define HTTP_CLIENT_CONNECT_TIMEOUT 10L

struct http_client {
	void *curl;        /* CURL *, opaque to callers */
	char *base_url;    /* without a trailing '/' */
	char *auth_header; /* "Authorization: Bearer ...", or NULL */
	bool (*abort_check)(void *context); /* polled during a transfer */
	void *abort_context;
};

struct http_answer {
	long status;          /* HTTP status */
	cJSON *body;          /* the answer when it is a JSON object, else NULL */
	char error_code[64];  /* "error.code" of an error body, else "" */
	char message[300];    /* one printable line for logs */
};

/* Once per process, before any thread uses a client. */
int http_client_global_init(void);

/* Prepares C for SERVER (http:// or https://) with TOKEN (may be NULL).
 * LL_EINVAL for another scheme or control characters, LL_ENOMEM. On
 * failure C needs no http_client_close(). */
int http_client_open(struct http_client *c, const char *server, const char *token);

/* Replaces the token sent from now on. */
int http_client_set_token(struct http_client *c, const char *token);

/* A transfer is abandoned (LL_ESTATE) as soon as CHECK(CONTEXT) returns
 * true, e.g. when the agent is asked to stop during a long poll. */
void http_client_set_abort(struct http_client *c, bool (*check)(void *context), void *context);

void http_client_close(struct http_client *c);

/* POSTs the JSON text BODY to PATH ("/api/v1/...") and waits at most
 * TIMEOUT_SECONDS for the whole answer. Returns 0 when the server answered
 * (any status) and fills *ANSWER; LL_EIO when it could not be reached or
 * the transfer broke, LL_ETOOBIG for an answer over the limit, LL_ESTATE
 * when aborted. *ANSWER needs http_answer_release() after a 0 return. */
int http_client_post(struct http_client *c, const char *path, const char *body,
		     long timeout_seconds, struct http_answer *answer);

void http_answer_release(struct http_answer *answer);

#endif
