#include "loadlab/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The last message recorded on this thread and the code it came with. */
static _Thread_local char last_message[512];
static _Thread_local int last_code;

const char *err_name(int code)
{
	switch (code) {
	case LL_OK:
		return "ok";
	case LL_EINVAL:
		return "invalid_argument";
	case LL_ENOMEM:
		return "out_of_memory";
	case LL_EIO:
		return "io_error";
	case LL_ENOTFOUND:
		return "not_found";
	case LL_ECONFLICT:
		return "conflict";
	case LL_ERANGE:
		return "out_of_range";
	case LL_EFORMAT:
		return "malformed";
	case LL_ETOOBIG:
		return "too_large";
	case LL_EAUTH:
		return "unauthorized";
	case LL_EFORBIDDEN:
		return "forbidden";
	case LL_ESTORE:
		return "store_error";
	case LL_EUNSUPPORTED:
		return "unsupported";
	case LL_ESTATE:
		return "invalid_state";
	case LL_ENOSPACE:
		return "storage_full";
	default:
		return "internal";
	}
}

int err_set(int code, const char *fmt, ...)
{
	char text[sizeof(last_message)];
	va_list ap;

	/* Formatted aside first: an argument may be err_message()'s own
	 * buffer ("...: %s", err_message(rc)). */
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	memcpy(last_message, text, sizeof(text));
	last_code = code;
	return code;
}

const char *err_message(int code)
{
	/* A message recorded for another code belongs to an earlier failure. */
	if (last_message[0] && last_code == code)
		return last_message;
	switch (code) {
	case LL_OK:
		return "No error.";
	case LL_EINVAL:
		return "Invalid argument.";
	case LL_ENOMEM:
		return "Out of memory.";
	case LL_EIO:
		return "An I/O operation failed.";
	case LL_ENOTFOUND:
		return "No such object.";
	case LL_ECONFLICT:
		return "The object changed state meanwhile.";
	case LL_ERANGE:
		return "A number is out of range.";
	case LL_EFORMAT:
		return "Malformed input.";
	case LL_ETOOBIG:
		return "A size limit was exceeded.";
	case LL_EAUTH:
		return "Missing or unknown credentials.";
	case LL_EFORBIDDEN:
		return "Not allowed.";
	case LL_ESTORE:
		return "The store failed.";
	case LL_EUNSUPPORTED:
		return "Not supported here.";
	case LL_ESTATE:
		return "Not valid in the current state.";
	case LL_ENOSPACE:
		return "The disk is full.";
	default:
		return "The operation failed.";
	}
}

void err_clear(void)
{
	last_message[0] = '\0';
	last_code = LL_OK;
}

int err_exit(const char *who, int rc)
{
	fprintf(stderr, "%s: %s\n", who, err_message(rc));
	return 2;
}

int err_exit_usage(const char *who, const char *what)
{
	fprintf(stderr, "%s: %s (see %s --help)\n", who, what, who);
	return 2;
}
