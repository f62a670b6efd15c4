/* Growable buffer with a cap and a sticky error; the contract is in dynbuf.h. */
#include "proto/dynbuf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DYNBUF_FIRST_ALLOC 64u

void dynbuf_init(struct dynbuf *b, size_t max)
{
	b->buf = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
	b->err = 0;
}

static void *fail(struct dynbuf *b, int err)
{
	b->err = err;
	return NULL;
}

/* Makes room for n more bytes plus the NUL, doubling up to max + 1. */
static void *reserve(struct dynbuf *b, size_t n)
{
	size_t want, cap;
	char *p;

	if (b->err)
		return NULL;
	if (n > b->max - b->len)
		return fail(b, -E2BIG);
	want = b->len + n + 1; /* cannot overflow: len + n <= max < SIZE_MAX */
	if (want <= b->cap)
		return b->buf + b->len;
	cap = b->cap ? b->cap : DYNBUF_FIRST_ALLOC;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
	if (cap > b->max + 1)
		cap = b->max + 1;
	p = realloc(b->buf, cap);
	if (!p)
		return fail(b, -ENOMEM);
	b->buf = p;
	b->cap = cap;
	return b->buf + b->len;
}

void *dynbuf_grow(struct dynbuf *b, size_t n)
{
	char *at = reserve(b, n);

	if (!at)
		return NULL;
	b->len += n;
	b->buf[b->len] = '\0';
	return at;
}

int dynbuf_add(struct dynbuf *b, const void *data, size_t n)
{
	char *at = dynbuf_grow(b, n);

	if (!at)
		return b->err;
	if (n)
		memcpy(at, data, n);
	return 0;
}

int dynbuf_adds(struct dynbuf *b, const char *s)
{
	return dynbuf_add(b, s, strlen(s));
}

int dynbuf_vaddf(struct dynbuf *b, const char *fmt, va_list ap)
{
	va_list again;
	size_t room;
	int n;

	if (b->err)
		return b->err;
	room = b->cap > b->len ? b->cap - b->len : 0;
	va_copy(again, ap);
	n = vsnprintf(room ? b->buf + b->len : NULL, room, fmt, ap);
	if (n < 0) {
		va_end(again);
		b->err = -EINVAL;
		return b->err;
	}
	if ((size_t)n >= room) {
		if (!reserve(b, (size_t)n)) {
			va_end(again);
			if (room)
				b->buf[b->len] = '\0'; /* undo the partial text */
			return b->err;
		}
		vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, again);
	}
	/* n < room means len + n < cap <= max + 1: the text fits the cap. */
	va_end(again);
	b->len += (size_t)n;
	return 0;
}

int dynbuf_addf(struct dynbuf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = dynbuf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

int dynbuf_error(const struct dynbuf *b)
{
	return b->err;
}

const char *dynbuf_str(const struct dynbuf *b)
{
	return b->buf ? b->buf : "";
}

char *dynbuf_take(struct dynbuf *b, size_t *len)
{
	char *p;
	size_t max = b->max;

	if (b->err || (!b->buf && !dynbuf_grow(b, 0))) {
		dynbuf_release(b);
		dynbuf_init(b, max);
		if (len)
			*len = 0;
		return NULL;
	}
	p = b->buf;
	if (len)
		*len = b->len;
	dynbuf_init(b, max);
	return p;
}

int dynbuf_setlen(struct dynbuf *b, size_t len)
{
	if (len > b->len)
		return -EINVAL;
	b->len = len;
	if (b->buf)
		b->buf[len] = '\0';
	return 0;
}

int dynbuf_tail(struct dynbuf *b, size_t n)
{
	if (n > b->len)
		return -EINVAL;
	if (n < b->len)
		memmove(b->buf, b->buf + (b->len - n), n);
	return dynbuf_setlen(b, n);
}

void dynbuf_trim(struct dynbuf *b)
{
	char *p;

	if (!b->buf || b->len + 1 == b->cap)
		return;
	p = realloc(b->buf, b->len + 1);
	if (p) {
		b->buf = p;
		b->cap = b->len + 1;
	}
}

void dynbuf_reset(struct dynbuf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->buf)
		b->buf[0] = '\0';
}

void dynbuf_release(struct dynbuf *b)
{
	free(b->buf);
	dynbuf_init(b, b->max);
}
