/*
 * text: untrusted bytes (an IMA path, a template or algorithm name) as text.
 *
 * The bytes themselves are what the verifier judges, stores and approves; text is only for
 * showing them and for JSON, which carries UTF-8 alone (jansson refuses anything else). The
 * rendering is unambiguous: bytes that are valid UTF-8 (RFC 3629, no NUL) are shown as they
 * are; a name that is not is shown escaped, every byte outside a valid sequence as the four
 * characters \xNN and every backslash as \\, so an escape can never be read as a real
 * backslash. Callers that show an escaped rendering say so (the API's `path_escaped`).
 */
#ifndef PROTO_TEXT_H
#define PROTO_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* true if p[0..n) is entirely well-formed UTF-8 without NUL (n may be 0). */
bool text_is_utf8(const void *p, size_t n);

/*
 * Writes the display text of p[0..n) and a NUL into out (cap >= 1): the bytes unchanged when
 * they are UTF-8, else escaped as above. Stops before a character or escape that does not fit
 * (never splits one). Returns true if the rendering is escaped. TEXT_ESCAPED_MAX(n) bytes always
 * suffice.
 */
bool text_render(const void *p, size_t n, char *out, size_t cap);
#define TEXT_ESCAPED_MAX(n) (4 * (size_t)(n) + 1)

/*
 * As text_render(), for one line of a log or a terminal: besides the bytes that are not UTF-8,
 * every control character (C0, DEL, C1: newlines, terminal escapes) is shown as \xNN (a C1 as
 * its two bytes) and every backslash as \\, always: what came from the network can never
 * start a line of its own or move the cursor. Returns true if anything was escaped.
 */
bool text_render_line(const void *p, size_t n, char *out, size_t cap);

/* Cuts an incomplete UTF-8 sequence that truncation (snprintf) left at the end of s. */
void text_trim_utf8_tail(char *s);

#endif
