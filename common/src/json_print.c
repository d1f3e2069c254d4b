/*
 * json_print.c - json_print(), json_append(), json_append_string(),
 * json_number_text() and json_write_file_atomic() (json.h): the bytes of cJSON 1.7.15's
 * cJSON_PrintUnformatted(), without its sprintf and sscanf per number.
 *
 * cJSON prints every number with "%1.15g", reads it back with sscanf and
 * prints it again with "%1.17g" when the value did not survive (cJSON.c,
 * print_number): about 3,300 instructions a number, most of what an
 * answer of loadlabd cost to print (tests/bench/README.md, pass 6), a
 * quarter of a report's. Here, in order:
 * - an integer below 10^15 prints as its digits with "%1.15g" and reads
 *   back exactly: written digit by digit;
 * - reports' figures are rounded to 0.1, 0.01 or 0.0001: such a number d,
 *   the double nearest k / 10^j with |k| < 10^15, prints under "%1.15g" as
 *   that decimal exactly and reads back as d: written from k;
 * - any other number in [1e-20, 1e10) (p-values): g_text() below;
 * - the rest as cJSON does, with printf.
 * Strings are escaped as cJSON's print_string_ptr() does, objects and
 * arrays without spaces.
 */
#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/plat.h"

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

/* The decimal digits of V at P; the end. */
static char *put_digits(char *p, unsigned long long v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* D as the decimal k / 10^j (j 1, 2 or 4, |k| < 10^15) whose nearest
 * double it is, at OUT; the end, or NULL when it is none. Extended
 * precision (x87) can only make the check fail, never pass wrongly. */
static char *decimal_text(double d, char *out)
{
	static const double scales[] = {10, 100, 10000};
	static const int digits[] = {1, 2, 4};

	for (int i = 0; i < 3; i++) {
		double scaled = d * scales[i];
		long long k, frac;
		int width = digits[i];
		char *p = out;
		if (!(fabs(scaled) < 1e15))
			return NULL;
		k = llround(scaled);
		if ((double)k / scales[i] != d)
			continue;
		frac = llabs(k) % (long long)scales[i];
		if (k < 0)
			*p++ = '-';
		p = put_digits(p, (unsigned long long)(llabs(k) / (long long)scales[i]));
		if (frac != 0) {
			while (frac % 10 == 0) {
				frac /= 10;
				width--;
			}
			*p++ = '.';
			for (int w = width - 1; w >= 0; w--, frac /= 10)
				p[w] = (char)('0' + frac % 10);
			p += width;
		}
		return p;
	}
	return NULL;
}

/*
 * "%1.<P>g" of D (P 15 or 17) at OUT without printf, and in *RET the
 * double strtod() reads back from it: D scaled by an exact power of ten in
 * long double (64-bit mantissa: the product's error is below 0.006 of the
 * last digit), its P digits rounded, and the text laid out as %g does.
 * The end of the text, or NULL (the caller then uses printf) when D is out
 * of the powers' range, the last digit's rounding is within 0.01 of a tie,
 * or doubles are not evaluated as doubles (x87: the read-back division
 * would be rounded twice). *RET is NaN when reading back needs more than
 * one exact division.
 */
static char *g_text(double d, int p, char *out, double *ret)
{
	static const long double pow10[] = {1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,
					    1e7L,  1e8L,  1e9L,  1e10L, 1e11L, 1e12L, 1e13L,
					    1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L,
					    1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
	long double a = fabsl((long double)d), scaled, frac;
	unsigned long long m;
	char digits[24], *o = out;
	int e, sc, n, point;

	if (LDBL_MANT_DIG < 64 || FLT_EVAL_METHOD != 0 || !(a >= 1e-20L && a < 1e10L) || (p != 15 && p != 17))
		return NULL;
	frexp(d, &e); /* |D| in [2^(e-1), 2^e): its decimal exponent is this or one more */
	e = (int)floor((e - 1) * 0.30102999566398120);
	for (int tries = 0;; tries++) {
		sc = p - 1 - e;
		if (sc < 0 || sc > 27 || tries > 2)
			return NULL;
		scaled = a * pow10[sc];
		if (scaled < pow10[p - 1])
			e--;
		else if (scaled >= pow10[p])
			e++;
		else
			break;
	}
	m = (unsigned long long)scaled;
	frac = scaled - (long double)m;
	if (fabsl(frac - 0.5L) < 0.01L)
		return NULL;
	if (frac > 0.5L && ++m == (unsigned long long)pow10[p]) {
		m /= 10;
		e++;
		sc--;
	}
	/* read back: M / 10^SC, both exact doubles when M < 2^53 */
	if (sc > 22 || m >= (1ull << 53))
		*ret = NAN;
	else
		*ret = (d < 0 ? -1.0 : 1.0) * ((double)m / (double)pow10[sc]);
	n = (int)(put_digits(digits, m) - digits);
	while (n > 1 && digits[n - 1] == '0')
		n--; /* %g drops trailing zeros */
	if (d < 0)
		*o++ = '-';
	if (e < -4 || e >= p) {
		*o++ = digits[0];
		if (n > 1) {
			*o++ = '.';
			memcpy(o, digits + 1, (size_t)n - 1);
			o += n - 1;
		}
		*o++ = 'e';
		*o++ = e < 0 ? '-' : '+';
		if (abs(e) < 10)
			*o++ = '0';
		o = put_digits(o, (unsigned long long)abs(e));
	} else if (e < 0) {
		*o++ = '0';
		*o++ = '.';
		for (int z = -1; z > e; z--)
			*o++ = '0';
		memcpy(o, digits, (size_t)n);
		o += n;
	} else {
		point = e + 1; /* digits before the point */
		for (int k = 0; k < point; k++)
			*o++ = k < n ? digits[k] : '0';
		if (n > point) {
			*o++ = '.';
			memcpy(o, digits + point, (size_t)(n - point));
			o += n - point;
		}
	}
	return o;
}

/* cJSON's own way: printf, read back, the locale's decimal point as '.'. */
static size_t printf_text(double d, char *out)
{
	double test;
	int length = snprintf(out, JSON_NUMBER_MAX, "%1.15g", d);
	char point;

	if (sscanf(out, "%lg", &test) != 1 || !same_double(test, d))
		length = snprintf(out, JSON_NUMBER_MAX, "%1.17g", d);
	if (length < 0 || length >= JSON_NUMBER_MAX)
		length = 0; /* cannot happen: 25 bytes at most */
	out[length] = 0;
	point = localeconv()->decimal_point[0];
	for (int i = 0; point != '.' && i < length; i++)
		if (out[i] == point)
			out[i] = '.';
	return (size_t)length;
}

/* strtod() of the text from OUT to END into *RET, as sscanf("%lg") reads
 * it; false when the locale's decimal point is not '.' (strtod would stop
 * there). For p-values below 1e-8, whose read back is no exact division. */
static bool read_back(char *out, char *end, double *ret)
{
	if (localeconv()->decimal_point[0] != '.' || localeconv()->decimal_point[1])
		return false;
	*end = 0;
	*ret = strtod(out, NULL);
	return true;
}

size_t json_number_text(double d, char *out)
{
	char *end = out;
	double test;

	if (isnan(d) || isinf(d)) {
		memcpy(out, "null", 5);
		return 4;
	}
	if (fabs(d) < 1e15 && (double)(long long)d == d && !(d == 0 && signbit(d))) { /* "-0" below */
		if (d < 0)
			*end++ = '-';
		end = put_digits(end, (unsigned long long)fabs(d));
	} else if (d != 0 && (end = decimal_text(d, out))) {
		/* written */
	} else if ((end = g_text(d, 15, out, &test)) && (!isnan(test) || read_back(out, end, &test))) {
		if (!same_double(test, d) && !(end = g_text(d, 17, out, &test)))
			return printf_text(d, out);
	} else {
		return printf_text(d, out);
	}
	*end = 0;
	return (size_t)(end - out);
}

int json_append_string(struct buf *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	static const char controls[] = "\b\f\n\r\t", letters[] = "bfnrt";
	const char *run, *control;
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
		/* The characters JSON escapes with one letter, else \u00XX. */
		if (c == '"' || c == '\\') {
			escape[1] = (char)c;
		} else if (c && (control = strchr(controls, c))) {
			escape[1] = letters[control - controls];
		} else {
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

int json_append(struct buf *out, const cJSON *item)
{
	const cJSON *child;
	char number[JSON_NUMBER_MAX];
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
		return buf_append(out, number, json_number_text(item->valuedouble, number));
	case cJSON_Raw:
		return item->valuestring ? buf_append_str(out, item->valuestring)
					 : err_set(LL_EINVAL, "A raw JSON item has no text.");
	case cJSON_String:
		return json_append_string(out, item->valuestring);
	case cJSON_Array:
	case cJSON_Object:
		object = (item->type & 0xFF) == cJSON_Object;
		if ((rc = buf_append(out, object ? "{" : "[", 1)) < 0)
			return rc;
		for (child = item->child; child; child = child->next) {
			if (child != item->child && (rc = buf_append(out, ",", 1)) < 0)
				return rc;
			if (object && ((rc = json_append_string(out, child->string)) < 0 ||
				       (rc = buf_append(out, ":", 1)) < 0))
				return rc;
			if ((rc = json_append(out, child)) < 0)
				return rc;
		}
		return buf_append(out, object ? "}" : "]", 1);
	default:
		return err_set(LL_EINVAL, "A JSON item of unknown type.");
	}
}

char *json_print(const cJSON *item)
{
	struct buf out;

	buf_init(&out, (size_t)-1 / 2);
	if (!item || json_append(&out, item) < 0) {
		buf_release(&out);
		return NULL;
	}
	return out.data; /* malloc'ed by buf, NUL-terminated */
}

int json_write_file_atomic(const char *path, const cJSON *item, bool formatted, bool private_mode)
{
	char *text = formatted ? cJSON_Print(item) : json_print(item);
	int rc;

	if (!text)
		return err_set(LL_ENOMEM, "Out of memory.");
	rc = plat_write_file_atomic(path, text, strlen(text), private_mode);
	free(text);
	return rc;
}
