/*
 * web_assets.h - the dashboard's files (web/), embedded into loadlabd at
 * build time by cmake/embed.cmake.
 */
#ifndef LOADLAB_SERVER_WEB_ASSETS_H
#define LOADLAB_SERVER_WEB_ASSETS_H

#include <stddef.h>

struct web_asset {
	const char *path; /* "/index.html" */
	const char *content_type;
	const unsigned char *data;
	size_t size;
};

extern const struct web_asset web_assets[];
extern const int web_asset_count;

#endif
