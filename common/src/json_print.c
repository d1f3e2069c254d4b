/*
 * json_print.c - json_print() (json.h): the bytes of cJSON 1.7.15's
 * cJSON_PrintUnformatted(), without its sprintf and sscanf per number.
 *
 * cJSON prints every number with "%1.15g", reads it back with sscanf and
 * prints it again with "%1.17g" when the value did not survive (cJSON.c,
 * print_number): about 3,300 instructions a number, most of what an
 * answer of loadlabd cost to print (tests/bench/README.md, pass 6). A
 * number with an integer value below 10^15 prints as its digits with
 * "%1.15g" and reads back exactly, so it is written digit by digit here;
 * every other number goes the way cJSON goes. Strings are escaped as
 * cJSON's print_string_ptr() does, objects and arrays without spaces.
 */
#include "loadlab/buf.h"
#include "loadlab/json.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cJSON's compare_double(). */
static bool same_double(double a, double b)
{
	double max = fabs(a) > fabs(b) ? fabs(a) : fabs(b);

	return fabs(a - b) <= max * DBL_EPSILON;
}

static int print_number(struct buf *out, double d)
{
	char text[32];
	char *end = text + sizeof(text), *p = end;
	int length;

	if (isnan(d) || isinf(d))
		return buf_append(out, "null", 4);
	if (d == floor(d) && fabs(d) < 1e15 && !(d == 0 && signbit(d))) {
		unsigned long long n = (unsigned long long)fabs(d);
		do {
			*--p = (char)('0' + n % 10);
			n /= 10;
		} while (n);
		if (d < 0)
			*--p = '-';
		return buf_append(out, p, (size_t)(end - p));
	}
	length = snprintf(text, sizeof(text), "%1.15g", d);
	if (!same_double(strtod(text, NULL), d))
		length = snprintf(text, sizeof(text), "%1.17g", d);
	if (length < 0 || length >= (int)sizeof(text))
		return LL_EINVAL;
	/* cJSON writes the locale's decimal point as '.'. */
	for (int i = 0; i < length; i++)
		if (text[i] == localeconv()->decimal_point[0])
			text[i] = '.';
	return buf_append(out, text, (size_t)length);
}

/* cJSON's print_string_ptr(): NULL as "", runs without escapes copied. */
static int print_string(struct buf *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run;
	int rc;

	if (!s)
		return buf_append(out, "\"\"", 2);
	if ((rc = buf_append(out, "\"", 1)) < 0)
		return rc;
	for (run = s; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char escape[6] = {'\\', 0};
		size_t n = 2;
		if (c >= 32 && c != '"' && c != '\\')
			continue;
		if ((rc = buf_append(out, run, (size_t)(s - run))) < 0)
			return rc;
		run = s + 1;
		switch (c) {
		case '"':
		case '\\':
			escape[1] = (char)c;
			break;
		case '\b':
			escape[1] = 'b';
			break;
		case '\f':
			escape[1] = 'f';
			break;
		case '\n':
			escape[1] = 'n';
			break;
		case '\r':
			escape[1] = 'r';
			break;
		case '\t':
			escape[1] = 't';
			break;
		default:
			memcpy(escape + 1, (char[]){'u', '0', '0', hex[c >> 4], hex[c & 15]}, 5);
			n = 6;
		}
		if ((rc = buf_append(out, escape, n)) < 0)
			return rc;
	}
	if ((rc = buf_append(out, run, (size_t)(s - run))) < 0)
		return rc;
	return buf_append(out, "\"", 1);
}

static int print_value(struct buf *out, const cJSON *item)
{
	const cJSON *child;
	bool object;
	int rc;

	switch (item->type & 0xFF) {
	case cJSON_NULL:
		return buf_append(out, "null", 4);
	case cJSON_False:
		return buf_append(out, "false", 5);
	case cJSON_True:
		return buf_append(out, "true", 4);
	case cJSON_Number:
		return print_number(out, item->valuedouble);
	case cJSON_Raw:
		return item->valuestring ? buf_append_str(out, item->valuestring) : LL_EINVAL;
	case cJSON_String:
		return print_string(out, item->valuestring);
	case cJSON_Array:
	case cJSON_Object:
		object = (item->type & 0xFF) == cJSON_Object;
		if ((rc = buf_append(out, object ? "{" : "[", 1)) < 0)
			return rc;
		for (child = item->child; child; child = child->next) {
			if (child != item->child && (rc = buf_append(out, ",", 1)) < 0)
				return rc;
			if (object && ((rc = print_string(out, child->string)) < 0 ||
				       (rc = buf_append(out, ":", 1)) < 0))
				return rc;
			if ((rc = print_value(out, child)) < 0)
				return rc;
		}
		return buf_append(out, object ? "}" : "]", 1);
	default:
		return LL_EINVAL;
	}
}

char *json_print(const cJSON *item)
{
	struct buf out;

	buf_init(&out, (size_t)-1 / 2);
	if (!item || print_value(&out, item) < 0) {
		buf_release(&out);
		return NULL;
	}
	return out.data; /* malloc'ed by buf, NUL-terminated */
}
