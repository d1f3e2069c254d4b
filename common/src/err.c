#include "loadlab/err.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_message[512];

const char *err_name(int code)
{
	switch (code) {
	case LL_OK: return "ok";
	case LL_EINVAL: return "invalid_argument";
	case LL_ENOMEM: return "out_of_memory";
	case LL_EIO: return "io_error";
	case LL_ENOTFOUND: return "not_found";
	case LL_ECONFLICT: return "conflict";
	case LL_ERANGE: return "out_of_range";
	case LL_EFORMAT: return "malformed";
	case LL_ETOOBIG: return "too_large";
	case LL_EAUTH: return "unauthorized";
	case LL_EFORBIDDEN: return "forbidden";
	case LL_ESTORE: return "store_error";
	case LL_EUNSUPPORTED: return "unsupported";
	case LL_ESTATE: return "invalid_state";
	default: return "internal";
	}
}

int err_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_message, sizeof(last_message), fmt, ap);
	va_end(ap);
	return code;
}

const char *err_message(int code)
{
	if (last_message[0])
		return last_message;
	switch (code) {
	case LL_ENOMEM: return "Out of memory.";
	case LL_EIO: return "An I/O operation failed.";
	case LL_ENOTFOUND: return "No such object.";
	case LL_ESTORE: return "The store failed.";
	default: return "The operation failed.";
	}
}

void err_clear(void)
{
	last_message[0] = '\0';
}
