/*
 * case_fold.h - file names compared as a case-insensitive file system
 * (NTFS, FAT) compares them: by their characters' lower-case forms, for
 * the scripts Windows folds (Latin, Greek, Cyrillic, Armenian, fullwidth
 * Latin), not only ASCII ("Ä.dll" and "ä.dll" are one file on Windows).
 *
 * The mapping is Unicode's simple case folding of those blocks, one
 * character to one (Unicode CaseFolding.txt, status C and S); characters
 * outside them are kept as they are. A folded UTF-8 string is never longer
 * than the original.
 */
#ifndef LOADLAB_CASE_FOLD_H
#define LOADLAB_CASE_FOLD_H

#include <stddef.h>
#include <stdint.h>

/* The simple case folding of code point C (C itself when it has none). */
uint32_t case_fold_char(uint32_t c);

/* Writes TEXT (UTF-8; a byte that is not part of a well-formed sequence is
 * copied as it is) folded into OUT, NUL-ended; OUT has room for
 * strlen(TEXT) + 1 bytes. */
void case_fold_utf8(const char *text, char *out);

#endif
