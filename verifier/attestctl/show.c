/*
 * show: text that came from elsewhere, as the terminal may show it (show.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/text.h"
#include "verifier/attestctl/show.h"

const char *show_text(const char *s, size_t n)
{
	static char *ring[SHOW_SLOTS];
	static unsigned next;
	char **slot = &ring[next++ % SHOW_SLOTS];
	size_t cap = TEXT_ESCAPED_MAX(n);

	free(*slot);
	*slot = malloc(cap);
	if (!*slot)
		return "?";
	text_render_line(s, n, *slot, cap);
	return *slot;
}

const char *show_cstr(const char *s)
{
	return s ? show_text(s, strlen(s)) : "-";
}

const char *show_str(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? show_text(json_string_value(v), json_string_length(v)) : "-";
}

char *show_json(const json_t *v, size_t flags)
{
	char *s = json_dumps(v, flags | JSON_ENCODE_ANY), *out, *w;
	size_t n;

	if (!s)
		return NULL;
	/* Every escaped character grows from at most 2 bytes to 6 (\u00XX). */
	n = strlen(s);
	out = malloc(3 * n + 1);
	if (!out) {
		free(s);
		return NULL;
	}
	w = out;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		unsigned code = 0;

		/* DEL, and C1 (U+0080..U+009F: 0xc2 0x80..0x9f in UTF-8); jansson escaped C0. */
		if (c == 0x7f)
			code = c;
		else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
			 (unsigned char)s[i + 1] <= 0x9f)
			code = (unsigned char)s[++i];
		if (code) {
			snprintf(w, 7, "\\u%04X", code);
			w += 6;
		} else {
			*w++ = (char)c;
		}
	}
	*w = '\0';
	free(s);
	return out;
}
