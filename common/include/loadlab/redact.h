/*
 * redact.h - passwords taken out of text before it is printed
 * (docs/operations.md, "Passwords in --db").
 *
 * loadlabd prints its --db (the start line), libpq's messages (which may
 * quote the whole connection string) and loadlabd migrate's --to: each
 * goes through redact_secrets() first. What it hides, wherever it is in
 * the text, each replaced by "***":
 *   - the password of a URI's user information, any scheme:
 *     "postgresql://user:SECRET@host/db" -> "postgresql://user:***@host/db"
 *     (the last '@' before the URI's query or its end ends it, so a
 *     password holding an unescaped '@' is hidden whole);
 *   - the value of any key whose name ends in "password" ("password",
 *     "sslpassword", any case): in a URI's query ("?password=SECRET&x=1",
 *     up to '&', '#', a quote or white space) and in a keyword/value
 *     connection string ("password=SECRET", "password = 'se cr\'et'", a
 *     quoted value up to its closing quote).
 * It errs on the side of hiding: "http://host:8080/a@b" loses "8080/a"
 * too. Pure, no allocation.
 *
 * A message about a connection string may quote a piece of it alone
 * (libpq: 'invalid percent-encoded token: "s3cret%"'), where nothing says
 * it is a password: redact_secrets_of() also hides every occurrence of
 * the passwords it finds in the connection string itself.
 */
#ifndef LOADLAB_REDACT_H
#define LOADLAB_REDACT_H

#include <stddef.h>

/* What a hidden password is written as. */
#define REDACT_MARK "***"

/* Copies TEXT (NULL: "") into OUT, SIZE bytes (at least 1), cut at
 * SIZE - 1 and always terminated, with every password above replaced by
 * REDACT_MARK. Returns OUT. */
char *redact_secrets(const char *text, char *out, size_t size);

/* The passwords of a connection string that redact_secrets_of() looks
 * for by value: at most this many, each at least this long (a shorter one
 * would hide common letters; the rules above still hide it in place). */
#define REDACT_KNOWN_MAX 8
#define REDACT_KNOWN_MIN 4

/* redact_secrets(TEXT), and also every occurrence in TEXT of a password
 * of SOURCE (NULL: none), the connection string TEXT is about, as it is
 * written there (a quoted value without its quotes). Returns OUT. */
char *redact_secrets_of(const char *text, const char *source, char *out, size_t size);

#endif
