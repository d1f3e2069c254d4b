/* case_fold.c - simple case folding of file names (case_fold.h). */
#include "loadlab/case_fold.h"

#include <string.h>

/* A run of code points FIRST..LAST folded by adding DELTA, to every one
 * (STEP 1) or to every other one from FIRST (STEP 2: upper and lower case
 * alternate). From Unicode CaseFolding.txt. */
struct fold_range {
	uint32_t first, last;
	int32_t delta;
	uint8_t step;
};

static const struct fold_range ranges[] = {
	{0x0041, 0x005A, 32, 1},                            /* A-Z */
	{0x00B5, 0x00B5, 775, 1},                           /* micro sign -> Greek mu */
	{0x00C0, 0x00D6, 32, 1},                            /* Latin-1 letters */
	{0x00D8, 0x00DE, 32, 1},    {0x0100, 0x012F, 1, 2}, /* Latin Extended-A */
	{0x0132, 0x0137, 1, 2},     {0x0139, 0x0148, 1, 2},     {0x014A, 0x0177, 1, 2},
	{0x0178, 0x0178, -121, 1},                             /* Y with diaeresis */
	{0x0179, 0x017E, 1, 2},     {0x017F, 0x017F, -268, 1}, /* long s */
	{0x0386, 0x0386, 38, 1},                               /* Greek */
	{0x0388, 0x038A, 37, 1},    {0x038C, 0x038C, 64, 1},    {0x038E, 0x038F, 63, 1},
	{0x0391, 0x03A1, 32, 1},    {0x03A3, 0x03AB, 32, 1},    {0x03C2, 0x03C2, 1, 1}, /* final sigma */
	{0x03D8, 0x03EF, 1, 2},     {0x0400, 0x040F, 80, 1},                            /* Cyrillic */
	{0x0410, 0x042F, 32, 1},    {0x0460, 0x0481, 1, 2},     {0x048A, 0x04BF, 1, 2},
	{0x04C0, 0x04C0, 15, 1},    {0x04C1, 0x04CE, 1, 2},     {0x04D0, 0x052F, 1, 2},
	{0x0531, 0x0556, 48, 1},                                /* Armenian */
	{0x1E00, 0x1E95, 1, 2},                                 /* Latin Extended Additional */
	{0x1EA0, 0x1EFF, 1, 2},     {0x212A, 0x212A, -8383, 1}, /* Kelvin sign -> k */
	{0x212B, 0x212B, -8262, 1},                             /* Angstrom sign -> a with ring */
	{0xFF21, 0xFF3A, 32, 1},                                /* fullwidth A-Z */
};

uint32_t case_fold_char(uint32_t c)
{
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		const struct fold_range *r = &ranges[i];
		if (c < r->first || c > r->last)
			continue;
		if (r->step == 2 && (c - r->first) % 2 != 0)
			return c; /* already the lower case of its pair */
		return (uint32_t)((int32_t)c + r->delta);
	}
	return c;
}

/* The code point of the well-formed UTF-8 sequence at S and its length in
 * *RET_LEN, or 0 with *RET_LEN 0 when S does not start one. */
static uint32_t decode(const unsigned char *s, size_t *ret_len)
{
	size_t len = s[0] < 0x80             ? 1
		     : (s[0] & 0xE0) == 0xC0 ? 2
		     : (s[0] & 0xF0) == 0xE0 ? 3
		     : (s[0] & 0xF8) == 0xF0 ? 4
					     : 0;
	uint32_t c = len == 1 ? s[0] : len == 2 ? s[0] & 0x1Fu : len == 3 ? s[0] & 0x0Fu : s[0] & 0x07u;

	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			*ret_len = 0;
			return 0;
		}
		c = (c << 6) | (s[i] & 0x3Fu);
	}
	*ret_len = len;
	return c;
}

/* Writes C as UTF-8 at OUT; returns its length. */
static size_t encode(uint32_t c, unsigned char *out)
{
	if (c < 0x80) {
		out[0] = (unsigned char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (unsigned char)(0xC0 | (c >> 6));
		out[1] = (unsigned char)(0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (unsigned char)(0xE0 | (c >> 12));
		out[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
		out[2] = (unsigned char)(0x80 | (c & 0x3F));
		return 3;
	}
	out[0] = (unsigned char)(0xF0 | (c >> 18));
	out[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
	out[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
	out[3] = (unsigned char)(0x80 | (c & 0x3F));
	return 4;
}

void case_fold_utf8(const char *text, char *out)
{
	const unsigned char *s = (const unsigned char *)text;
	unsigned char *o = (unsigned char *)out;

	while (*s) {
		size_t len;
		uint32_t c = decode(s, &len);
		if (len == 0) {
			*o++ = *s++;
			continue;
		}
		uint32_t folded = case_fold_char(c);
		unsigned char bytes[4];
		size_t n = encode(folded, bytes);
		/* Every mapping above keeps or shortens the encoding. */
		if (n > len) {
			memcpy(o, s, len);
			o += len;
		} else {
			memcpy(o, bytes, n);
			o += n;
		}
		s += len;
	}
	*o = '\0';
}
