/* job_file_scan.c - a JSON text's brackets checked (job_file_scan.h). */
#include "job_file_scan.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Deeper than this the scan stops looking: json_parse_object() refuses
 * far less deep texts with a message of its own. */
#define SCAN_MAX_DEPTH 64
/* Longest key kept to name a bracket; longer ones are cut. */
#define SCAN_NAME_SIZE 48

enum expect {
	EXPECT_VALUE,          /* at the top, after ':' or after ',' in an array */
	EXPECT_VALUE_OR_CLOSE, /* after '[' */
	EXPECT_KEY_OR_CLOSE,   /* after '{' */
	EXPECT_KEY,            /* after ',' in an object */
	EXPECT_COLON,          /* after a key */
	EXPECT_AFTER_VALUE,    /* ',' or the bracket's close */
};

struct bracket {
	char open;                 /* '{' or '[' */
	size_t line;               /* where it opened */
	size_t indent;             /* the indentation of that line */
	char name[SCAN_NAME_SIZE]; /* 'generator', 'variants[2]', or "" (the outermost) */
	size_t items;              /* an array's values so far */
};

struct scan {
	const char *text;
	size_t len, pos, line;
	size_t line_indent; /* the current line's indentation */
	bool line_started;  /* a token was seen on the current line */
	struct bracket stack[SCAN_MAX_DEPTH];
	size_t depth;
	char key[SCAN_NAME_SIZE]; /* the last key read */
	/* the first line that started a member at or left of its enclosing
	 * bracket's opening line: that bracket (kept: it may be closed later,
	 * by the close meant for the one around it) at its depth (0: none) */
	size_t suspect_offset, suspect_depth;
	struct bracket suspect;
	char *message;
	size_t *ret_offset;
};

static char close_of(char open)
{
	return open == '{' ? '}' : ']';
}

/* "'generator'", or "the job's object" for the outermost. */
static void bracket_name(const struct bracket *b, char *out, size_t size)
{
	if (b->name[0])
		snprintf(out, size, "'%s'", b->name);
	else
		snprintf(out, size, "the job's %s", b->open == '{' ? "object" : "array");
}

static int fail(struct scan *s, size_t offset, const char *what)
{
	snprintf(s->message, JOB_FILE_SCAN_MESSAGE_SIZE, "%s", what);
	*s->ret_offset = offset;
	return 1;
}

/* "'}' expected to close NAME opened at line L" and TAIL, at OFFSET, for
 * bracket B. */
static int fail_unclosed(struct scan *s, size_t offset, const struct bracket *b, const char *tail)
{
	char name[SCAN_NAME_SIZE + 16], what[JOB_FILE_SCAN_MESSAGE_SIZE];

	bracket_name(b, name, sizeof(name));
	snprintf(what, sizeof(what), "'%c' expected to close %s opened at line %zu%s", close_of(b->open),
		 name, b->line, tail);
	return fail(s, offset, what);
}

/* A structural mistake: named at the suspect line when there is one (1),
 * else 0 and the caller names it where it was found. */
static int fail_at_suspect(struct scan *s)
{
	if (s->suspect_depth)
		return fail_unclosed(s, s->suspect_offset, &s->suspect, "");
	return 0;
}

/* Notes where a token starts, a suspect line perhaps; whether it is the
 * first of its line. */
static bool token_starts(struct scan *s, char c)
{
	bool first = !s->line_started;

	s->line_started = true;
	if (!first || s->depth < 2 || s->suspect_depth)
		return first;
	/* the bracket's own close at its opener's indentation is no mistake */
	if (c == close_of(s->stack[s->depth - 1].open))
		return first;
	if (s->stack[s->depth - 1].line < s->line && s->line_indent <= s->stack[s->depth - 1].indent) {
		s->suspect_offset = s->pos;
		s->suspect_depth = s->depth;
		s->suspect = s->stack[s->depth - 1];
	}
	return first;
}

/* Skips blanks, counting lines and each line's indentation. */
static void skip_blanks(struct scan *s)
{
	for (; s->pos < s->len; s->pos++) {
		char c = s->text[s->pos];
		if (c == '\n') {
			s->line++;
			s->line_indent = 0;
			s->line_started = false;
		} else if (c == ' ' || c == '\t' || c == '\r') {
			if (!s->line_started)
				s->line_indent++;
		} else {
			return;
		}
	}
}

/* Reads the string at POS (its '"'), keeping up to a name's size of it in
 * KEY when KEY is not NULL. 1 (with the message) when the file ends in it. */
static int read_string(struct scan *s, char *key)
{
	size_t start_line = s->line, n = 0;

	for (s->pos++; s->pos < s->len; s->pos++) {
		char c = s->text[s->pos];
		if (c == '"') {
			s->pos++;
			if (key)
				key[n] = '\0';
			return 0;
		}
		if (c == '\\' && s->pos + 1 < s->len) {
			s->pos++;
			continue;
		}
		if (c == '\n')
			s->line++;
		if (key && n + 1 < SCAN_NAME_SIZE && (unsigned char)c >= 0x20)
			key[n++] = c;
	}
	snprintf(s->message, JOB_FILE_SCAN_MESSAGE_SIZE,
		 "the file ends inside a string that starts at line %zu", start_line);
	*s->ret_offset = s->len;
	return 1;
}

static void read_scalar(struct scan *s)
{
	while (s->pos < s->len && strchr("+-.0123456789eEaflnrstu", s->text[s->pos]) && s->text[s->pos])
		s->pos++;
}

/* Closes the innermost bracket with the token at POS. A close that starts
 * its line at its opener's indentation clears a suspect line of that
 * bracket: the file is merely not indented (a close left of it is no such
 * proof: it may be the close meant for the bracket around). The value just
 * read is then the bracket itself, of its key in an object. */
static void pop(struct scan *s, bool first_on_line)
{
	const struct bracket *b = &s->stack[--s->depth];

	if (s->suspect_depth == s->depth + 1 && first_on_line && s->line_indent == b->indent)
		s->suspect_depth = 0;
	if (s->depth > 0 && s->stack[s->depth - 1].open == '{')
		snprintf(s->key, sizeof(s->key), "%s", b->name);
	s->pos++;
}

/* Opens OPEN as a value: of the last key in an object, or an array's item. */
static int push(struct scan *s, char open)
{
	struct bracket b = {.open = open, .line = s->line, .indent = s->line_indent};

	if (s->depth == SCAN_MAX_DEPTH)
		return -1;
	if (s->depth > 0 && s->stack[s->depth - 1].open == '{')
		snprintf(b.name, sizeof(b.name), "%s", s->key);
	else if (s->depth > 0)
		snprintf(b.name, sizeof(b.name), "%.*s[%zu]", SCAN_NAME_SIZE - 24,
			 s->stack[s->depth - 1].name, s->stack[s->depth - 1].items - 1);
	s->stack[s->depth++] = b;
	s->pos++;
	return 0;
}

/* What the value just read was the value of, for a message. */
static void value_owner(const struct scan *s, char *out, size_t size)
{
	const struct bracket *top = &s->stack[s->depth - 1];

	if (top->open == '{')
		snprintf(out, size, "the value of '%s'", s->key);
	else if (top->name[0])
		snprintf(out, size, "an item of '%s'", top->name);
	else
		snprintf(out, size, "an item of the array");
}

/* The token at POS where STATE expects something else: what was expected. */
static int unexpected(struct scan *s, enum expect state, char c)
{
	const struct bracket *top = s->depth ? &s->stack[s->depth - 1] : NULL;
	char what[JOB_FILE_SCAN_MESSAGE_SIZE], owner[SCAN_NAME_SIZE + 32];

	switch (state) {
	case EXPECT_VALUE:
	case EXPECT_VALUE_OR_CLOSE:
		if (top && top->open == '{')
			snprintf(what, sizeof(what), "a value expected after '%s'", s->key);
		else if (top && c == ']')
			snprintf(what, sizeof(what), "a value expected after ',' (no ',' before ']')");
		else
			snprintf(what, sizeof(what), "a value expected, not '%c'", c);
		return fail(s, s->pos, what);
	case EXPECT_KEY_OR_CLOSE:
		return fail(s, s->pos, "a key (a string in double quotes) or '}' expected");
	case EXPECT_KEY:
		return fail(s, s->pos,
			    c == '}' ? "a key expected after ',' (no ',' before '}')"
				     : "a key (a string in double quotes) expected after ','");
	case EXPECT_COLON:
		snprintf(what, sizeof(what), "':' expected after the key '%s'", s->key);
		return fail(s, s->pos, what);
	case EXPECT_AFTER_VALUE:
		break;
	}
	if (c == ']' || c == '}') /* the other bracket's close */
		return fail_at_suspect(s) || fail_unclosed(s, s->pos, top, "");
	/* a member or item with no ',' before it, or a key read as an array's
	 * item: where the indentation said a bracket was meant to close */
	if (fail_at_suspect(s))
		return 1;
	value_owner(s, owner, sizeof(owner));
	snprintf(what, sizeof(what), "',' or '%c' expected after %s", close_of(top->open), owner);
	return fail(s, s->pos, what);
}

int job_file_scan(const char *text, size_t len, char *message, size_t *ret_offset)
{
	struct scan s = {.text = text, .len = len, .line = 1, .message = message, .ret_offset = ret_offset};
	enum expect state = EXPECT_VALUE;

	for (;;) {
		bool first;
		char c;

		skip_blanks(&s);
		if (s.pos >= s.len)
			break;
		c = text[s.pos];
		if (s.depth == 0 && state == EXPECT_AFTER_VALUE)
			return 0; /* more after the value: cJSON's message places it */
		first = token_starts(&s, c);
		switch (state) {
		case EXPECT_VALUE:
		case EXPECT_VALUE_OR_CLOSE:
			if (c == ']' && state == EXPECT_VALUE_OR_CLOSE) {
				pop(&s, first);
				state = EXPECT_AFTER_VALUE;
				break;
			}
			if (s.depth && s.stack[s.depth - 1].open == '[')
				s.stack[s.depth - 1].items++;
			if (c == '{' || c == '[') {
				if (push(&s, c) < 0)
					return 0;
				state = c == '{' ? EXPECT_KEY_OR_CLOSE : EXPECT_VALUE_OR_CLOSE;
			} else if (c == '"') {
				if (read_string(&s, NULL))
					return 1;
				state = EXPECT_AFTER_VALUE;
			} else if (strchr("-0123456789tfn", c)) {
				read_scalar(&s);
				state = EXPECT_AFTER_VALUE;
			} else {
				return unexpected(&s, state, c);
			}
			break;
		case EXPECT_KEY_OR_CLOSE:
		case EXPECT_KEY:
			if (c == '}' && state == EXPECT_KEY_OR_CLOSE) {
				pop(&s, first);
				state = EXPECT_AFTER_VALUE;
			} else if (c == '"') {
				if (read_string(&s, s.key))
					return 1;
				state = EXPECT_COLON;
			} else {
				return unexpected(&s, state, c);
			}
			break;
		case EXPECT_COLON:
			if (c != ':')
				return unexpected(&s, state, c);
			s.pos++;
			state = EXPECT_VALUE;
			break;
		case EXPECT_AFTER_VALUE:
			if (c == ',') {
				s.pos++;
				state = s.stack[s.depth - 1].open == '{' ? EXPECT_KEY : EXPECT_VALUE;
			} else if (c == close_of(s.stack[s.depth - 1].open)) {
				pop(&s, first);
			} else {
				return unexpected(&s, state, c);
			}
			break;
		}
	}
	if (s.depth == 0)
		return 0; /* the brackets are right (an empty text: cJSON says so) */
	/* the file may hold as many closes as opens, one of them where another
	 * was meant (the one left open is then the outermost): the suspect
	 * line names where the close was missed */
	if (fail_at_suspect(&s))
		return 1;
	{
		const struct bracket *b = &s.stack[s.depth - 1];
		char name[SCAN_NAME_SIZE + 16];

		bracket_name(b, name, sizeof(name));
		snprintf(message, JOB_FILE_SCAN_MESSAGE_SIZE,
			 "the file ends early: '%c' expected to close %s opened at line %zu",
			 close_of(b->open), name, b->line);
		*ret_offset = len;
	}
	return 1;
}
