/* array.c - growing arrays (array.h). */
#include "loadlab/array.h"

#include <stdint.h>
#include <stdlib.h>

void *array_grow(void *items, size_t count, size_t *room, size_t size, size_t first)
{
	size_t next;
	void *grown;

	if (count < *room)
		return items;
	next = *room ? *room * 2 : first;
	if (next < *room || size == 0 || next > SIZE_MAX / size)
		return NULL;
	if (!(grown = realloc(items, next * size)))
		return NULL;
	*room = next;
	return grown;
}
