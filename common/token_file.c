/* The operator token file's lines; the format is in token_file.h. */
#include "common/token_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto/evidence.h"

/* A token's name: the agent-id alphabet (proto/evidence.h), at most TOKEN_NAME_MAX. */
static bool name_ok(const char *s, size_t n)
{
	char name[TOKEN_NAME_MAX + 1];

	if (n == 0 || n > TOKEN_NAME_MAX)
		return false;
	memcpy(name, s, n);
	name[n] = '\0';
	return agent_id_valid(name);
}

/* The next blank-separated word of [*p, end) in *w, *wn; false at the line's end. */
static bool word(const char **p, const char *end, const char **w, size_t *wn)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
	*w = *p;
	while (*p < end && **p != ' ' && **p != '\t')
		(*p)++;
	*wn = (size_t)(*p - *w);
	return *wn > 0;
}

int token_file_parse(const char *text, size_t len,
		     int (*line_fn)(void *arg, const struct token_line *l, char *err, size_t cap),
		     void *arg, char *err, size_t cap)
{
	const char *p = text, *end = text + len;
	unsigned line = 0, words;
	int ret;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *w[4];
		size_t wn[4];
		struct token_line l;

		if (!eol)
			eol = end;
		line++;
		if (eol > p && eol[-1] == '\r')
			eol--;
		for (words = 0; words < 4 && word(&p, eol, &w[words], &wn[words]); words++)
			;
		p = eol < end && *eol == '\r' ? eol + 2 : eol + 1;
		if (words == 0 || w[0][0] == '#')
			continue;
		memset(&l, 0, sizeof(l));
		l.line = line;
		if (words == 1) {
			/* The bare token the verifier generates: the one operator. */
			l.name = "operator";
			l.name_len = 8;
			l.token = w[0];
			l.token_len = wn[0];
		} else if (words == 3 && name_ok(w[0], wn[0]) &&
			   ((wn[1] == 8 && !memcmp(w[1], "operator", 8)) ||
			    (wn[1] == 9 && !memcmp(w[1], "read-only", 9)))) {
			l.name = w[0];
			l.name_len = wn[0];
			l.read_only = wn[1] == 9;
			l.token = w[2];
			l.token_len = wn[2];
		} else {
			snprintf(err, cap, "line %u: want NAME operator|read-only TOKEN (a name is 1-%u"
				 " of A-Z a-z 0-9 . _ -)", line, TOKEN_NAME_MAX);
			return -EINVAL;
		}
		if ((ret = line_fn(arg, &l, err, cap)))
			return ret;
	}
	return 0;
}
