/*
 * deb822: Debian's control-file syntax (deb-control(5), deb822(5)), as Release, Packages and a
 * package's control file use it: stanzas separated by blank lines, "Field: value" lines, and
 * continuation lines that start with a space or a tab. Only what attestctl reads: iterate the
 * stanzas of a text, take one field's value. Texts are counted bytes, not NUL-terminated.
 */
#ifndef VERIFIER_ATTESTCTL_DEB822_H
#define VERIFIER_ATTESTCTL_DEB822_H

#include <stddef.h>

/*
 * The next stanza of [*cursor, end): its start, with its length in *len, and *cursor moved
 * past it; NULL when only blank lines remain.
 */
const char *deb822_next(const char **cursor, const char *end, size_t *len);

/*
 * Field `name` (matched without regard to case, as deb822 says) of a stanza: a new
 * NUL-terminated string (the caller free()s it) holding the value with its first line's
 * surrounding blanks dropped and each continuation line after a '\n' as it is; NULL when the
 * field is absent (or on allocation failure).
 */
char *deb822_field(const char *stanza, size_t len, const char *name);

#endif
