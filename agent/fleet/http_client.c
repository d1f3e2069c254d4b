#include "http_client.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int http_client_global_init(void)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return err_set(LL_EIO, "libcurl failed to initialise.");
	return 0;
}

static bool has_control_characters(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static char *copy_text(const char *text, size_t len)
{
	char *out = malloc(len + 1);

	if (out) {
		memcpy(out, text, len);
		out[len] = '\0';
	}
	return out;
}

int http_client_open(struct http_client *c, const char *server, const char *token)
{
	size_t len;

	memset(c, 0, sizeof(*c));
	if (strncmp(server, "http://", 7) != 0 && strncmp(server, "https://", 8) != 0)
		return err_set(LL_EINVAL, "The server '%s' is not an http:// or https:// URL.", server);
	if (has_control_characters(server))
		return err_set(LL_EINVAL, "The server URL contains a control character.");
	len = strlen(server);
	while (len > 0 && server[len - 1] == '/')
		len--;
	c->base_url = copy_text(server, len);
	c->curl = curl_easy_init();
	if (!c->base_url || !c->curl) {
		http_client_close(c);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	if (token && http_client_set_token(c, token) < 0) {
		int rc = err_set(LL_EINVAL, "The token contains a control character.");
		http_client_close(c);
		return rc;
	}
	return 0;
}

int http_client_set_token(struct http_client *c, const char *token)
{
	static const char prefix[] = "Authorization: Bearer ";
	char *header;
	size_t len = strlen(token);

	if (has_control_characters(token))
		return err_set(LL_EINVAL, "The token contains a control character.");
	header = malloc(sizeof(prefix) + len);
	if (!header)
		return err_set(LL_ENOMEM, "Out of memory.");
	memcpy(header, prefix, sizeof(prefix) - 1);
	memcpy(header + sizeof(prefix) - 1, token, len + 1);
	free(c->auth_header);
	c->auth_header = header;
	return 0;
}

void http_client_set_abort(struct http_client *c, bool (*check)(void *context), void *context)
{
	c->abort_check = check;
	c->abort_context = context;
}

void http_client_close(struct http_client *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->base_url);
	free(c->auth_header);
	memset(c, 0, sizeof(*c));
}

void http_answer_release(struct http_answer *answer)
{
	cJSON_Delete(answer->body);
	memset(answer, 0, sizeof(*answer));
}

struct sink {
	struct buf *body;
	bool overflow;
};

static size_t on_data(char *data, size_t size, size_t count, void *userdata)
{
	struct sink *sink = userdata;
	size_t n = size * count;

	if (buf_append(sink->body, data, n) < 0) {
		sink->overflow = true;
		return 0; /* curl stops with CURLE_WRITE_ERROR */
	}
	return n;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct http_client *c = userdata;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return c->abort_check && c->abort_check(c->abort_context) ? 1 : 0;
}

/* Copies TEXT into OUT as one printable line. */
static void one_line(const char *text, char *out, size_t size)
{
	size_t i;

	for (i = 0; text[i] && i + 1 < size; i++)
		out[i] = ((unsigned char)text[i] < 0x20 || text[i] == 0x7f) ? ' ' : text[i];
	out[i] = '\0';
}

static void describe(struct http_answer *answer, const struct buf *body)
{
	const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer->body, "error");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(error, "code");
	const cJSON *message = cJSON_GetObjectItemCaseSensitive(error, "message");

	if (cJSON_IsString(code))
		one_line(code->valuestring, answer->error_code, sizeof(answer->error_code));
	if (cJSON_IsString(message))
		one_line(message->valuestring, answer->message, sizeof(answer->message));
	else
		one_line(buf_str(body), answer->message, 120);
}

static int add_header(struct curl_slist **list, const char *header)
{
	struct curl_slist *longer = curl_slist_append(*list, header);

	if (!longer)
		return LL_ENOMEM;
	*list = longer;
	return 0;
}

int http_client_post(struct http_client *c, const char *path, const char *body,
		     long timeout_seconds, struct http_answer *answer)
{
	CURL *curl = c->curl;
	struct curl_slist *headers = NULL;
	struct buf response;
	struct sink sink = {&response, false};
	char errbuf[CURL_ERROR_SIZE] = "";
	char *url = NULL;
	size_t base_len = strlen(c->base_url), path_len = strlen(path);
	long status = 0;
	CURLcode res;
	int rc;

	memset(answer, 0, sizeof(*answer));
	buf_init(&response, HTTP_CLIENT_BODY_LIMIT);
	url = malloc(base_len + path_len + 1);
	if (!url)
		return err_set(LL_ENOMEM, "Out of memory.");
	memcpy(url, c->base_url, base_len);
	memcpy(url + base_len, path, path_len + 1);
	if (add_header(&headers, "Expect:") < 0 ||
	    add_header(&headers, "Content-Type: application/json") < 0 ||
	    (c->auth_header && add_header(&headers, c->auth_header) < 0)) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_POST, 1L);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "loadlab-agent/" LOADLAB_VERSION);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, HTTP_CLIENT_CONNECT_TIMEOUT);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeout_seconds);
	curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)response.limit);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(curl, CURLOPT_XFERINFODATA, c);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	res = curl_easy_perform(curl);
	if (res == CURLE_ABORTED_BY_CALLBACK) {
		rc = err_set(LL_ESTATE, "The request to %s was abandoned: the agent is stopping.", path);
		goto out;
	}
	if (sink.overflow || res == CURLE_FILESIZE_EXCEEDED) {
		rc = err_set(LL_ETOOBIG, "The server's answer to %s is larger than %zu bytes.", path,
			     response.limit);
		goto out;
	}
	if (res != CURLE_OK) {
		rc = err_set(LL_EIO, "Cannot reach the server at %s: %s.", c->base_url,
			     *errbuf ? errbuf : curl_easy_strerror(res));
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	answer->status = status;
	if (response.len)
		json_parse_object(response.data, response.len, 64, &answer->body);
	if (status < 200 || status > 299)
		describe(answer, &response);
	rc = 0;
out:
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(headers);
	buf_release(&response);
	free(url);
	return rc;
}
