/* job_file.c - a job file parsed with its mistakes placed (job_file.h). */
#include "job_file.h"
#include "job_file_scan.h"

#include "loadlab/err.h"
#include "loadlab/json.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void job_file_position(const char *text, size_t len, size_t offset, size_t *ret_line, size_t *ret_column)
{
	size_t line = 1, column = 1;

	for (size_t i = 0; i < offset && i < len; i++) {
		if (text[i] == '\n') {
			line++;
			column = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			column++;
		}
	}
	*ret_line = line;
	*ret_column = column;
}

/* The offset of the first "\u0000" escape inside a string, or LEN. */
static size_t nul_escape(const char *text, size_t len)
{
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		if (!in_string)
			in_string = text[i] == '"';
		else if (text[i] == '"')
			in_string = false;
		else if (text[i] == '\\' && i + 6 <= len && memcmp(text + i + 1, "u0000", 5) == 0)
			return i;
		else if (text[i] == '\\')
			i++;
	}
	return len;
}

/* What starts at OFFSET, for the message: up to 16 characters of the
 * line, control characters as '?', or "the end of the file". */
static void excerpt(const char *text, size_t len, size_t offset, char *out, size_t size)
{
	size_t n = 0, chars = 0;

	if (offset >= len) {
		snprintf(out, size, "the end of the file");
		return;
	}
	out[n++] = '\'';
	for (size_t i = offset; i < len && text[i] != '\n' && n + 5 < size; i++) {
		unsigned char ch = (unsigned char)text[i];
		if ((ch & 0xc0) != 0x80 && ++chars > 16)
			break;
		out[n++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	while (n > 1 && ((unsigned char)out[n - 1] & 0xc0) == 0xc0) /* never half a character */
		n--;
	out[n++] = '\'';
	out[n] = '\0';
}

/* "NAME:LINE:COLUMN: WHAT, at 'TEXT'." (no excerpt for bytes that are
 * not UTF-8: the terminal would show them as garbage). */
static int placed(int rc, const char *name, const char *text, size_t len, size_t offset, const char *what,
		  bool show)
{
	size_t line, column;
	char near[80];

	job_file_position(text, len, offset, &line, &column);
	if (!show)
		return err_set(rc, "%s:%zu:%zu: %s.", name, line, column, what);
	excerpt(text, len, offset, near, sizeof(near));
	return err_set(rc, "%s:%zu:%zu: %s, at %s.", name, line, column, what, near);
}

/* cJSON's place for a syntax error: where it stopped, which for a
 * member missing after ',' is one past the '}' it met instead. */
static size_t syntax_offset(const char *text, size_t len, const char *end)
{
	size_t offset = end && end >= text ? (size_t)(end - text) : 0;

	if (offset > len)
		offset = len;
	if (offset > 0 && (offset == len || strchr(" \t\r\n", text[offset])) &&
	    !strchr(" \t\r\n", text[offset - 1]))
		offset--;
	return offset;
}

static const char *kind(const cJSON *item)
{
	if (cJSON_IsArray(item))
		return "an array";
	if (cJSON_IsString(item))
		return "a string";
	if (cJSON_IsNumber(item))
		return "a number";
	if (cJSON_IsBool(item))
		return "a boolean";
	return "null";
}

int job_file_parse(const char *name, const char *text, size_t len, cJSON **ret_root)
{
	const char *end = NULL, *nul;
	char why[512], structure[JOB_FILE_SCAN_MESSAGE_SIZE];
	cJSON *root;
	size_t offset;
	int rc = json_parse_object(text, len, 0, ret_root);

	if (rc == 0)
		return 0;
	snprintf(why, sizeof(why), "%s", err_message(rc));
	if (len == 0)
		return err_set(rc, "%s is empty; a job is a JSON object.", name);
	if (rc != LL_EFORMAT && rc != LL_EINVAL) /* too deep, out of memory */
		return err_set(rc, "%s: %s", name, why);
	if ((nul = memchr(text, '\0', len)))
		return placed(rc, name, text, len, (size_t)(nul - text),
			      "a NUL byte, which JSON text cannot hold", false);
	if (json_utf8_check(text, len, &offset) < 0)
		return placed(rc, name, text, len, offset, "not valid UTF-8", false);
	if ((offset = nul_escape(text, len)) < len)
		return placed(rc, name, text, len, offset, "a string holds \\u0000, which is not allowed",
			      true);
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	/* cJSON places a missing bracket where it stopped, often lines below
	 * the mistake (or at the end of the file): the scan names it where it
	 * could first have been known. */
	if (!root && job_file_scan(text, len, structure, &offset))
		return offset >= len ? err_set(rc, "%s: %s.", name, structure)
				     : placed(rc, name, text, len, offset, structure, true);
	if (!root)
		return placed(rc, name, text, len, syntax_offset(text, len, end), "not valid JSON", true);
	while ((size_t)(end - text) < len && strchr(" \t\r\n", *end))
		end++;
	offset = (size_t)(end - text);
	if (offset < len) {
		cJSON_Delete(root);
		return placed(rc, name, text, len, offset, "more after the JSON value", true);
	}
	if (!cJSON_IsObject(root)) {
		rc = err_set(LL_EINVAL, "%s: the job must be a JSON object, not %s.", name, kind(root));
		cJSON_Delete(root);
		return rc;
	}
	cJSON_Delete(root);
	return err_set(rc, "%s: %s", name, why); /* a key twice: the message names it */
}
