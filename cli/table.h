/*
 * table.h - plain-text tables for the CLI's listings, and safe printing of
 * text that came from the server.
 *
 *	struct table t;
 *	table_init(&t, (const char *const[]){"ID", "NAME", NULL});
 *	table_add(&t, "7");
 *	table_add_json(&t, cJSON_GetObjectItemCaseSensitive(job, "name"));
 *	table_print(&t, stdout);
 *	table_release(&t);
 *
 * Cells are added row by row, left to right. Columns are as wide as their
 * widest cell (counted in UTF-8 characters) and separated by two spaces.
 * Control characters in cells are printed as '?', so that text from the
 * server cannot move the cursor or forge lines.
 */
#ifndef LOADLAB_CLI_TABLE_H
#define LOADLAB_CLI_TABLE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

struct table {
	const char *const *headers; /* borrowed, NULL-terminated */
	size_t columns;
	char **cells; /* row-major, owned */
	size_t count;
	size_t alloc;
};

/* An empty table with the column titles HEADERS (borrowed). */
void table_init(struct table *t, const char *const *headers);

/* Appends a copy of TEXT (NULL prints as "-") as the next cell.
 * LL_ENOMEM on failure, the table unchanged. */
int table_add(struct table *t, const char *text);

/* Appends a formatted cell (same errors as table_add). */
int table_addf(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends ITEM as text: strings as they are, integers without a fraction,
 * booleans as true/false, arrays of scalars joined with ',', null or a
 * missing item as "-" (same errors as table_add). */
int table_add_json(struct table *t, const cJSON *item);

/* Appends the members KEYS (NULL-terminated) of OBJECT as cells, each as
 * table_add_json() shows it (same errors as table_add). */
int table_add_fields(struct table *t, const cJSON *object, const char *const *keys);

/* Writes the titles and every complete row to OUT. */
void table_print(const struct table *t, FILE *out);

/* Ends a listing: writes T to OUT when RC is 0, releases T and returns RC. */
int table_finish(struct table *t, int rc, FILE *out);

/* Lists the elements of the array KEY of OBJECT as a table with HEADERS:
 * ADD_ROW adds each element's cells. Writes the table to OUT when every
 * row was added; returns 0 or ADD_ROW's first error. */
int table_list(FILE *out, const cJSON *object, const char *key, const char *const *headers,
	       int (*add_row)(struct table *t, const cJSON *element));

/* Frees the cells; the table is empty afterwards. */
void table_release(struct table *t);

/* Writes ITEM as table_add_json() would show it into OUT (SIZE bytes,
 * truncated on a character boundary). */
void table_json_text(const cJSON *item, char *out, size_t size);

/* Writes OBJECT's members ({"os": "win10", "cores": 4}) as "os=win10" and
 * "cores=4" joined by SEPARATOR into OUT (SIZE bytes; "" for none). Values
 * are cut to 127 bytes; when the whole does not fit, the members that do
 * are followed by "..." instead of half a member. */
void table_map_text(const cJSON *object, const char *separator, char *out, size_t size);

/* Writes TEXT to OUT with control characters replaced by '?'. */
void table_print_text(FILE *out, const char *text);

/* The same, keeping line breaks ('\n'): text of several lines made here
 * from the server's strings. */
void table_print_lines(FILE *out, const char *text);

#endif
