/* How a handler answers and reads its request (http.h): the replies
 * (reply_json(), reply_text(), reply_error(), reply_from_err()) and the
 * request's query and JSON body; http.c sends what they fill. */
#include "http.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int reply_json(struct http_reply *reply, int status, cJSON *body)
{
	reply->status = status;
	reply->json = body;
	return 0;
}

int reply_text(struct http_reply *reply, int status, const char *content_type, char *text)
{
	reply->status = status;
	reply->text = text;
	reply->content_type = content_type;
	return 0;
}

int reply_error(struct http_reply *reply, int status, const char *code, const char *fmt, ...)
{
	char message[512];
	cJSON *body = cJSON_CreateObject(), *error;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	http_utf8_sanitize(message);
	error = cJSON_AddObjectToObject(body, "error");
	cJSON_AddStringToObject(error, "code", code);
	cJSON_AddStringToObject(error, "message", message);
	cJSON_Delete(reply->json);
	free(reply->text);
	reply->text = NULL;
	return reply_json(reply, status, body);
}

/* Retry-After of a 503 for a store error (LL_ESTORE), in seconds: about
 * the PostgreSQL backend's longest reconnection backoff (pg_int.h). */
#define STORE_RETRY_AFTER_SECONDS 5

int reply_from_err(struct http_reply *reply, int rc)
{
	int status;

	switch (rc) {
	case LL_EINVAL:
	case LL_ERANGE:
	case LL_EFORMAT:
		status = 400;
		break;
	case LL_ETOOBIG:
		status = 413;
		break;
	case LL_EAUTH:
		status = 401;
		break;
	case LL_EFORBIDDEN:
		status = 403;
		break;
	case LL_ENOTFOUND:
		status = 404;
		break;
	case LL_ECONFLICT:
	case LL_ESTATE:
		status = 409;
		break;
	case LL_EUNSUPPORTED:
		status = 501;
		break;
	case LL_ESTORE:
		/* The store failed or its database cannot be reached (the
		 * PostgreSQL backend reconnects by itself): try again soon. */
		status = 503;
		reply->retry_after = STORE_RETRY_AFTER_SECONDS;
		break;
	case LL_ENOSPACE:
		/* The agents keep a refused result spooled and retry (5xx),
		 * no sooner than Retry-After; /healthz reports the condition. */
		status = 507;
		reply->retry_after = HTTP_STORAGE_FULL_RETRY_AFTER_SECONDS;
		reply->storage_full = true;
		break;
	default:
		status = 500;
		break;
	}
	return reply_error(reply, status, err_name(rc), "%s", err_message(rc));
}

const char *http_query(struct http_request *req, const char *key)
{
	return MHD_lookup_connection_value(req->connection, MHD_GET_ARGUMENT_KIND, key);
}

int http_body_object(struct http_request *req, struct http_reply *reply, bool empty_is_object,
		     cJSON **ret_root)
{
	int rc;

	if (req->body.len == 0 && empty_is_object) {
		*ret_root = cJSON_CreateObject();
		return 0;
	}
	err_clear();
	rc = json_parse_object(buf_str(&req->body), req->body.len, 0, ret_root);
	if (rc == LL_ETOOBIG) {
		reply_error(reply, 400, "too_deep", "%s", err_message(rc));
		return rc;
	}
	if (rc < 0) {
		reply_from_err(reply, rc);
		return rc;
	}
	return 0;
}

void http_utf8_sanitize(char *text)
{
	size_t len = strlen(text), offset;

	while (json_utf8_check(text, len, &offset) < 0)
		text[offset] = '?';
}
