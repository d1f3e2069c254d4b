/* Passwords taken out of text before it is printed: see redact.h. */
#include "loadlab/redact.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

/* OUT being filled: SIZE bytes, USED of them written. */
struct writer {
	char *out;
	size_t size, used;
};

static void put(struct writer *w, const char *text, size_t n)
{
	size_t room = w->size - 1 - w->used;

	if (n > room)
		n = room;
	memcpy(w->out + w->used, text, n);
	w->used += n;
}

/* Where a bare (unquoted) value or a URI ends. */
static bool ends_token(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'';
}

/* TEXT at "://": the length of its user information's password and where
 * it starts (*RET_START, from TEXT), or 0 when there is none. */
static size_t uri_password(const char *text, size_t *ret_start)
{
	const char *authority = text + 3, *end = authority, *at = NULL, *colon;

	while (!ends_token(*end) && *end != '?' && *end != '#') {
		if (*end == '@')
			at = end;
		end++;
	}
	if (!at || !(colon = memchr(authority, ':', (size_t)(at - authority))))
		return 0;
	*ret_start = (size_t)(colon + 1 - text);
	return (size_t)(at - colon - 1);
}

/* TEXT at a key ending in "password" (KEY_LENGTH bytes), IN_QUERY when the
 * key is a URI query's: when '=' follows (white space around it allowed),
 * *RET_START where its value starts and the value's length; else 0. A
 * query's value ends at '&', '#', a quote or white space; a connection
 * string's at white space (a backslash escapes the next byte), a quoted
 * one at its closing quote (counted with it). */
static size_t key_value(const char *text, size_t key_length, bool in_query, size_t *ret_start)
{
	size_t i = key_length, start;

	while (text[i] == ' ' || text[i] == '\t')
		i++;
	if (text[i] != '=')
		return 0;
	i++;
	while (!in_query && (text[i] == ' ' || text[i] == '\t'))
		i++;
	start = i;
	if (in_query) {
		while (!ends_token(text[i]) && text[i] != '&' && text[i] != '#')
			i++;
	} else if (text[i] == '\'') {
		for (i++; text[i] && text[i] != '\''; i++)
			if (text[i] == '\\' && text[i + 1])
				i++;
		if (text[i] == '\'')
			i++;
	} else {
		for (; text[i] && text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r';
		     i++)
			if (text[i] == '\\' && text[i + 1])
				i++;
	}
	*ret_start = start;
	return i - start;
}

/* Whether the key that ends in "password" at TEXT + I is a URI query's:
 * the byte before its name ([A-Za-z_]*password) is '?' or '&'. */
static bool key_in_query(const char *text, size_t i)
{
	while (i > 0 && (isalpha((unsigned char)text[i - 1]) || text[i - 1] == '_'))
		i--;
	return i > 0 && (text[i - 1] == '?' || text[i - 1] == '&');
}

/* The password that starts at TEXT + I, if any: its start (from TEXT + I)
 * and length, else 0. */
static size_t secret_at(const char *text, size_t i, size_t *ret_start)
{
	static const char key[] = "password";

	if (strncmp(text + i, "://", 3) == 0)
		return uri_password(text + i, ret_start);
	if (strncasecmp(text + i, key, sizeof(key) - 1) == 0)
		return key_value(text + i, sizeof(key) - 1, key_in_query(text, i), ret_start);
	return 0;
}

/* A password found in the source text: N bytes at P. */
struct known {
	const char *p;
	size_t n;
};

/* The passwords of SOURCE (at most MAX, each at least
 * REDACT_KNOWN_MIN bytes; a quoted value without its quotes). */
static int find_known(const char *source, struct known *ret, int max)
{
	int count = 0;

	for (size_t i = 0; source && source[i] && count < max;) {
		size_t start = 0, n = secret_at(source, i, &start);
		if (n == 0) {
			i++;
			continue;
		}
		struct known k = {source + i + start, n};
		if (k.n >= 2 && k.p[0] == '\'' && k.p[k.n - 1] == '\'') {
			k.p++;
			k.n -= 2;
		}
		if (k.n >= REDACT_KNOWN_MIN)
			ret[count++] = k;
		i += start + n;
	}
	return count;
}

char *redact_secrets_of(const char *text, const char *source, char *out, size_t size)
{
	struct writer w = {out, size, 0};
	struct known known[REDACT_KNOWN_MAX];
	int count = find_known(source, known, REDACT_KNOWN_MAX);

	if (size == 0)
		return out;
	for (size_t i = 0; text && text[i];) {
		size_t start = 0, n = secret_at(text, i, &start);
		for (int k = 0; n == 0 && k < count; k++)
			if (strncmp(text + i, known[k].p, known[k].n) == 0)
				n = known[k].n;
		if (n == 0) {
			put(&w, text + i, 1);
			i++;
			continue;
		}
		put(&w, text + i, start);
		put(&w, REDACT_MARK, sizeof(REDACT_MARK) - 1);
		i += start + n;
	}
	out[w.used] = '\0';
	return out;
}

char *redact_secrets(const char *text, char *out, size_t size)
{
	return redact_secrets_of(text, NULL, out, size);
}
