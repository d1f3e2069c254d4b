/*
 * buf.h - a growable byte buffer with a size limit fixed at init.
 *
 * Every buffer filled from the network or a file has a limit (STYLE.md).
 * The data is always NUL-terminated (the terminator is not counted in len
 * and not counted against the limit), so text can be used as a C string.
 *
 *	struct buf b;
 *	buf_init(&b, 1 << 20);
 *	if (buf_append(&b, p, n) < 0) ... LL_ETOOBIG past the limit ...
 *	buf_release(&b);
 */
#ifndef LOADLAB_BUF_H
#define LOADLAB_BUF_H

#include "loadlab/err.h"

#include <stddef.h>

struct buf {
	char *data;   /* NULL until the first append; then NUL-terminated */
	size_t len;   /* bytes held, terminator excluded */
	size_t alloc; /* bytes allocated */
	size_t limit; /* len never exceeds this */
};

/* An empty buffer that will refuse to grow past LIMIT bytes. */
void buf_init(struct buf *b, size_t limit);

/* Appends N bytes. LL_ETOOBIG when len + N would exceed the limit,
 * LL_ENOMEM when allocation fails; on failure the buffer is unchanged. */
int buf_append(struct buf *b, const void *data, size_t n);

/* Appends a NUL-terminated string (same errors as buf_append). */
int buf_append_str(struct buf *b, const char *s);

/* Appends formatted text (same errors as buf_append). */
int buf_printf(struct buf *b, const char *fmt, ...) LL_PRINTF_FORMAT(2, 3);

/* The text held, or "" for an empty buffer. Borrowed. */
const char *buf_str(const struct buf *b);

/* Empties the buffer, keeping its allocation and limit. */
void buf_reset(struct buf *b);

/* Frees the memory; the buffer is empty afterwards and may be reused. */
void buf_release(struct buf *b);

#endif
