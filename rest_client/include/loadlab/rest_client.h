/*
 * rest_client.h - the HTTP client for loadlabd's REST API, shared by the
 * agent and the CLI (libcurl underneath).
 *
 * One libcurl easy handle per struct rest_client, reused for every request;
 * a thread uses its own client. Every answer body is read into a buffer
 * with a limit (REST_CLIENT_BODY_LIMIT unless the request says otherwise)
 * and, when it is one, parsed as a JSON object. An HTTP error status is not
 * a failure of the call: the caller gets the status, the error body's code
 * and a one-line message, and decides (the agent retries a 503, the CLI
 * turns it into an LL_E* code with rest_answer_error()).
 *
 *	struct rest_client c;
 *	struct rest_answer a;
 *	if (rest_client_open(&c, "http://127.0.0.1:8080", token) < 0) ...
 *	if (rest_client_post(&c, "/api/v1/lease", "{\"wait\":20}", 30, &a) < 0)
 *		... not reached: err_message() says why ...
 *	else if (a.status == 200) ... a.body ...
 *	rest_answer_release(&a);
 *	rest_client_close(&c);
 */
#ifndef LOADLAB_REST_CLIENT_H
#define LOADLAB_REST_CLIENT_H

#include "loadlab/buf.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* Largest answer read when a request names no limit: a lease is a few KiB,
 * up to a little more than a job body (JOB_SPEC_MAX_BODY, 1 MiB) with a
 * program's whole manifest. */
#define REST_CLIENT_BODY_LIMIT ((size_t)4 << 20)
/* Seconds allowed to connect. */
#define REST_CLIENT_CONNECT_TIMEOUT 10L
/* Seconds for a whole request when it names no timeout. */
#define REST_CLIENT_TIMEOUT 120L
/* Deepest JSON nesting parsed from an answer. */
#define REST_CLIENT_MAX_DEPTH 64

/* The fields are private to rest_client.c. */
struct rest_client {
	void *curl;        /* CURL * */
	char *base_url;    /* the server URL without a trailing '/' */
	char *auth_header; /* "Authorization: Bearer ...", or NULL */
	bool (*abort_check)(void *context);
	void *abort_context;
};

/* What the server answered. Filled by rest_client_send(); the caller
 * releases it with rest_answer_release() after a 0 return. */
struct rest_answer {
	long status;     /* the HTTP status */
	struct buf text; /* the body as received, NUL-terminated */
	cJSON *body;     /* the body when it is a JSON object, else NULL */
	/* For a status outside 2xx only (else "" and false): */
	char error_code[64]; /* "error.code" of an error body, one printable line, else "" */
	char message[300];   /* "error.message" when a non-empty string, else the body's
			      * first 119 bytes; one printable line (control characters
			      * are spaces, a cut keeps UTF-8 sequences whole) */
	bool server_message; /* message is the error body's "error.message" */
	long retry_after;    /* seconds of a Retry-After header (either form, at most
			      * a day), else 0 */
};

/* One request. */
struct rest_request {
	const char *method;   /* "GET", "POST", "DELETE", "PATCH", ... */
	const char *path;     /* after the server URL, starting with '/', query included */
	const char *body;     /* JSON text sent with Content-Type application/json; NULL:
			       * none (a method other than GET then sends an empty body) */
	size_t limit;         /* largest answer body in bytes; 0: REST_CLIENT_BODY_LIMIT */
	long timeout_seconds; /* the whole request; 0: REST_CLIENT_TIMEOUT */
};

/* Once per process, before any thread uses a client. USER_AGENT (borrowed,
 * must outlive the clients; NULL: "loadlab/<version>") is sent with every
 * request. LL_EIO when libcurl cannot start. */
int rest_client_global_init(const char *user_agent);

/* Undoes rest_client_global_init() once no client is left. */
void rest_client_global_cleanup(void);

/* Prepares C for SERVER (http:// or https://) with TOKEN (NULL: no
 * Authorization header). LL_EINVAL for another scheme, control characters
 * in SERVER or TOKEN; LL_ENOMEM. On failure C needs no rest_client_close(). */
int rest_client_open(struct rest_client *c, const char *server, const char *token);

/* Replaces the token sent from now on (NULL: none). LL_EINVAL for control
 * characters, LL_ENOMEM; the old token stays on failure. */
int rest_client_set_token(struct rest_client *c, const char *token);

/* From now on a transfer is abandoned (LL_ESTATE) as soon as CHECK(CONTEXT)
 * returns true; CHECK is polled at least once a second during a transfer.
 * NULL: never. */
void rest_client_set_abort(struct rest_client *c, bool (*check)(void *context), void *context);

/* Frees what rest_client_open() made; a zeroed client is fine. */
void rest_client_close(struct rest_client *c);

/* Sends REQUEST and fills *ANSWER. Returns 0 when the server answered, with
 * any status; then *ANSWER needs rest_answer_release(). Otherwise *ANSWER
 * is left empty (releasing it is harmless) and: LL_EIO when the server
 * cannot be reached or the transfer breaks or times out, LL_ETOOBIG for an
 * answer body over the limit, LL_ESTATE when the abort check said stop,
 * LL_ENOMEM. */
int rest_client_send(struct rest_client *c, const struct rest_request *request, struct rest_answer *answer);

/* rest_client_send() of a PUT to PATH whose body is the file FILE_PATH,
 * SIZE bytes (application/octet-stream), read as it is sent, never whole
 * in memory; no overall time limit, but a transfer that moves nothing for
 * REST_CLIENT_TIMEOUT seconds fails (LL_EIO). PROGRESS (may be NULL) is
 * called with the bytes sent so far, at least once a second. LL_EIO also
 * when the file cannot be opened or read. A method of "HEAD" given to
 * rest_client_send() asks for the headers only. */
int rest_client_upload(struct rest_client *c, const char *path, const char *file_path, long long size,
		       void (*progress)(void *context, long long sent, long long total), void *context,
		       struct rest_answer *answer);

/* rest_client_send() of a GET of PATH whose 2xx body is written, as it
 * arrives, to the file FILE_PATH (created or emptied), never whole in
 * memory; at most LIMIT bytes (LL_ETOOBIG past it). Its size goes to
 * RET_SIZE (may be NULL). Another status's body is read into ANSWER as
 * rest_client_send() reads it, and the file is left empty. No overall
 * time limit, but a transfer that moves nothing for REST_CLIENT_TIMEOUT
 * seconds fails (LL_EIO); LL_EIO also when the file cannot be written.
 * The caller removes the file when it does not want it. */
int rest_client_download(struct rest_client *c, const char *path, const char *file_path, long long limit,
			 long long *ret_size, struct rest_answer *answer);

/* rest_client_send() of a POST of the JSON text BODY to PATH with
 * REST_CLIENT_BODY_LIMIT and a timeout of TIMEOUT_SECONDS. */
int rest_client_post(struct rest_client *c, const char *path, const char *body, long timeout_seconds,
		     struct rest_answer *answer);

/* Frees what *ANSWER holds; it is empty afterwards. */
void rest_answer_release(struct rest_answer *answer);

/* The LL_E* code for an HTTP error STATUS: 400 LL_EINVAL, 401 LL_EAUTH,
 * 403 LL_EFORBIDDEN, 404 LL_ENOTFOUND, 409 LL_ECONFLICT, 413 LL_ETOOBIG,
 * 501 LL_EUNSUPPORTED, other 5xx LL_ESTORE, anything else LL_EINVAL. */
int rest_status_code(long status);

/* 0 for a 2xx ANSWER. Otherwise records and returns rest_status_code() of
 * its status with the message "<server message> (HTTP <status> <code>)",
 * or, without a server message, "The server answered HTTP <status> to
 * <METHOD> <PATH>: <start of the body>". */
int rest_answer_error(const struct rest_answer *answer, const char *method, const char *path);

/* TEXT percent-encoded for a URL's query (RFC 3986: all but letters,
 * digits and "-._~" as %XX). The caller frees it; NULL when out of memory. */
char *rest_escape(const char *text);

/* Copies TEXT into OUT (SIZE > 0 bytes) as one printable line: control
 * characters become spaces and a cut never splits a UTF-8 sequence, so a
 * server's text cannot move the cursor or add lines. */
void rest_one_line(const char *text, char *out, size_t size);

#endif
