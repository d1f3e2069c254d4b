/* Growing arrays (loadlab/array.h): the same array while it has room,
 * FIRST elements the first time, doubled after, the contents kept; NULL
 * with the array and its room untouched when the size would overflow. */
#include "check.h"

#include "loadlab/array.h"

#include <stdint.h>
#include <stdlib.h>

int main(void)
{
	long long *items = NULL, *grown;
	size_t room = 0, count = 0;

	for (int i = 0; i < 100; i++) {
		grown = array_grow(items, count, &room, sizeof(*items), 8);
		CHECK(grown != NULL);
		if (!grown)
			break;
		items = grown;
		items[count++] = i;
		if (i == 0)
			CHECK_EQ_INT(room, 8);
		if (i == 8)
			CHECK_EQ_INT(room, 16);
	}
	CHECK_EQ_INT(room, 128);
	CHECK_EQ_INT(items[0], 0);
	CHECK_EQ_INT(items[99], 99);
	/* Room left: the same array, room unchanged. */
	CHECK(array_grow(items, 100, &room, sizeof(*items), 8) == items);
	CHECK_EQ_INT(room, 128);
	/* Full and too large to double: NULL, nothing changed. */
	room = SIZE_MAX / 8 + 1;
	CHECK(array_grow(items, room, &room, sizeof(*items), 8) == NULL);
	CHECK_EQ_INT(room, SIZE_MAX / 8 + 1);
	free(items);
	return check_finish();
}
