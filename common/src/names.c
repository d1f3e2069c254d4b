#include "loadlab/names.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

static const char *name_at(const void *first, size_t stride, size_t i)
{
	const char *const *p = (const char *const *)((const char *)first + i * stride);
	return *p;
}

/* Optimal string alignment distance (Damerau-Levenshtein without edits of
 * a substring edited before), case ignored; both lengths at most
 * NAMES_MAX_LEN. */
static size_t distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t d[NAMES_MAX_LEN + 1][NAMES_MAX_LEN + 1];

	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			size_t best = d[i - 1][j - 1] + (ca != cb);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

size_t names_find(const char *word, const void *first, size_t count, size_t stride)
{
	size_t i = 0;

	while (i < count && strcmp(name_at(first, stride, i), word) != 0)
		i++;
	return i;
}

const char *names_nearest(const char *word, const void *first, size_t count, size_t stride)
{
	size_t lw = strlen(word), best = (size_t)-1;
	const char *found = NULL;
	bool tie = false;

	if (lw > NAMES_MAX_LEN)
		return NULL;
	for (size_t i = 0; i < count; i++) {
		const char *name = name_at(first, stride, i);
		size_t ln = strlen(name), limit = ln <= 4 ? 1 : ln <= 8 ? 2 : 3, dist;
		if (ln > NAMES_MAX_LEN)
			continue;
		dist = distance(word, lw, name, ln);
		if (dist > limit || dist > best)
			continue;
		tie = dist == best;
		best = dist;
		found = name;
	}
	return tie ? NULL : found;
}

int names_unknown(const char *what, const char *word, const void *first, size_t count, size_t stride)
{
	const char *near = names_nearest(word, first, count, stride);
	struct buf known;

	buf_init(&known, 1024);
	for (size_t i = 0; i < count; i++)
		buf_printf(&known, "%s%s", i ? ", " : "", name_at(first, stride, i));
	if (near)
		err_set(LL_EINVAL, "Unknown %s '%.*s' (did you mean '%s'? known: %s).", what, NAMES_MAX_LEN,
			word, near, buf_str(&known));
	else
		err_set(LL_EINVAL, "Unknown %s '%.*s' (known: %s).", what, NAMES_MAX_LEN, word,
			buf_str(&known));
	buf_release(&known);
	return LL_EINVAL;
}
