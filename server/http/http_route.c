/*
 * http_route.c - matching a request to a route of the table the door is
 * given (http.h, struct route_table).
 */
#include "http.h"

#include <string.h>

/* Matches PATH against PATTERN; "{id}" takes 1..16 digits, no leading 0;
 * "{name}" the rest of the path but for the literal that follows it. */
static bool path_matches(const char *pattern, const char *path, long long *ret_id)
{
	long long id = 0;

	while (*pattern) {
		if (*pattern != '{') { /* most bytes: literal */
			if (*pattern++ != *path++)
				return false;
			continue;
		}
		if (strncmp(pattern, "{name}", 6) == 0) {
			/* the rest of the path, less the pattern's literal suffix
			 * ("{name}/bisect"): a name may hold '/' */
			size_t suffix = strlen(pattern + 6), left = strlen(path);
			if (left <= suffix || strcmp(path + left - suffix, pattern + 6) != 0)
				return false;
			*ret_id = 0;
			return true;
		}
		if (strncmp(pattern, "{sha256}", 8) == 0) {
			for (int i = 0; i < 64; i++, path++)
				if (!((*path >= '0' && *path <= '9') || (*path >= 'a' && *path <= 'f')))
					return false;
			pattern += 8;
			continue;
		}
		if (strncmp(pattern, "{id}", 4) == 0) {
			int digits = 0;
			if (*path < '1' || *path > '9')
				return false;
			id = 0;
			while (*path >= '0' && *path <= '9') {
				if (++digits > 15)
					return false;
				id = id * 10 + (*path++ - '0');
			}
			pattern += 4;
			continue;
		}
		return false; /* an unknown placeholder */
	}
	if (*path)
		return false;
	*ret_id = id;
	return true;
}

int route_table_match(const struct route_table *table, const char *method, const char *path,
		      long long *ret_id, bool *ret_wrong_method)
{
	const struct route *routes = table->routes;
	long long id;

	/* The routes of METHOD first; the others' paths only for a miss
	 * (405 or 404). */
	*ret_wrong_method = false;
	for (int i = 0; i < table->count; i++)
		if (strcmp(routes[i].method, method) == 0 && path_matches(routes[i].pattern, path, &id)) {
			*ret_id = id;
			return i;
		}
	for (int i = 0; i < table->count && !*ret_wrong_method; i++)
		*ret_wrong_method = path_matches(routes[i].pattern, path, &id);
	return -1;
}

const struct route_stream *route_table_stream(const struct route_table *table, const struct route *route)
{
	for (int i = 0; route && i < table->streamed_count; i++)
		if (table->streamed[i].handler == route->handler)
			return table->streamed[i].stream;
	return NULL;
}
