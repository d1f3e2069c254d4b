/*
 * /api/v1/blobs/{sha256}: upload (PUT, streamed), is it there (HEAD),
 * download (GET). The store on disk is store/blob_files.h; this file maps it to HTTP
 * and checks that a program job's files are all uploaded and add up to at
 * most --program-max-bytes (counted once per path: what an agent without
 * hard links would write).
 */
#include "route_util.h"
#include "routes.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The {sha256} of the request's path (http_route.c matched 64 hex digits at
 * its end). */
static const char *path_hex(const struct http_request *req)
{
	size_t len = strlen(req->path);

	return len >= 64 ? req->path + len - 64 : "";
}

/* Maps an error of blob_files.h to its status and code. */
static int reply_blob_error(struct http_reply *reply, int rc)
{
	switch (rc) {
	case BLOBS_E_TOO_BIG:
		return reply_error(reply, 413, "too_large", "%s", err_message(rc));
	case BLOBS_E_QUOTA:
		return reply_error(reply, 507, "insufficient_storage", "%s", err_message(rc));
	case BLOBS_E_MISMATCH:
		return reply_error(reply, 400, "hash_mismatch", "%s", err_message(rc));
	default:
		return reply_from_err(reply, rc);
	}
}

/* HEAD and GET: the file, read by libmicrohttpd as it sends (HEAD sends
 * its Content-Length only). */
static int send_blob(struct http_request *req, struct http_reply *reply)
{
	long long size = 0;
	int fd = -1, rc = blobs_open_read(req->server->blobs, path_hex(req), &fd, &size);

	return route_reply_file(reply, rc, fd, size);
}

int route_blobs_head(struct http_request *req, struct http_reply *reply)
{
	return send_blob(req, reply);
}

int route_blobs_get(struct http_request *req, struct http_reply *reply)
{
	return send_blob(req, reply);
}

/* PUT: begin() opens the upload from the headers (413 / 507 from the
 * Content-Length before a byte is read), data() hashes and writes each
 * piece, the handler finishes it, release() drops what is left. */
static int put_begin(struct http_request *req, struct http_reply *reply)
{
	const char *length =
		MHD_lookup_connection_value(req->connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *chunked = MHD_lookup_connection_value(req->connection, MHD_HEADER_KIND,
							  MHD_HTTP_HEADER_TRANSFER_ENCODING);
	long long declared = chunked ? -1 : 0;
	struct blob_upload *upload;
	int rc;

	if (length && !chunked) {
		char *end;
		declared = strtoll(length, &end, 10);
		if (*end || end == length || declared < 0)
			return reply_error(reply, 400, "invalid_argument", "Bad Content-Length.");
	}
	/* An agent uploads only while it builds: a builder's files. */
	if (req->token.kind == STORE_TOKEN_AGENT) {
		bool builds = false;
		if ((rc = store_agent_builds(req->server->store, req->token.agent_id, &builds)) < 0)
			return reply_blob_error(reply, rc);
		if (!builds)
			return reply_error(
				reply, 403, "forbidden",
				"An agent may upload only while it holds a build task (docs/builds.md).");
	}
	if ((rc = blobs_upload_begin(req->server->blobs, path_hex(req), declared, &upload)) < 0)
		return reply_blob_error(reply, rc);
	req->stream_state = upload;
	return 0;
}

static int put_data(struct http_request *req, const char *data, size_t size, struct http_reply *reply)
{
	int rc = blobs_upload_write(req->stream_state, data, size);

	if (rc < 0) {
		blobs_upload_abort(req->stream_state);
		req->stream_state = NULL;
		reply_blob_error(reply, rc);
	}
	return rc;
}

static void put_release(struct http_request *req)
{
	blobs_upload_abort(req->stream_state);
	req->stream_state = NULL;
}

const struct route_stream route_blobs_put_stream = {put_begin, put_data, put_release};

int route_blobs_put(struct http_request *req, struct http_reply *reply)
{
	struct blob_upload *upload = req->stream_state;
	bool created = false;
	cJSON *body;
	long long size;
	int rc;

	req->stream_state = NULL;
	if (!upload)
		return reply_error(reply, 500, "internal", "The upload was not started.");
	if ((rc = blobs_upload_finish(upload, &created)) < 0)
		return reply_blob_error(reply, rc);
	if ((rc = blobs_stat(req->server->blobs, path_hex(req), &size)) < 0)
		return reply_from_err(reply, rc);
	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "sha256", path_hex(req));
	cJSON_AddNumberToObject(body, "size", (double)size);
	cJSON_AddBoolToObject(body, "created", created);
	return reply_json(reply, created ? 201 : 200, body);
}

int route_blobs_check_spec(struct http_request *req, const cJSON *spec, struct http_reply *reply)
{
	const cJSON *program = cJSON_GetObjectItemCaseSensitive(spec, "program"), *build, *file;
	cJSON *hexes = cJSON_CreateArray(), *missing = NULL;
	char hex[65], list[400] = "";
	long long total = 0, cap = req->server->config.program_max_bytes;
	size_t used = 0;
	int rc, count;

	if (!hexes)
		return reply_from_err(reply, LL_ENOMEM), LL_ENOMEM;
	/* every build's files (job_spec_program_build()) */
	for (int b = 0; (build = job_spec_program_build(program, b, NULL)); b++)
		cJSON_ArrayForEach(file, cJSON_GetObjectItemCaseSensitive(build, "files"))
			if (cJSON_IsString(file) && job_spec_blob_ref_valid(file->valuestring, hex))
				cJSON_AddItemToArray(hexes, cJSON_CreateString(hex));
	rc = blobs_missing(req->server->blobs, hexes, &missing, &total);
	cJSON_Delete(hexes);
	if (rc < 0)
		return reply_from_err(reply, rc), rc;
	count = cJSON_GetArraySize(missing);
	if (count == 0) {
		cJSON_Delete(missing);
		if (total <= cap)
			return 0;
		reply_error(
			reply, 413, "program_too_large",
			"The program's files add up to %lld bytes (each counted once per path), more than "
			"the limit of %lld (--program-max-bytes).",
			total, cap);
		return LL_ETOOBIG;
	}
	cJSON_ArrayForEach(file, missing)
		if (used < sizeof(list) - 70)
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "",
						 file->valuestring);
	reply_error(reply, 400, "missing_blobs", "%d of the program's files %s not uploaded: %s%s.", count,
		    count == 1 ? "is" : "are", list, used >= sizeof(list) - 70 ? ", ..." : "");
	cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(reply->json, "error"), "missing", missing);
	return LL_EINVAL;
}

/* blobs_references_fn over the store. */
static int references(void *context, cJSON **ret_hashes)
{
	return store_blob_references(context, ret_hashes);
}

int route_blobs_start(struct server *server)
{
	const struct config *c = &server->config;
	struct blob_limits limits = {c->blob_max_bytes,        c->blob_quota_bytes, c->blob_retention_s,
				     c->blob_sweep_interval_s, c->min_free_bytes,   c->body_timeout};
	int rc = blobs_open(c->data_dir, &limits, &server->blobs);

	if (rc == 0 && (rc = blobs_sweeper_start(server->blobs, references, server->store)) < 0) {
		blobs_close(server->blobs);
		server->blobs = NULL;
	}
	return rc;
}
