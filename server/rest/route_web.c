/* GET / and the dashboard's files, embedded at build time (web/). */
#include "routes.h"

#include "web_assets.h"

#include <string.h>

int route_web(struct http_request *req, struct http_reply *reply)
{
	const char *path = strcmp(req->path, "/") == 0 ? "/index.html" : req->path;

	for (int i = 0; i < web_asset_count; i++)
		if (strcmp(web_assets[i].path, path) == 0) {
			reply->status = 200;
			reply->content_type = web_assets[i].content_type;
			reply->static_data = web_assets[i].data;
			reply->static_len = web_assets[i].size;
			return 0;
		}
	return reply_error(reply, 404, "not_found", "No such file.");
}
