/*
 * report_row.h - one row of a comparison being written (report_compare.c),
 * either as a cJSON object or straight as the JSON text that
 * cJSON_PrintUnformatted() prints of that object, byte for byte, without
 * building it (report_compare_json(): 8,000 rows of 30 figures built as
 * cJSON objects and printed were most of a compare's time). Functions in
 * report_format.c, numbers and strings written by common's json_number_text()
 * and json_append_string() (json.h); only the report's files include this.
 *
 *	struct report_row row = {.text = &buf, .first = true, .figures = empty};
 *	buf_append(&buf, "{", 1);
 *	report_row_string(&row, "variant", "default");
 *	report_row_number(&row, "ratio", 1.0123);
 *	... then "}" when row.rc is 0.
 */
#ifndef LOADLAB_SERVER_REPORT_ROW_H
#define LOADLAB_SERVER_REPORT_ROW_H

#include "loadlab/buf.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct report_row {
	cJSON *obj;       /* the row as an object; NULL: as TEXT */
	struct buf *text; /* the row's members are appended here (the caller writes "{" and "}") */
	bool first;       /* TEXT: no member yet (set true to start) */
	size_t significant_at, significant_len; /* TEXT: where "significant"'s value is */
	cJSON *figures;     /* an empty object that summary.c's functions fill, then report_row_take() */
	const char *status; /* for the caller: the row's status and regression */
	bool regression;
	bool underpowered; /* its detectable change is above the gate's threshold (report_judge.h) */
	int rc; /* TEXT: the first failure to append (LL_ENOMEM, LL_ETOOBIG); then nothing more is */
};

/* Adds "KEY": V as cJSON_AddNumberToObject() would. */
void report_row_number(struct report_row *r, const char *key, double v);

/* Adds "KEY": V; the position of "significant" is kept for
 * report_row_set_significant(). */
void report_row_bool(struct report_row *r, const char *key, bool v);

/* Adds "KEY": S; nothing for a NULL S, as cJSON_AddStringToObject(). */
void report_row_string(struct report_row *r, const char *key, const char *s);

/* Adds "KEY": ITEM (taken, deleted here when written as text). */
void report_row_item(struct report_row *r, const char *key, cJSON *item);

/* "significant" set to V where it is, as cJSON_ReplaceItemInObject()
 * does; nothing when the row has none. */
void report_row_set_significant(struct report_row *r, bool v);

/* Moves the members in R's FIGURES (numbers and booleans, as
 * report_compare_figures() adds them) to R in their order; FIGURES is
 * empty again. */
void report_row_take(struct report_row *r);

#endif
