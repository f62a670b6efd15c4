/* Untrusted bytes as unambiguous text; the rules are in text.h. */
#include "proto/text.h"

#include <stdio.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at p[0..n), or 0 if it is not one (RFC 3629). */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (p[0] >= 0x01 && p[0] <= 0x7f)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

bool text_is_utf8(const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0, len; i < n; i += len)
		if (!(len = utf8_seq(s + i, n - i)))
			return false;
	return true;
}

bool text_render(const void *p, size_t n, char *out, size_t cap)
{
	const unsigned char *s = p;
	bool escape = !text_is_utf8(p, n);
	size_t o = 0, i = 0;

	while (i < n) {
		size_t len = utf8_seq(s + i, n - i);

		if (len && !(escape && s[i] == '\\')) {
			if (o + len >= cap)
				break;
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
		} else if (len) {
			if (o + 2 >= cap)
				break;
			memcpy(out + o, "\\\\", 2);
			o += 2;
			i++;
		} else {
			if (o + 4 >= cap)
				break;
			snprintf(out + o, 5, "\\x%02x", s[i]);
			o += 4;
			i++;
		}
	}
	out[o] = '\0';
	return escape;
}

bool text_render_line(const void *p, size_t n, char *out, size_t cap)
{
	const unsigned char *s = p;
	bool escaped = false;
	size_t o = 0, i = 0;

	while (i < n) {
		size_t len = utf8_seq(s + i, n - i);
		bool control = len == 1 ? s[i] < 0x20 || s[i] == 0x7f
					: len == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0;

		if (len && !control && s[i] != '\\') {
			if (o + len >= cap)
				break;
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
			continue;
		}
		escaped = true;
		if (len == 1 && s[i] == '\\') {
			if (o + 2 >= cap)
				break;
			memcpy(out + o, "\\\\", 2);
			o += 2;
			i++;
			continue;
		}
		/* A control character (one or two bytes) or a byte outside a valid sequence. */
		for (size_t k = 0; k < (len ? len : 1); k++) {
			if (o + 4 >= cap)
				goto out;
			snprintf(out + o, 5, "\\x%02x", s[i]);
			o += 4;
			i++;
		}
	}
out:
	out[o] = '\0';
	return escaped;
}

void text_trim_utf8_tail(char *s)
{
	size_t len = strlen(s), j = len;

	while (j > 0 && len - j < 3 && ((unsigned char)s[j - 1] & 0xc0) == 0x80)
		j--;
	if (j > 0 && (unsigned char)s[j - 1] >= 0xc0) {
		unsigned char b = (unsigned char)s[j - 1];
		size_t want = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;

		if (len - (j - 1) < want)
			s[j - 1] = '\0';
	}
}
