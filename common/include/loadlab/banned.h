/*
 * banned.h - C library functions loadlab does not call, made compile
 * errors (git's banned.h idea).
 *
 * Why each is out:
 *   strcpy, strcat       no bound: use memcpy with a length checked
 *                        first, snprintf, or buf.h.
 *   strncpy              leaves the result without a NUL when it is cut,
 *                        and pads with NULs when it is not.
 *   sprintf, vsprintf    no bound: snprintf, vsnprintf (check the result
 *                        against the size).
 *   strtok               hidden state, not thread-safe: strchr/strcspn,
 *                        or strtok_r where it must be.
 *   gmtime, localtime,   a shared static result, not thread-safe:
 *   ctime, asctime       gmtime_r / localtime_r, clock_format_rfc3339().
 *
 * How it is used: the build forces it into every C file of the project
 * (`-include`, CMakeLists.txt), before anything else. So that the system
 * headers, which declare these names, are not caught by the macros, it
 * includes them first; their include guards keep them from being read
 * again after the macros exist. A use then fails with an error that names
 * the function, e.g. "'sorry_strcpy_is_a_banned_function' undeclared".
 * Never include it from a header of the project.
 *
 * Windows builds leave the macros out: mingw-w64's own headers (io.h,
 * rpcndr.h, wspiapi.h...) call some of these functions inline and are
 * included late, after windows.h or winsock2.h, whose order the code
 * must keep. The Win32 files are still checked: tests/style greps every
 * file of the tree for these calls.
 */
#ifndef LOADLAB_BANNED_H
#define LOADLAB_BANNED_H

#ifndef _WIN32
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Expands to an identifier nobody declares, so the build stops there. */
#define LOADLAB_BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(...) LOADLAB_BANNED(strcpy)
#undef strcat
#define strcat(...) LOADLAB_BANNED(strcat)
#undef strncpy
#define strncpy(...) LOADLAB_BANNED(strncpy)

#undef sprintf
#define sprintf(...) LOADLAB_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) LOADLAB_BANNED(vsprintf)

#undef strtok
#define strtok(...) LOADLAB_BANNED(strtok)

#undef gmtime
#define gmtime(...) LOADLAB_BANNED(gmtime)
#undef localtime
#define localtime(...) LOADLAB_BANNED(localtime)
#undef ctime
#define ctime(...) LOADLAB_BANNED(ctime)
#undef asctime
#define asctime(...) LOADLAB_BANNED(asctime)

#endif /* !_WIN32 */
#endif
