/*
 * names.h - what a user meant by a name that is not one of a list: the
 * nearest known name, for error messages that suggest it ("Unknown pe
 * variant 'rebse' (did you mean 'rebase'? known: default, rebase, ...)").
 *
 * The lists are tables of structs whose first member is the name (a
 * preset table), or plain NULL-free arrays of strings (STRIDE
 * sizeof(char *)). Nothing here allocates.
 */
#ifndef LOADLAB_NAMES_H
#define LOADLAB_NAMES_H

#include <stddef.h>

/* Names longer than this are never suggested nor compared (a suggestion is
 * for a typo of a short name, and the distance's table is on the stack). */
#define NAMES_MAX_LEN 64

/*
 * The name among COUNT at FIRST (each STRIDE bytes after the one before:
 * a `const char *` at that address) nearest to WORD by edit distance
 * (insertions, deletions, substitutions and swaps of two neighbours, case
 * ignored), when it is close enough to be a typo: at most 1 edit for
 * names of up to 4 characters, 2 up to 8, 3 beyond. NULL when none is,
 * when WORD or a name is longer than NAMES_MAX_LEN, or when two names are
 * equally near (a guess between two is no help). Borrowed: one of the
 * list's own strings.
 */
const char *names_nearest(const char *word, const void *first, size_t count, size_t stride);

/* The index of WORD among the COUNT names at FIRST (laid out as for
 * names_nearest()), compared exactly; COUNT when none is WORD. */
size_t names_find(const char *word, const void *first, size_t count, size_t stride);

/*
 * Records with err_set() "Unknown WHAT 'WORD' (did you mean 'X'? known: A,
 * B, C)." — the suggestion only when names_nearest() has one, the list in
 * its order — and returns LL_EINVAL. WORD is cut to NAMES_MAX_LEN
 * characters in the message.
 */
int names_unknown(const char *what, const char *word, const void *first, size_t count, size_t stride);

#endif
