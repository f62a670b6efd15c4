/*
 * Hex and base64 codecs for the protocol's text fields.
 *
 * Decoders are strict: hex must be lowercase or uppercase pairs with nothing else; base64 must be
 * standard alphabet, padded, no whitespace. Both return the decoded length or -EINVAL, and never
 * write past `cap` (they return -ENOSPC if the result would not fit). Encoders NUL-terminate.
 */
#ifndef PROTO_ENCODING_H
#define PROTO_ENCODING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes 2*len lowercase hex digits and a NUL into out (capacity >= 2*len+1). */
void hex_encode(const uint8_t *in, size_t len, char *out);
/* Decodes exactly strlen-many hex digits (inlen must be even). */
ssize_t hex_decode(const char *in, size_t inlen, uint8_t *out, size_t cap);

/* Size of the base64 text for len bytes, NUL included. */
size_t base64_encoded_size(size_t len);
/* Writes base64 text and a NUL into out (capacity >= base64_encoded_size(len)). */
void base64_encode(const uint8_t *in, size_t len, char *out);
/* Upper bound of the decoded size of inlen characters. */
size_t base64_decoded_max(size_t inlen);
ssize_t base64_decode(const char *in, size_t inlen, uint8_t *out, size_t cap);

/*
 * Allocating forms: the caller frees the result with free(). NULL on bad input or allocation
 * failure; *outlen gets the decoded length.
 */
char *base64_encode_alloc(const uint8_t *in, size_t len);
uint8_t *base64_decode_alloc(const char *in, size_t inlen, size_t *outlen);

/*
 * base64url (RFC 4648 section 5) without padding, as JOSE writes it (RFC 7515 section 2): the
 * alphabet with '-' and '_', no '=', no whitespace. The decoder refuses any other character, a
 * length of 1 modulo 4 and non-zero bits past the last byte (so that one text means one byte
 * string). Allocating, as above: the caller frees; NULL on bad input or allocation failure.
 */
char *base64url_encode_alloc(const uint8_t *in, size_t len);
uint8_t *base64url_decode_alloc(const char *in, size_t inlen, size_t *outlen);

#endif
