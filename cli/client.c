#include "client.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *configured_server = "http://127.0.0.1:8080";
static const char *configured_token;

void client_configure(const char *server, const char *token)
{
	if (server && *server)
		configured_server = server;
	configured_token = token && *token ? token : NULL;
}

const char *client_server(void)
{
	return configured_server;
}

static int has_control_characters(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

int client_open(struct client *c)
{
	size_t len;

	memset(c, 0, sizeof(*c));
	if (strncmp(configured_server, "http://", 7) != 0 &&
	    strncmp(configured_server, "https://", 8) != 0)
		return err_set(LL_EINVAL, "The server '%s' is not an http:// or https:// URL.",
			       configured_server);
	if (has_control_characters(configured_server))
		return err_set(LL_EINVAL, "The server URL contains a control character.");
	if (configured_token && has_control_characters(configured_token))
		return err_set(LL_EINVAL, "The token contains a control character.");
	len = strlen(configured_server);
	while (len > 0 && configured_server[len - 1] == '/')
		len--;
	c->base_url = strndup(configured_server, len);
	if (configured_token && asprintf(&c->auth_header, "Authorization: Bearer %s",
					 configured_token) < 0)
		c->auth_header = NULL;
	c->curl = curl_easy_init();
	if (!c->base_url || (configured_token && !c->auth_header) || !c->curl) {
		client_close(c);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	return 0;
}

void client_close(struct client *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->base_url);
	free(c->auth_header);
	memset(c, 0, sizeof(*c));
}

struct client_sink {
	struct buf *body;
	int overflow;
};

static size_t client_write(char *data, size_t size, size_t count, void *userdata)
{
	struct client_sink *sink = userdata;
	size_t n = size * count;

	if (buf_append(sink->body, data, n) < 0) {
		sink->overflow = 1;
		return 0; /* makes curl stop with CURLE_WRITE_ERROR */
	}
	return n;
}

/* Copies TEXT into OUT as one printable line: control characters become
 * spaces, so a server's message cannot move the cursor or add lines. */
static void one_line(const char *text, char *out, size_t size)
{
	size_t i;

	for (i = 0; text[i] && i + 1 < size; i++)
		out[i] = ((unsigned char)text[i] < 0x20 || text[i] == 0x7f) ? ' ' : text[i];
	out[i] = '\0';
}

static int status_code(long status)
{
	switch (status) {
	case 400: return LL_EINVAL;
	case 401: return LL_EAUTH;
	case 403: return LL_EFORBIDDEN;
	case 404: return LL_ENOTFOUND;
	case 409: return LL_ECONFLICT;
	case 413: return LL_ETOOBIG;
	case 501: return LL_EUNSUPPORTED;
	default: return status >= 500 ? LL_ESTORE : LL_EINVAL;
	}
}

/* Turns a 4xx/5xx answer into a code and one-line message, from the error
 * body when it is one, else from the status and the start of the body. */
static int client_http_error(const char *method, const char *path, long status,
			     const struct buf *body)
{
	int code = status_code(status);
	cJSON *root = NULL;
	const cJSON *error, *name, *message;
	char text[300], what[64];

	if (body->len && json_parse_object(body->data, body->len, 0, &root) == 0) {
		error = cJSON_GetObjectItemCaseSensitive(root, "error");
		name = cJSON_GetObjectItemCaseSensitive(error, "code");
		message = cJSON_GetObjectItemCaseSensitive(error, "message");
		if (cJSON_IsString(message) && *message->valuestring) {
			one_line(message->valuestring, text, sizeof(text));
			one_line(cJSON_IsString(name) ? name->valuestring : "error", what,
				 sizeof(what));
			cJSON_Delete(root);
			if (status == 401 && !configured_token)
				return err_set(code, "%s (HTTP 401 %s; no token given: use --token "
					       "or LOADLAB_TOKEN)", text, what);
			return err_set(code, "%s (HTTP %ld %s)", text, status, what);
		}
		cJSON_Delete(root);
	}
	one_line(buf_str(body), text, 120);
	return err_set(code, "The server answered HTTP %ld to %s %s%s%s", status, method, path,
		       *text ? ": " : ".", text);
}

/* Appends HEADER to *LIST, which stays whole when that fails. */
static int add_header(struct curl_slist **list, const char *header)
{
	struct curl_slist *longer = curl_slist_append(*list, header);

	if (!longer)
		return LL_ENOMEM;
	*list = longer;
	return 0;
}

int client_request(struct client *c, const char *method, const char *path, const char *body,
		   struct buf *response, long *ret_status)
{
	CURL *curl = c->curl;
	struct curl_slist *headers = NULL;
	struct client_sink sink = {response, 0};
	char errbuf[CURL_ERROR_SIZE] = "";
	char *url = NULL;
	long status = 0;
	CURLcode res;
	int rc;

	if (asprintf(&url, "%s%s", c->base_url, path) < 0)
		return err_set(LL_ENOMEM, "Out of memory.");
	if (add_header(&headers, "Expect:") < 0 ||
	    (c->auth_header && add_header(&headers, c->auth_header) < 0) ||
	    (body && add_header(&headers, "Content-Type: application/json") < 0)) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "loadlab/" LOADLAB_VERSION);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, CLIENT_CONNECT_TIMEOUT);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, CLIENT_REQUEST_TIMEOUT);
	curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)response->limit);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, client_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	if (body) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	} else if (strcmp(method, "GET") != 0) {
		/* POST with an empty body, e.g. a cancel. */
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
	}
	res = curl_easy_perform(curl);
	if (sink.overflow || res == CURLE_FILESIZE_EXCEEDED) {
		rc = err_set(LL_ETOOBIG, "The server's answer to %s %s is larger than %zu bytes.",
			     method, path, response->limit);
		goto out;
	}
	if (res != CURLE_OK) {
		rc = err_set(LL_EIO, "Cannot reach the server at %s: %s.", c->base_url,
			     *errbuf ? errbuf : curl_easy_strerror(res));
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status > 299) {
		rc = client_http_error(method, path, status, response);
		goto out;
	}
	if (ret_status)
		*ret_status = status;
	rc = 0;
out:
	/* The handle keeps pointers to these until the next reset. */
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(headers);
	free(url);
	return rc;
}

int client_get_object(struct client *c, const char *method, const char *path, const char *body,
		      cJSON **ret_root)
{
	struct buf response;
	cJSON *root = NULL;
	int rc;

	buf_init(&response, CLIENT_BODY_LIMIT);
	rc = client_request(c, method, path, body, &response, NULL);
	if (rc < 0)
		goto out;
	rc = json_parse_object(response.data, response.len, 64, &root);
	if (rc < 0) {
		rc = err_set(LL_EFORMAT, "The server's answer to %s %s is not a JSON object.",
			     method, path);
		goto out;
	}
	*ret_root = root;
out:
	buf_release(&response);
	return rc;
}

int client_fail(const char *command, int rc)
{
	char text[600];

	one_line(err_message(rc), text, sizeof(text));
	fprintf(stderr, "loadlab %s: %s\n", command, text);
	return 2;
}
