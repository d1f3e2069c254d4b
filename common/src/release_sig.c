/* release_sig.c - the release key's files and signed text (release_sig.h);
 * the Ed25519 arithmetic is the OS backend's (release_sig_posix.c,
 * release_sig_win32.c). */
#include "loadlab/release_sig.h"

#include "loadlab/err.h"
#include "loadlab/plat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_WORD "loadlab-release-key"
#define SIG_WORD "loadlab-release-sig"
#define ALGORITHM "ed25519"

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The N bytes written as 2*N hex digits at TEXT (exactly: LEN == 2*N). */
static bool hex_decode(const char *text, size_t len, unsigned char *out, size_t n)
{
	if (len != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++) {
		int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return true;
}

static void hex_encode(const unsigned char *data, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[data[i] >> 4];
		out[2 * i + 1] = digits[data[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The next word of the line [*AT, END): its start and length; *AT moves
 * past it. */
static size_t next_word(const char **at, const char *end, const char **ret_word)
{
	const char *p = *at, *start;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	start = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	*at = p;
	*ret_word = start;
	return (size_t)(p - start);
}

static bool word_is(const char *word, size_t len, const char *expected)
{
	return len == strlen(expected) && memcmp(word, expected, len) == 0;
}

/* A walk over a text's lines; NUMBER counts them from 1. */
struct line_walk {
	const char *text, *end;
	int number;
};

/* The next line that is not blank or a comment, without its leading
 * blanks and its CR LF; false at the end. */
static bool next_line(struct line_walk *w, const char **ret_line, const char **ret_end)
{
	while (w->text < w->end) {
		const char *nl = memchr(w->text, '\n', (size_t)(w->end - w->text));
		const char *line = w->text, *stop = nl ? nl : w->end, *p = line;
		w->text = nl ? nl + 1 : w->end;
		w->number++;
		if (stop > line && stop[-1] == '\r')
			stop--;
		while (p < stop && (*p == ' ' || *p == '\t'))
			p++;
		if (p == stop || *p == '#')
			continue;
		*ret_line = p;
		*ret_end = stop;
		return true;
	}
	return false;
}

int release_keys_parse(const char *text, size_t len, struct release_keys *ret_keys)
{
	struct line_walk w = {text, text + len, 0};
	struct release_keys keys;
	const char *line, *end;

	memset(&keys, 0, sizeof(keys));
	if (memchr(text, '\0', len))
		return err_set(LL_EFORMAT, "A release key file is text: this one holds a NUL byte.");
	while (next_line(&w, &line, &end)) {
		const char *word;
		size_t n = next_word(&line, end, &word);
		bool ok = word_is(word, n, KEY_WORD);
		if (ok) {
			n = next_word(&line, end, &word);
			ok = word_is(word, n, ALGORITHM);
		}
		if (ok && keys.count == RELEASE_KEYS_MAX)
			return err_set(LL_EFORMAT, "Line %d: a release key file holds at most %d keys.",
				       w.number, RELEASE_KEYS_MAX);
		if (ok) {
			n = next_word(&line, end, &word);
			ok = hex_decode(word, n, keys.key[keys.count], 32);
		}
		if (!ok)
			return err_set(LL_EFORMAT,
				       "Line %d is not \"%s %s HEX [COMMENT]\" with 64 hex digits.", w.number,
				       KEY_WORD, ALGORITHM);
		keys.count++;
	}
	if (keys.count == 0)
		return err_set(LL_EFORMAT, "The release key file holds no key.");
	*ret_keys = keys;
	return 0;
}

int release_keys_read(const char *path, struct release_keys *ret_keys)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (!plat_file_exists(path))
		return err_set(LL_ENOTFOUND, "There is no release key file %s.", path);
	if ((rc = plat_read_file(path, RELEASE_KEY_FILE_MAX, &text, &len)) < 0)
		return rc == LL_ETOOBIG ? err_set(rc, "The release key file %s is larger than %d bytes.",
						  path, RELEASE_KEY_FILE_MAX)
					: rc;
	rc = release_keys_parse(text, len, ret_keys);
	free(text);
	if (rc < 0)
		return err_set(rc, "%s: %s", path, err_message(rc));
	return 0;
}

void release_key_line(const unsigned char key[32], char *out, size_t size)
{
	char hex[65];

	hex_encode(key, 32, hex);
	snprintf(out, size, KEY_WORD " " ALGORITHM " %s\n", hex);
}

int release_sig_parse(const char *text, size_t len, unsigned char ret_sig[64])
{
	struct line_walk w = {text, text + len, 0};
	unsigned char sig[64];
	const char *line, *end, *word;
	size_t n;

	if (len > RELEASE_SIG_FILE_MAX)
		return err_set(LL_EFORMAT, "A signature file has at most %d bytes.", RELEASE_SIG_FILE_MAX);
	if (memchr(text, '\0', len) || !next_line(&w, &line, &end))
		return err_set(LL_EFORMAT, "The signature file holds no signature line.");
	n = next_word(&line, end, &word);
	if (!word_is(word, n, SIG_WORD) || (n = next_word(&line, end, &word), !word_is(word, n, ALGORITHM)) ||
	    (n = next_word(&line, end, &word), !hex_decode(word, n, sig, 64)) ||
	    (n = next_word(&line, end, &word), n != 0))
		return err_set(LL_EFORMAT, "The signature file is not \"" SIG_WORD " " ALGORITHM
					   " HEX\" with 128 hex digits.");
	if (next_line(&w, &line, &end))
		return err_set(LL_EFORMAT, "The signature file holds more than one line.");
	memcpy(ret_sig, sig, 64);
	return 0;
}

void release_sig_line(const unsigned char sig[64], char *out, size_t size)
{
	char hex[129];

	hex_encode(sig, 64, hex);
	snprintf(out, size, SIG_WORD " " ALGORITHM " %s\n", hex);
}

bool release_sig_message(const char *sha256_hex, char *out, size_t size)
{
	if (!sha256_hex || strlen(sha256_hex) != 64 || strspn(sha256_hex, "0123456789abcdef") != 64 ||
	    size < sizeof(RELEASE_SIG_CONTEXT) + 64)
		return false;
	snprintf(out, size, "%s%s", RELEASE_SIG_CONTEXT, sha256_hex);
	return true;
}
