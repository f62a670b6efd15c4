/*
 * tokens: the operator API's bearer tokens, each with a name (the actor in histories and logs)
 * and a role, read from the token file (verifier(8), TOKENS; its format in common/token_file.h):
 * an operator token may do everything, a read-only one the operator API's reads.
 *
 * Names are unique; tokens are at least 16 bytes without whitespace, unique. Only SHA-256 digests of the tokens are kept, compared in
 * constant time. A set is immutable: a reload (SIGHUP) builds a new one and swaps it.
 */
#ifndef VERIFIER_TOKENS_H
#define VERIFIER_TOKENS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/token_file.h"

struct statedir;

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
/*
 * The verifier's tokens: token_file (--operator-token-file), else STATE_DIR/operator-token
 * made on first start (operator_token.h), through sd, named state_dir in messages. 0 with *out
 * and a log line counting them, or -errno (logged).
 */
int tokens_open(const char *token_file, const struct statedir *sd, const char *state_dir,
		struct tokens **out);
/* The entry whose token is `presented`, or NULL; time independent of which entry matched. */
const struct token_entry *tokens_find(const struct tokens *t, const char *presented, size_t len);

#endif
