/*
 * tokens: the operator API's bearer tokens, each with a name (the actor in histories and logs)
 * and a role, read from the token file (verifier(8), TOKENS):
 *
 *   # NAME ROLE TOKEN
 *   alice operator 3f0c...      may do everything
 *   grafana read-only 9a1b...   GETs only (the operator API's reads; /metrics needs no token)
 *
 * A file holding one bare token (what the verifier generates) is that token, named "operator",
 * with the operator role. Names are 1-32 of [A-Za-z0-9._-] not starting with '.', unique; tokens are at least 16
 * bytes without whitespace, unique. Only SHA-256 digests of the tokens are kept, compared in
 * constant time. A set is immutable: a reload (SIGHUP) builds a new one and swaps it.
 */
#ifndef VERIFIER_TOKENS_H
#define VERIFIER_TOKENS_H

#include <stdbool.h>
#include <stddef.h>

#define TOKEN_NAME_MAX 32u
#define TOKEN_MIN 16u
#define TOKENS_MAX 256u

struct token_entry {
	char name[TOKEN_NAME_MAX + 1];
	bool read_only;
	unsigned char digest[32];
};

struct tokens {
	struct token_entry *v;
	size_t n;
};

/* Parses the file's text. 0, or -EINVAL with a message naming the line in err. */
int tokens_parse(const char *text, size_t len, struct tokens **out, char *err, size_t cap);
/* Reads and parses a file (at most 64 KiB). 0, -errno of the read, or -EINVAL (err says why). */
int tokens_load(const char *path, struct tokens **out, char *err, size_t cap);
void tokens_free(struct tokens *t);
/* The entry whose token is `presented`, or NULL; time independent of which entry matched. */
const struct token_entry *tokens_find(const struct tokens *t, const char *presented, size_t len);

#endif
