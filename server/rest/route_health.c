/* GET /healthz and GET /metrics. */
#include "routes.h"

#include "loadlab/err.h"

#include <stdlib.h>

int route_health(struct http_request *req, struct http_reply *reply)
{
	bool store_ok = store_check(req->server->store) == 0, disk_ok = true, full = false, ok;
	cJSON *body = cJSON_CreateObject();
	long long free_bytes = 0;

	/* A disk below --min-free-bytes takes no uploads and soon no writes;
	 * one that refused a write (507) is full until space is freed. */
	if (req->server->blobs && blobs_disk_free(req->server->blobs, &free_bytes) == 0) {
		full = storage_full_holds(req->server, free_bytes);
		disk_ok = free_bytes >= req->server->config.min_free_bytes && !full;
	}
	ok = store_ok && disk_ok;
	cJSON_AddStringToObject(body, "status", ok ? "ok" : "unavailable");
	cJSON_AddStringToObject(body, "store", !store_ok ? "failing" : full ? "storage full" : "ok");
	cJSON_AddStringToObject(body, "disk", disk_ok ? "ok" : "full");
	cJSON_AddNumberToObject(body, "disk_free_bytes", (double)free_bytes);
	cJSON_AddStringToObject(body, "version", LOADLAB_VERSION);
	return reply_json(reply, ok ? 200 : 503, body);
}

int route_metrics(struct http_request *req, struct http_reply *reply)
{
	struct buf out;
	int rc;

	buf_init(&out, 4 << 20);
	rc = metrics_render(req->server, &out);
	if (rc < 0) {
		buf_release(&out);
		return reply_from_err(reply, rc);
	}
	return reply_text(reply, 200, "text/plain; version=0.0.4", out.data ? out.data : calloc(1, 1));
}
