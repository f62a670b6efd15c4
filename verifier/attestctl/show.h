/*
 * show: the one way attestctl puts text it did not write itself on the terminal: whatever a
 * verifier answered (agent ids, policy names, paths, reasons, actors, EAR claims, amendment and
 * audit records, refusals) and what a file from elsewhere holds (an evidence record, a token).
 *
 * Every string goes through text_render_line() (proto/text.h): control characters (C0, DEL, C1:
 * newlines, terminal escapes), bytes that are not UTF-8 and backslashes come out as \xNN and
 * \\, so no byte of such a string can start a line of its own, forge one or move the cursor;
 * text that is plain UTF-8 comes out as it is. A JSON document printed whole (--json, policy
 * get, audit export) is dumped by jansson, which writes C0 inside strings as \uXXXX, and
 * show_json() writes DEL and C1 that way too: the same document, nothing a terminal acts on.
 *
 * show_text() renders s[0..n); show_cstr() a C string (NULL shows as "-"); show_str() the
 * member key of object o when it is a string, else "-". Their results live in a ring of
 * SHOW_SLOTS buffers owned here, enough for the fields of one printf: each stays valid until
 * SHOW_SLOTS further calls. On allocation failure the result is "?".
 * show_json(): v dumped with jansson's flags, DEL and C1 escaped; the caller frees; NULL when
 * out of memory.
 */
#ifndef VERIFIER_ATTESTCTL_SHOW_H
#define VERIFIER_ATTESTCTL_SHOW_H

#include <stddef.h>
#include <jansson.h>

#define SHOW_SLOTS 16

const char *show_text(const char *s, size_t n);
const char *show_cstr(const char *s);
const char *show_str(const json_t *o, const char *key);
char *show_json(const json_t *v, size_t flags);

#endif
