/* Hex and base64 codecs; base64 uses OpenSSL's block coder after a strict alphabet check. */
#include "proto/encoding.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <openssl/evp.h>

static int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void hex_encode(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = '\0';
}

ssize_t hex_decode(const char *in, size_t inlen, uint8_t *out, size_t cap)
{
	if (inlen % 2)
		return -EINVAL;
	if (inlen / 2 > cap)
		return -ENOSPC;
	for (size_t i = 0; i < inlen / 2; i++) {
		int hi = hex_nibble(in[2 * i]), lo = hex_nibble(in[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (ssize_t)(inlen / 2);
}

size_t base64_encoded_size(size_t len)
{
	return (len + 2) / 3 * 4 + 1;
}

void base64_encode(const uint8_t *in, size_t len, char *out)
{
	/* EVP_EncodeBlock takes an int length; callers stay far below that (limits.h). */
	EVP_EncodeBlock((unsigned char *)out, in, (int)len);
}

size_t base64_decoded_max(size_t inlen)
{
	return inlen / 4 * 3;
}

static bool b64_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

ssize_t base64_decode(const char *in, size_t inlen, uint8_t *out, size_t cap)
{
	size_t pad = 0;

	if (inlen % 4 || inlen > (size_t)INT32_MAX)
		return -EINVAL;
	if (inlen >= 1 && in[inlen - 1] == '=')
		pad++;
	if (inlen >= 2 && in[inlen - 2] == '=')
		pad++;
	for (size_t i = 0; i < inlen - pad; i++)
		if (!b64_char(in[i]))
			return -EINVAL;
	if (inlen == 0)
		return 0;
	size_t n = inlen / 4 * 3 - pad;
	if (n > cap)
		return -ENOSPC;
	/* EVP_DecodeBlock writes whole 3-byte groups, padding included: decode the last group apart. */
	size_t whole = inlen - 4;
	if (whole && EVP_DecodeBlock(out, (const unsigned char *)in, (int)whole) != (int)(whole / 4 * 3))
		return -EINVAL;
	uint8_t last[3];
	if (EVP_DecodeBlock(last, (const unsigned char *)in + whole, 4) != 3)
		return -EINVAL;
	for (size_t i = 0; i < 3 - pad; i++)
		out[whole / 4 * 3 + i] = last[i];
	/* Non-canonical padding bits would let two texts decode to the same bytes: refuse them. */
	for (size_t i = 3 - pad; i < 3; i++)
		if (last[i])
			return -EINVAL;
	return (ssize_t)n;
}

char *base64_encode_alloc(const uint8_t *in, size_t len)
{
	if (len > (size_t)INT32_MAX / 4 * 3 - 3)
		return NULL;
	char *out = malloc(base64_encoded_size(len));

	if (out)
		base64_encode(in, len, out);
	return out;
}

uint8_t *base64_decode_alloc(const char *in, size_t inlen, size_t *outlen)
{
	size_t cap = base64_decoded_max(inlen);
	uint8_t *out = malloc(cap ? cap : 1);

	if (!out)
		return NULL;
	ssize_t n = base64_decode(in, inlen, out, cap);
	if (n < 0) {
		free(out);
		return NULL;
	}
	*outlen = (size_t)n;
	return out;
}

char *base64url_encode_alloc(const uint8_t *in, size_t len)
{
	char *out = base64_encode_alloc(in, len);
	size_t n;

	if (!out)
		return NULL;
	for (n = 0; out[n] && out[n] != '='; n++) {
		if (out[n] == '+')
			out[n] = '-';
		else if (out[n] == '/')
			out[n] = '_';
	}
	out[n] = '\0';
	return out;
}

uint8_t *base64url_decode_alloc(const char *in, size_t inlen, size_t *outlen)
{
	size_t padded;
	char *std;
	uint8_t *out;

	/* One leftover character carries 6 bits: no byte ends there. */
	if (inlen % 4 == 1 || inlen > (size_t)INT32_MAX - 3)
		return NULL;
	padded = (inlen + 3) / 4 * 4;
	std = malloc(padded + 1);
	if (!std)
		return NULL;
	for (size_t i = 0; i < inlen; i++) {
		char c = in[i];

		/* The standard alphabet's '+' and '/' are not base64url: refuse, do not map. */
		if (c == '+' || c == '/' || c == '=') {
			free(std);
			return NULL;
		}
		std[i] = c == '-' ? '+' : c == '_' ? '/' : c;
	}
	for (size_t i = inlen; i < padded; i++)
		std[i] = '=';
	std[padded] = '\0';
	out = base64_decode_alloc(std, padded, outlen);
	free(std);
	return out;
}
