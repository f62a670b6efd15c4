/* Stanzas and fields of deb822 texts (deb822.h). */
#include "verifier/attestctl/deb822.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The end of the line at p (its '\n' or end). */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl : end;
}

static int blank_line(const char *p, const char *e)
{
	for (; p < e; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r')
			return 0;
	return 1;
}

const char *deb822_next(const char **cursor, const char *end, size_t *len)
{
	const char *p = *cursor, *start;

	while (p < end && blank_line(p, line_end(p, end)))
		p = line_end(p, end) + 1;
	if (p >= end) {
		*cursor = end;
		return NULL;
	}
	start = p;
	while (p < end && !blank_line(p, line_end(p, end)))
		p = line_end(p, end) + 1;
	if (p > end)
		p = end;
	*len = (size_t)(p - start);
	*cursor = p;
	return start;
}

char *deb822_field(const char *stanza, size_t len, const char *name)
{
	const char *p = stanza, *end = stanza + len;
	size_t nlen = strlen(name);

	while (p < end) {
		const char *e = line_end(p, end), *v, *vend;
		char *out;

		if (*p != ' ' && *p != '\t' && (size_t)(e - p) > nlen && p[nlen] == ':' &&
		    strncasecmp(p, name, nlen) == 0) {
			v = p + nlen + 1;
			/* The value runs to the last continuation line. */
			vend = e;
			while (vend < end && vend + 1 < end && (vend[1] == ' ' || vend[1] == '\t'))
				vend = line_end(vend + 1, end);
			while (v < vend && (*v == ' ' || *v == '\t'))
				v++;
			out = malloc((size_t)(vend - v) + 1);
			if (!out)
				return NULL;
			memcpy(out, v, (size_t)(vend - v));
			out[vend - v] = '\0';
			/* Trailing blanks of the first line (and a CR) are not part of the value. */
			for (char *c = out + strcspn(out, "\n"); c > out && (c[-1] == ' ' || c[-1] == '\t' || c[-1] == '\r');) {
				memmove(c - 1, c, strlen(c) + 1);
				c--;
			}
			return out;
		}
		p = e + 1;
	}
	return NULL;
}
