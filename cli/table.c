#include "table.h"

#include "loadlab/array.h"
#include "loadlab/err.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void table_init(struct table *t, const char *const *headers)
{
	t->headers = headers;
	for (t->columns = 0; headers[t->columns]; t->columns++)
		;
	t->cells = NULL;
	t->count = 0;
	t->alloc = 0;
}

int table_add(struct table *t, const char *text)
{
	char **cells = array_grow(t->cells, t->count, &t->alloc, sizeof(*cells), 64), *copy;

	if (!cells)
		return err_set(LL_ENOMEM, "Out of memory.");
	t->cells = cells;
	copy = strdup(text ? text : "-");
	if (!copy)
		return err_set(LL_ENOMEM, "Out of memory.");
	t->cells[t->count++] = copy;
	return 0;
}

int table_addf(struct table *t, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return table_add(t, text);
}

/* Cuts S at SIZE - 1 bytes or less, never inside a UTF-8 sequence. */
static void truncate_utf8(char *s, size_t size)
{
	size_t len = strlen(s);

	if (len < size)
		return;
	len = size - 1;
	while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	s[len] = '\0';
}

static void scalar_text(const cJSON *item, char *out, size_t size)
{
	if (cJSON_IsString(item)) {
		snprintf(out, size, "%s", item->valuestring);
		truncate_utf8(out, size);
	} else if (cJSON_IsBool(item)) {
		snprintf(out, size, "%s", cJSON_IsTrue(item) ? "true" : "false");
	} else if (cJSON_IsNumber(item)) {
		double v = item->valuedouble;
		if (isfinite(v) && v == floor(v) && fabs(v) <= 9007199254740992.0)
			snprintf(out, size, "%lld", (long long)v);
		else
			snprintf(out, size, "%g", v);
	} else if (!item || cJSON_IsNull(item)) {
		snprintf(out, size, "-");
	} else {
		snprintf(out, size, "%s", cJSON_IsArray(item) ? "[...]" : "{...}");
	}
}

void table_json_text(const cJSON *item, char *out, size_t size)
{
	const cJSON *element;
	size_t used = 0;

	if (size == 0)
		return;
	if (!cJSON_IsArray(item)) {
		scalar_text(item, out, size);
		return;
	}
	out[0] = '\0';
	cJSON_ArrayForEach(element, item) {
		if (used + 1 >= size)
			break;
		if (used)
			out[used++] = ',';
		scalar_text(element, out + used, size - used);
		used += strlen(out + used);
	}
	out[used < size ? used : size - 1] = '\0';
}

int table_add_json(struct table *t, const cJSON *item)
{
	char text[512];

	table_json_text(item, text, sizeof(text));
	return table_add(t, text);
}

/* Characters in S: UTF-8 continuation bytes do not count. */
static size_t text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

void table_print_text(FILE *out, const char *text)
{
	for (; *text; text++)
		fputc(((unsigned char)*text < 0x20 || *text == 0x7f) ? '?' : *text, out);
}

void table_print_lines(FILE *out, const char *text)
{
	for (; *text; text++)
		fputc(*text == '\n' || ((unsigned char)*text >= 0x20 && *text != 0x7f) ? *text : '?', out);
}

void table_print(const struct table *t, FILE *out)
{
	size_t rows = t->count / t->columns;
	size_t *width = calloc(t->columns, sizeof(*width));

	if (!width)
		return;
	for (size_t c = 0; c < t->columns; c++)
		width[c] = text_width(t->headers[c]);
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < t->columns; c++) {
			size_t w = text_width(t->cells[r * t->columns + c]);
			if (w > width[c])
				width[c] = w;
		}
	for (size_t r = 0; r <= rows; r++) {
		for (size_t c = 0; c < t->columns; c++) {
			const char *text = r == 0 ? t->headers[c] : t->cells[(r - 1) * t->columns + c];
			table_print_text(out, text);
			if (c + 1 < t->columns)
				fprintf(out, "%*s", (int)(width[c] - text_width(text) + 2), "");
		}
		fputc('\n', out);
	}
	free(width);
}

void table_release(struct table *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->count = 0;
	t->alloc = 0;
}

void table_map_text(const cJSON *object, const char *separator, char *out, size_t size)
{
	const cJSON *item;
	size_t used = 0, ends[65] = {0}, members = 0;

	if (size == 0)
		return;
	out[0] = '\0';
	cJSON_ArrayForEach(item, object) {
		char value[128];
		int n;

		table_json_text(item, value, sizeof(value));
		n = snprintf(out + used, size - used, "%s%s=%s", used ? separator : "", item->string, value);
		if (n < 0 || (size_t)n >= size - used || members == sizeof(ends) / sizeof(ends[0]) - 1) {
			/* Mark the cut instead of showing half a value: drop whole
			 * members until " ..." fits. */
			while (members > 0 && ends[members] + 4 >= size)
				members--;
			used = ends[members];
			out[used] = '\0';
			if (used + 4 < size)
				snprintf(out + used, size - used, "%s", used ? " ..." : "...");
			break;
		}
		used += (size_t)n;
		ends[++members] = used;
	}
}

int table_add_fields(struct table *t, const cJSON *object, const char *const *keys)
{
	int rc = 0;

	for (; *keys && rc == 0; keys++)
		rc = table_add_json(t, cJSON_GetObjectItemCaseSensitive(object, *keys));
	return rc;
}

int table_finish(struct table *t, int rc, FILE *out)
{
	if (rc == 0)
		table_print(t, out);
	table_release(t);
	return rc;
}

int table_list(FILE *out, const cJSON *object, const char *key, const char *const *headers,
	       int (*add_row)(struct table *t, const cJSON *element))
{
	const cJSON *element;
	struct table t;
	int rc = 0;

	table_init(&t, headers);
	cJSON_ArrayForEach(element, cJSON_GetObjectItemCaseSensitive(object, key))
		if ((rc = add_row(&t, element)) < 0)
			break;
	return table_finish(&t, rc, out);
}
