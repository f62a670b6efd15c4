/* The operator tokens and their file; the contract is in tokens.h. */
#include "verifier/http/tokens.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "common/file.h"
#include "proto/dynbuf.h"
#include "proto/evidence.h"

#define TOKENS_FILE_MAX (64u * 1024u)

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

static int digest(const char *tok, size_t n, unsigned char out[32])
{
	unsigned int dlen = 0;

	return EVP_Digest(tok, n, out, &dlen, EVP_sha256(), NULL) == 1 && dlen == 32 ? 0 : -EIO;
}

/* The next whitespace-separated word of [*p, end) in *w, *wn; false at the line's end. */
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

static int add(struct tokens *t, const char *name, size_t nn, bool ro, const char *tok,
	       size_t tn, unsigned line, char *err, size_t cap)
{
	struct token_entry *e;

	if (tn < TOKEN_MIN) {
		snprintf(err, cap, "line %u: the token is shorter than %u characters", line, TOKEN_MIN);
		return -EINVAL;
	}
	if (t->n == TOKENS_MAX) {
		snprintf(err, cap, "more than %u tokens", TOKENS_MAX);
		return -EINVAL;
	}
	e = &t->v[t->n];
	memcpy(e->name, name, nn);
	e->name[nn] = '\0';
	e->read_only = ro;
	if (digest(tok, tn, e->digest))
		return -EIO;
	for (size_t i = 0; i < t->n; i++) {
		if (!strcmp(t->v[i].name, e->name)) {
			snprintf(err, cap, "line %u: the name \"%s\" is taken", line, e->name);
			return -EINVAL;
		}
		if (!CRYPTO_memcmp(t->v[i].digest, e->digest, 32)) {
			snprintf(err, cap, "line %u: the same token as \"%s\"", line, t->v[i].name);
			return -EINVAL;
		}
	}
	t->n++;
	return 0;
}

int tokens_parse(const char *text, size_t len, struct tokens **out, char *err, size_t cap)
{
	const char *p = text, *end = text + len;
	struct tokens *t = calloc(1, sizeof(*t));
	unsigned line = 0, words;
	int ret = -ENOMEM;

	*out = NULL;
	if (!t || !(t->v = calloc(TOKENS_MAX, sizeof(*t->v))))
		goto fail;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *w[4];
		size_t wn[4];

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
		if (words == 1) {
			/* The bare token the verifier generates: the one operator. */
			ret = add(t, "operator", 8, false, w[0], wn[0], line, err, cap);
		} else if (words == 3 && name_ok(w[0], wn[0]) &&
			   ((wn[1] == 8 && !memcmp(w[1], "operator", 8)) ||
			    (wn[1] == 9 && !memcmp(w[1], "read-only", 9)))) {
			ret = add(t, w[0], wn[0], wn[1] == 9, w[2], wn[2], line, err, cap);
		} else {
			snprintf(err, cap, "line %u: want NAME operator|read-only TOKEN (a name is 1-%u"
				 " of A-Z a-z 0-9 . _ -)", line, TOKEN_NAME_MAX);
			ret = -EINVAL;
		}
		if (ret)
			goto fail;
	}
	if (t->n == 0) {
		snprintf(err, cap, "no token in the file");
		ret = -EINVAL;
		goto fail;
	}
	*out = t;
	return 0;
fail:
	tokens_free(t);
	return ret;
}

int tokens_load(const char *path, struct tokens **out, char *err, size_t cap)
{
	struct dynbuf b;
	int ret;

	*out = NULL;
	dynbuf_init(&b, TOKENS_FILE_MAX);
	ret = file_read(path, &b);
	if (ret) {
		snprintf(err, cap, "%s", strerror(-ret));
	} else {
		ret = tokens_parse(b.buf ? b.buf : "", b.len, out, err, cap);
		OPENSSL_cleanse(b.buf, b.len);
	}
	dynbuf_release(&b);
	return ret;
}

void tokens_free(struct tokens *t)
{
	if (!t)
		return;
	if (t->v)
		OPENSSL_cleanse(t->v, TOKENS_MAX * sizeof(*t->v));
	free(t->v);
	free(t);
}

const struct token_entry *tokens_find(const struct tokens *t, const char *presented, size_t len)
{
	const struct token_entry *found = NULL;
	unsigned char d[32];

	if (!t || digest(presented, len, d))
		return NULL;
	/* Every entry compared: the time says nothing about which one matched. */
	for (size_t i = 0; i < t->n; i++)
		if (!CRYPTO_memcmp(d, t->v[i].digest, sizeof(d)))
			found = &t->v[i];
	return found;
}
