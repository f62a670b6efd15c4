/* The operator tokens and their file; the contract is in tokens.h. */
#include "verifier/http/tokens.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "common/file.h"
#include "common/log.h"
#include "common/token_file.h"
#include "proto/dynbuf.h"
#include "verifier/store/operator_token.h"

static int digest(const char *tok, size_t n, unsigned char out[32])
{
	unsigned int dlen = 0;

	return EVP_Digest(tok, n, out, &dlen, EVP_sha256(), NULL) == 1 && dlen == 32 ? 0 : -EIO;
}

/* One line of the file into the set (token_file_parse()'s callback). */
static int add(void *arg, const struct token_line *l, char *err, size_t cap)
{
	struct tokens *t = arg;
	struct token_entry *e;

	if (l->token_len < TOKEN_MIN) {
		snprintf(err, cap, "line %u: the token is shorter than %u characters", l->line,
			 TOKEN_MIN);
		return -EINVAL;
	}
	if (t->n == TOKENS_MAX) {
		snprintf(err, cap, "more than %u tokens", TOKENS_MAX);
		return -EINVAL;
	}
	e = &t->v[t->n];
	memcpy(e->name, l->name, l->name_len);
	e->name[l->name_len] = '\0';
	e->read_only = l->read_only;
	if (digest(l->token, l->token_len, e->digest))
		return -EIO;
	for (size_t i = 0; i < t->n; i++) {
		if (!strcmp(t->v[i].name, e->name)) {
			snprintf(err, cap, "line %u: the name \"%s\" is taken", l->line, e->name);
			return -EINVAL;
		}
		if (!CRYPTO_memcmp(t->v[i].digest, e->digest, 32)) {
			snprintf(err, cap, "line %u: the same token as \"%s\"", l->line,
				 t->v[i].name);
			return -EINVAL;
		}
	}
	t->n++;
	return 0;
}

int tokens_parse(const char *text, size_t len, struct tokens **out, char *err, size_t cap)
{
	struct tokens *t = calloc(1, sizeof(*t));
	int ret = -ENOMEM;

	*out = NULL;
	if (!t || !(t->v = calloc(TOKENS_MAX, sizeof(*t->v))))
		goto fail;
	if ((ret = token_file_parse(text, len, add, t, err, cap)))
		goto fail;
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
	dynbuf_init(&b, TOKEN_FILE_MAX);
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

int tokens_open(const char *token_file, const struct statedir *sd, const char *state_dir,
		struct tokens **out)
{
	char path[PATH_MAX], shown[PATH_MAX], err[256] = "";
	int ret = operator_token_file(token_file, sd, state_dir, path, shown, sizeof(path));

	if (ret)
		return ret;
	ret = tokens_load(path, out, err, sizeof(err));
	if (ret) {
		log_error("operator tokens \"%s\": %s", shown, err);
		return ret;
	}
	log_info("operator tokens: %zu from \"%s\"", (*out)->n, shown);
	return 0;
}
