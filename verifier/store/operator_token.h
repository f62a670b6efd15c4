/*
 * operator_token: where the operator tokens are read from (tokens.h parses them).
 *
 * operator_token_file() gives token_file (--operator-token-file) when set; else
 * STATE_DIR/operator-token, generated on first start (one bare token: 32 random bytes as hex,
 * 0600, named "operator" by tokens.h). That file is made and read through the state directory as
 * statedir_open() checked it (sd), never by its path, which state_dir gives for messages only:
 * *read gets a path through the directory (statedir_path()), *shown the one to print. 0, or
 * -errno (logged, with the file named).
 */
#ifndef VERIFIER_OPERATOR_TOKEN_H
#define VERIFIER_OPERATOR_TOKEN_H

#include <stddef.h>

#include "verifier/store/statedir.h"

int operator_token_file(const char *token_file, const struct statedir *sd,
			const char *state_dir, char *read, char *shown, size_t cap);

#endif
