#include "client.h"

#include "loadlab/err.h"

#include <stdio.h>

static const char *configured_server = "http://127.0.0.1:8080";
static const char *configured_token;

void client_configure(const char *server, const char *token)
{
	if (server && *server)
		configured_server = server;
	configured_token = token && *token ? token : NULL;
}

int client_open(struct rest_client *c)
{
	return rest_client_open(c, configured_server, configured_token);
}

int client_request(struct rest_client *c, const char *method, const char *path, const char *body,
		   size_t limit, struct rest_answer *answer)
{
	const struct rest_request request = {method, path, body, limit, 0};
	int rc = rest_client_send(c, &request, answer);

	if (rc < 0)
		return rc;
	if (answer->status == 401 && !configured_token && answer->server_message)
		rc = err_set(LL_EAUTH,
			     "%s (HTTP 401 %s; no token given: use --token or "
			     "LOADLAB_TOKEN)",
			     answer->message, *answer->error_code ? answer->error_code : "error");
	else
		rc = rest_answer_error(answer, method, path);
	if (rc < 0)
		rest_answer_release(answer);
	return rc;
}

/* Moves ANSWER's JSON object to *RET_ROOT and releases ANSWER. */
static int take_object(struct rest_answer *answer, const char *method, const char *path, cJSON **ret_root)
{
	if (!answer->body) {
		rest_answer_release(answer);
		return err_set(LL_EFORMAT, "The server's answer to %s %s is not a JSON object.", method,
			       path);
	}
	*ret_root = answer->body;
	answer->body = NULL;
	rest_answer_release(answer);
	return 0;
}

int client_get_object(struct rest_client *c, const char *method, const char *path, const char *body,
		      cJSON **ret_root)
{
	struct rest_answer answer;
	int rc = client_request(c, method, path, body, CLIENT_BODY_LIMIT, &answer);

	return rc < 0 ? rc : take_object(&answer, method, path, ret_root);
}

int client_fetch(const char *method, const char *path, const char *body, size_t limit,
		 struct rest_answer *answer)
{
	struct rest_client c;
	int rc = client_open(&c);

	if (rc < 0)
		return rc;
	rc = client_request(&c, method, path, body, limit, answer);
	rest_client_close(&c);
	return rc;
}

int client_fetch_object(const char *method, const char *path, const char *body, cJSON **ret_root)
{
	struct rest_answer answer;
	int rc = client_fetch(method, path, body, CLIENT_BODY_LIMIT, &answer);

	return rc < 0 ? rc : take_object(&answer, method, path, ret_root);
}

void client_print_body(const struct buf *body)
{
	fwrite(buf_str(body), 1, body->len, stdout);
	if (body->len && body->data[body->len - 1] != '\n')
		fputc('\n', stdout);
}

int client_fail(const char *command, int rc)
{
	char text[600];

	rest_one_line(err_message(rc), text, sizeof(text));
	fprintf(stderr, "loadlab %s: %s\n", command, text);
	return 2;
}
