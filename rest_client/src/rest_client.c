#include "loadlab/rest_client.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *user_agent_text = "loadlab/" LOADLAB_VERSION;

int rest_client_global_init(const char *user_agent)
{
	if (user_agent)
		user_agent_text = user_agent;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return err_set(LL_EIO, "libcurl failed to initialise.");
	return 0;
}

void rest_client_global_cleanup(void)
{
	curl_global_cleanup();
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

/* "a" + "b" in a new string; NULL when out of memory. */
static char *join(const char *a, const char *b)
{
	size_t a_len = strlen(a), b_len = strlen(b);
	char *out = malloc(a_len + b_len + 1);

	if (out) {
		memcpy(out, a, a_len);
		memcpy(out + a_len, b, b_len + 1);
	}
	return out;
}

int rest_client_open(struct rest_client *c, const char *server, const char *token)
{
	size_t len;
	int rc;

	memset(c, 0, sizeof(*c));
	if (strncmp(server, "http://", 7) != 0 && strncmp(server, "https://", 8) != 0)
		return err_set(LL_EINVAL, "The server '%s' is not an http:// or https:// URL.", server);
	if (has_control_characters(server))
		return err_set(LL_EINVAL, "The server URL contains a control character.");
	if (token && has_control_characters(token))
		return err_set(LL_EINVAL, "The token contains a control character.");
	len = strlen(server);
	while (len > 0 && server[len - 1] == '/')
		len--;
	c->base_url = copy_text(server, len);
	c->curl = curl_easy_init();
	if (!c->base_url || !c->curl) {
		rest_client_close(c);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	if (token && (rc = rest_client_set_token(c, token)) < 0) {
		rest_client_close(c);
		return rc;
	}
	return 0;
}

int rest_client_set_token(struct rest_client *c, const char *token)
{
	char *header = NULL;

	if (token && has_control_characters(token))
		return err_set(LL_EINVAL, "The token contains a control character.");
	if (token && !(header = join("Authorization: Bearer ", token)))
		return err_set(LL_ENOMEM, "Out of memory.");
	free(c->auth_header);
	c->auth_header = header;
	return 0;
}

void rest_client_set_abort(struct rest_client *c, bool (*check)(void *context), void *context)
{
	c->abort_check = check;
	c->abort_context = context;
}

void rest_client_close(struct rest_client *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->base_url);
	free(c->auth_header);
	memset(c, 0, sizeof(*c));
}

void rest_answer_release(struct rest_answer *answer)
{
	cJSON_Delete(answer->body);
	buf_release(&answer->text);
	memset(answer, 0, sizeof(*answer));
}

struct sink {
	struct buf *body;
	bool overflow;
	/* rest_client_download(): a 2xx body goes here, up to FILE_LIMIT bytes. */
	FILE *file;
	long long file_limit, file_bytes;
	bool file_failed, file_overflow;
	void *curl;
};

static size_t on_data(char *data, size_t size, size_t count, void *userdata)
{
	struct sink *sink = userdata;
	size_t n = size * count;
	long status = 0;

	if (sink->file) {
		curl_easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &status);
		if (status >= 200 && status <= 299) {
			if ((long long)n > sink->file_limit - sink->file_bytes) {
				sink->file_overflow = true;
				return 0;
			}
			if (fwrite(data, 1, n, sink->file) != n) {
				sink->file_failed = true;
				return 0;
			}
			sink->file_bytes += (long long)n;
			return n;
		}
	}
	if (buf_append(sink->body, data, n) < 0) {
		sink->overflow = true;
		return 0; /* curl stops with CURLE_WRITE_ERROR */
	}
	return n;
}

/* A file sent as the body (rest_client_upload()). */
struct upload {
	FILE *file;
	long long size;
	void (*progress)(void *context, long long sent, long long total);
	void *context;
};

struct transfer {
	struct rest_client *c;
	struct upload *upload; /* NULL: none */
};

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct transfer *t = userdata;
	struct rest_client *c = t->c;

	(void)dltotal, (void)dlnow, (void)ultotal;
	if (t->upload && t->upload->progress)
		t->upload->progress(t->upload->context, (long long)ulnow, t->upload->size);
	return c->abort_check && c->abort_check(c->abort_context) ? 1 : 0;
}

static size_t on_read(char *buffer, size_t size, size_t count, void *userdata)
{
	struct upload *upload = userdata;
	size_t n = fread(buffer, 1, size * count, upload->file);

	return n == 0 && ferror(upload->file) ? CURL_READFUNC_ABORT : n;
}

void rest_one_line(const char *text, char *out, size_t size)
{
	size_t i;

	for (i = 0; text[i] && i + 1 < size; i++)
		out[i] = ((unsigned char)text[i] < 0x20 || text[i] == 0x7f) ? ' ' : text[i];
	/* A cut inside a UTF-8 sequence (at most 4 bytes) drops its start too. */
	if (((unsigned char)text[i] & 0xc0) == 0x80) {
		size_t back = i;
		while (back > 0 && i - back < 3 && ((unsigned char)out[back - 1] & 0xc0) == 0x80)
			back--;
		if (back > 0 && (unsigned char)out[back - 1] >= 0xc0)
			i = back - 1;
	}
	out[i] = '\0';
}

/* Fills the error fields of ANSWER (a status outside 2xx). */
static void describe(struct rest_answer *answer)
{
	const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer->body, "error");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(error, "code");
	const cJSON *message = cJSON_GetObjectItemCaseSensitive(error, "message");

	if (cJSON_IsString(code))
		rest_one_line(code->valuestring, answer->error_code, sizeof(answer->error_code));
	if (cJSON_IsString(message) && *message->valuestring) {
		rest_one_line(message->valuestring, answer->message, sizeof(answer->message));
		answer->server_message = true;
	} else {
		rest_one_line(buf_str(&answer->text), answer->message, 120);
	}
}

static int add_header(struct curl_slist **list, const char *header)
{
	struct curl_slist *longer = curl_slist_append(*list, header);

	if (!longer)
		return LL_ENOMEM;
	*list = longer;
	return 0;
}

static int perform(struct rest_client *c, const struct rest_request *request, struct upload *upload,
		   struct sink *download, struct rest_answer *answer)
{
	struct transfer transfer = {c, upload};
	CURL *curl = c->curl;
	struct curl_slist *headers = NULL;
	struct sink plain = {0}, *sink = download ? download : &plain;
	const char *method = request->method, *path = request->path, *body = request->body;
	char errbuf[CURL_ERROR_SIZE] = "";
	char *url = NULL;
	long status = 0;
	CURLcode res;
	int rc;

	memset(answer, 0, sizeof(*answer));
	buf_init(&answer->text, request->limit ? request->limit : REST_CLIENT_BODY_LIMIT);
	sink->body = &answer->text;
	sink->curl = curl;
	url = join(c->base_url, path);
	if (!url || add_header(&headers, "Expect:") < 0 ||
	    (c->auth_header && add_header(&headers, c->auth_header) < 0) ||
	    (body && add_header(&headers, "Content-Type: application/json") < 0) ||
	    (upload && add_header(&headers, "Content-Type: application/octet-stream") < 0)) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, user_agent_text);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, REST_CLIENT_CONNECT_TIMEOUT);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT,
			 request->timeout_seconds ? request->timeout_seconds : REST_CLIENT_TIMEOUT);
	if (!download)
		curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)answer->text.limit);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, sink);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &transfer);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	if (upload || download) {
		/* A large file takes as long as it takes; a stalled one fails. */
		curl_easy_setopt(curl, CURLOPT_TIMEOUT, 0L);
		curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, REST_CLIENT_TIMEOUT);
	}
	if (upload) {
		curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(curl, CURLOPT_READDATA, upload);
		curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)upload->size);
	} else if (strcmp(method, "HEAD") == 0) {
		curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
	} else if (body || strcmp(method, "GET") != 0) {
		/* Without a body, e.g. a cancel: an empty one. */
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? strlen(body) : 0));
	}
	res = curl_easy_perform(curl);
	if (res == CURLE_ABORTED_BY_CALLBACK) {
		rc = err_set(LL_ESTATE, "The request %s %s was abandoned by its caller.", method, path);
		goto out;
	}
	if (sink->file_failed) {
		rc = err_set(LL_EIO, "Cannot write the answer to %s %s to its file.", method, path);
		goto out;
	}
	if (sink->file_overflow) {
		rc = err_set(LL_ETOOBIG, "The server's answer to %s %s is larger than %lld bytes.", method,
			     path, download->file_limit);
		goto out;
	}
	if (sink->overflow || res == CURLE_FILESIZE_EXCEEDED) {
		rc = err_set(LL_ETOOBIG, "The server's answer to %s %s is larger than %zu bytes.", method,
			     path, answer->text.limit);
		goto out;
	}
	if (res != CURLE_OK) {
		rc = err_set(LL_EIO, "Cannot reach the server at %s: %s.", c->base_url,
			     *errbuf ? errbuf : curl_easy_strerror(res));
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	answer->status = status;
	{
		curl_off_t retry_after = 0;
		if (curl_easy_getinfo(curl, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK &&
		    retry_after > 0)
			answer->retry_after = retry_after > 86400 ? 86400 : (long)retry_after;
	}
	/* Not JSON is fine here: body stays NULL and the caller decides. */
	if (answer->text.len &&
	    json_parse_object(answer->text.data, answer->text.len, REST_CLIENT_MAX_DEPTH, &answer->body) < 0)
		answer->body = NULL;
	if (status < 200 || status > 299)
		describe(answer);
	rc = 0;
out:
	/* The handle keeps pointers to these until the next reset. */
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(headers);
	free(url);
	if (rc < 0)
		rest_answer_release(answer);
	return rc;
}

int rest_client_send(struct rest_client *c, const struct rest_request *request, struct rest_answer *answer)
{
	return perform(c, request, NULL, NULL, answer);
}

int rest_client_download(struct rest_client *c, const char *path, const char *file_path, long long limit,
			 long long *ret_size, struct rest_answer *answer)
{
	const struct rest_request request = {"GET", path, NULL, 0, 0};
	struct sink download = {0};
	int rc;

	memset(answer, 0, sizeof(*answer));
	if (!(download.file = fopen(file_path, "wb")))
		return err_set(LL_EIO, "Cannot create %s.", file_path);
	download.file_limit = limit;
	rc = perform(c, &request, NULL, &download, answer);
	if (fclose(download.file) != 0 && rc == 0) {
		rest_answer_release(answer);
		rc = err_set(LL_EIO, "Cannot write %s.", file_path);
	}
	if (rc == 0 && ret_size)
		*ret_size = download.file_bytes;
	return rc;
}

int rest_client_upload(struct rest_client *c, const char *path, const char *file_path, long long size,
		       void (*progress)(void *context, long long sent, long long total), void *context,
		       struct rest_answer *answer)
{
	const struct rest_request request = {"PUT", path, NULL, 0, 0};
	struct upload upload = {fopen(file_path, "rb"), size, progress, context};
	int rc;

	memset(answer, 0, sizeof(*answer));
	if (!upload.file)
		return err_set(LL_EIO, "Cannot open %s.", file_path);
	rc = perform(c, &request, &upload, NULL, answer);
	fclose(upload.file);
	return rc;
}

int rest_client_post(struct rest_client *c, const char *path, const char *body, long timeout_seconds,
		     struct rest_answer *answer)
{
	const struct rest_request request = {"POST", path, body, 0, timeout_seconds};

	return rest_client_send(c, &request, answer);
}

int rest_status_code(long status)
{
	switch (status) {
	case 400:
		return LL_EINVAL;
	case 401:
		return LL_EAUTH;
	case 403:
		return LL_EFORBIDDEN;
	case 404:
		return LL_ENOTFOUND;
	case 409:
		return LL_ECONFLICT;
	case 413:
		return LL_ETOOBIG;
	case 501:
		return LL_EUNSUPPORTED;
	default:
		return status >= 500 ? LL_ESTORE : LL_EINVAL;
	}
}

int rest_answer_error(const struct rest_answer *answer, const char *method, const char *path)
{
	int code = rest_status_code(answer->status);

	if (answer->status >= 200 && answer->status <= 299)
		return 0;
	if (answer->server_message)
		return err_set(code, "%s (HTTP %ld %s)", answer->message, answer->status,
			       *answer->error_code ? answer->error_code : "error");
	return err_set(code, "The server answered HTTP %ld to %s %s%s%s", answer->status, method, path,
		       *answer->message ? ": " : ".", answer->message);
}

char *rest_escape(const char *text)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(text), o = 0;
	char *out = malloc(3 * len + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)text[i];
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '.' || ch == '_' || ch == '~') {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = '\0';
	return out;
}
