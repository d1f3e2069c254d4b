#include "loadlab/buf.h"

#include "loadlab/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t limit)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->limit = limit;
}

static int buf_reserve(struct buf *b, size_t n)
{
	size_t need, grow;
	char *p;

	if (n > b->limit - b->len)
		return err_set(LL_ETOOBIG, "Data exceeds the limit of %zu bytes.", b->limit);
	need = b->len + n + 1;
	if (need <= b->alloc)
		return 0;
	grow = b->alloc ? b->alloc : 256;
	while (grow < need)
		grow *= 2;
	if (grow > b->limit + 1)
		grow = b->limit + 1;
	p = realloc(b->data, grow);
	if (!p)
		return LL_ENOMEM;
	b->data = p;
	b->alloc = grow;
	return 0;
}

int buf_append(struct buf *b, const void *data, size_t n)
{
	int rc = buf_reserve(b, n);

	if (rc < 0)
		return rc;
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_append_str(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return LL_EINVAL;
	rc = buf_reserve(b, (size_t)n);
	if (rc < 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

const char *buf_str(const struct buf *b)
{
	return b->data ? b->data : "";
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void buf_release(struct buf *b)
{
	free(b->data);
	buf_init(b, b->limit);
}
