/*
 * array.h - the one way a growing array of loadlab gets its room: doubled
 * when full, from a first size, so that N appends cost O(N) copies.
 *
 *	struct item *items = array_grow(list->items, list->count, &list->room,
 *					sizeof(*items), 64);
 *	if (!items)
 *		return LL_ENOMEM;
 *	list->items = items;
 *	list->items[list->count++] = item;
 */
#ifndef LOADLAB_ARRAY_H
#define LOADLAB_ARRAY_H

#include <stddef.h>

/* ITEMS (*ROOM elements of SIZE bytes allocated, COUNT of them used) with
 * room for one more: ITEMS itself when it has it, else ITEMS reallocated
 * to twice *ROOM elements (FIRST when *ROOM is 0), *ROOM updated. NULL
 * when out of memory or the size would overflow: ITEMS and *ROOM are then
 * untouched, ITEMS still the caller's. */
void *array_grow(void *items, size_t count, size_t *room, size_t size, size_t first);

#endif
