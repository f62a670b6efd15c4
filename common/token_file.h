/*
 * token_file: the format of an operator token file, read by the verifier (which keeps digests
 * of every token, verifier/http/tokens.h) and by attestctl (which sends one of them):
 *
 *   # NAME ROLE TOKEN
 *   alice operator 3f0c...      may do everything
 *   grafana read-only 9a1b...   GETs only
 *
 * or a file holding one bare token (what the verifier generates), which is that token, named
 * "operator", with the operator role. Blank lines and lines starting with '#' are skipped; words
 * are separated by blanks; a CR before a newline is dropped. Names are 1-TOKEN_NAME_MAX of
 * [A-Za-z0-9._-] not starting with '.' (the agent-id alphabet); what the names and tokens must
 * be beyond the line's form (length, uniqueness) is the caller's rule.
 *
 * token_file_parse() calls `line_fn` once per token line, in order, with pointers into `text`
 * (not NUL-terminated; the caller copies or digests them and wipes `text` afterwards). It stops
 * at the first non-zero return of line_fn and returns it. A malformed line is -EINVAL with a
 * message naming the line in err (never quoting it: it may hold a token). 0 when every line was
 * handled.
 */
#ifndef COMMON_TOKEN_FILE_H
#define COMMON_TOKEN_FILE_H

#include <stdbool.h>
#include <stddef.h>

#define TOKEN_NAME_MAX 32u
#define TOKEN_FILE_MAX (64u * 1024u) /* a whole token file */

struct token_line {
	unsigned line;    /* 1-based, for messages */
	const char *name; /* "operator" for a bare token */
	size_t name_len;
	bool read_only;
	const char *token;
	size_t token_len;
};

int token_file_parse(const char *text, size_t len,
		     int (*line_fn)(void *arg, const struct token_line *l, char *err, size_t cap),
		     void *arg, char *err, size_t cap);

#endif
