/*
 * err.h - error codes shared by every loadlab module.
 *
 * Functions return 0 on success or one of the negative LL_E* codes below.
 * A function that fails may also record a one-sentence message for its
 * caller with err_set(); err_message() returns the last one recorded on the
 * calling thread. Messages are per thread, so concurrent request handlers do
 * not see each other's.
 */
#ifndef LOADLAB_ERR_H
#define LOADLAB_ERR_H

/* printf-style checking of a function's FMT (argument F) and its values
 * (from A). mingw-w64's plain "printf" format means the MS runtime's, which
 * knows no %zu or %lld; loadlab builds with __USE_MINGW_ANSI_STDIO=1 and
 * checks against the GNU rules everywhere. */
#if defined(__MINGW32__)
#define LL_PRINTF_FORMAT(f, a) __attribute__((format(gnu_printf, f, a)))
#else
#define LL_PRINTF_FORMAT(f, a) __attribute__((format(printf, f, a)))
#endif

enum {
	LL_OK = 0,
	LL_EINVAL = -1,        /* bad argument or input that fails validation */
	LL_ENOMEM = -2,        /* allocation failed */
	LL_EIO = -3,           /* the OS refused a read, write or open */
	LL_ENOTFOUND = -4,     /* no such object */
	LL_ECONFLICT = -5,     /* the object changed state under the caller */
	LL_ERANGE = -6,        /* a number outside its documented bounds */
	LL_EFORMAT = -7,       /* a malformed file or message */
	LL_ETOOBIG = -8,       /* a documented size limit was exceeded */
	LL_EAUTH = -9,         /* missing, malformed or unknown credentials */
	LL_EFORBIDDEN = -10,   /* credentials valid but not allowed here */
	LL_ESTORE = -11,       /* the store failed */
	LL_EUNSUPPORTED = -12, /* not available on this platform or build */
	LL_ESTATE = -13,       /* not valid in the object's current state */
	LL_ENOSPACE = -14,     /* the disk (or its share for this) is full */
};

/* Returns a stable snake_case name for CODE ("invalid_argument"), suitable
 * for the "code" field of an API error. Unknown codes give "internal". */
const char *err_name(int code);

/* Records a message for CODE on this thread and returns CODE, so that a
 * failing function can say `return err_set(LL_EINVAL, "...", ...);`. */
int err_set(int code, const char *fmt, ...) LL_PRINTF_FORMAT(2, 3);

/* The last message recorded on this thread when it was recorded for CODE;
 * otherwise (none recorded since err_clear(), or the last one came with
 * another code, so it belongs to an earlier failure) a generic text for
 * CODE. Borrowed; valid until the next err_set() on this thread. */
const char *err_message(int code);

/* Forgets this thread's last message. */
void err_clear(void);

/* What a command does with an error: prints "WHO: " and RC's message
 * (err_message()) as one line on stderr, and returns 2, the exit code of
 * an error. */
int err_exit(const char *who, int rc);

/* The same for a mistake in its arguments: "WHO: WHAT (see WHO --help)". */
int err_exit_usage(const char *who, const char *what);

#endif
