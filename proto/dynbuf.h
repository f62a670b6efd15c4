/*
 * A growable byte buffer with a maximum fixed at init and a sticky error.
 *
 * Modelled on curl's dynbuf and Linux's tpm_buf: every buffer that grows from untrusted or
 * unbounded input says at init how large it may become (a cap from proto/limits.h); an append
 * that would pass the cap, or whose allocation fails, sets a sticky error, frees nothing the
 * caller already owns, and turns every later append into a no-op. Callers append freely and check
 * dynbuf_error() once, where a decision is made.
 *
 * Ownership: the buffer owns `buf` until dynbuf_take() hands it to the caller (who frees it with
 * free()) or dynbuf_release() frees it. The bytes are always followed by a NUL (not counted in
 * `len`), so text can be used as a C string. A zeroed struct is not valid: call dynbuf_init().
 */
#ifndef PROTO_DYNBUF_H
#define PROTO_DYNBUF_H

#include <stdarg.h>
#include <stddef.h>

struct dynbuf {
	char *buf;  /* NULL until the first append */
	size_t len; /* bytes held */
	size_t cap; /* bytes allocated, NUL included */
	size_t max; /* largest len allowed */
	int err;    /* 0, -E2BIG (cap reached) or -ENOMEM; sticky */
};

/* Empties b and sets its cap; allocates nothing. */
void dynbuf_init(struct dynbuf *b, size_t max);

/* Appends n bytes (n may be 0). 0 or the sticky error. */
int dynbuf_add(struct dynbuf *b, const void *data, size_t n);

/* Appends a NUL-terminated string. */
int dynbuf_adds(struct dynbuf *b, const char *s);

/* Appends printf-style text. */
int dynbuf_addf(struct dynbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int dynbuf_vaddf(struct dynbuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/*
 * Reserves n more bytes and counts them as held; returns where they start (for the caller to
 * fill), or NULL with the sticky error set. The bytes are uninitialised.
 */
void *dynbuf_grow(struct dynbuf *b, size_t n);

/* The sticky error: 0 while every append has succeeded. */
int dynbuf_error(const struct dynbuf *b);

/* The bytes, or "" when nothing is held (never NULL). Valid until the next append. */
const char *dynbuf_str(const struct dynbuf *b);

/*
 * Hands the bytes to the caller (free() them; NUL-terminated) and empties b; *len (if not NULL)
 * receives their count. NULL if the sticky error is set (b is emptied too) or on allocation failure.
 */
char *dynbuf_take(struct dynbuf *b, size_t *len);

/*
 * Shrinks the held bytes to the first len (curl's Curl_dyn_setlen), e.g. to give back what
 * dynbuf_grow() reserved and a read did not fill. 0, or -EINVAL if len is more than is held.
 * The allocation and the sticky error are kept.
 */
int dynbuf_setlen(struct dynbuf *b, size_t len);

/*
 * Keeps only the last n held bytes, moved to the start (curl's Curl_dyn_tail): a window that
 * drops what it has consumed. 0, or -EINVAL if n is more than is held.
 */
int dynbuf_tail(struct dynbuf *b, size_t n);

/* Gives back what is allocated beyond the bytes held (and their NUL); a no-op if realloc fails. */
void dynbuf_trim(struct dynbuf *b);

/* Drops the bytes and clears the error, keeping the allocation and the cap. */
void dynbuf_reset(struct dynbuf *b);

/* Frees the bytes; b may be initialised again. */
void dynbuf_release(struct dynbuf *b);

#endif
