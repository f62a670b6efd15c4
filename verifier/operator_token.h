/*
 * operator_token: the secret operator calls carry (Authorization: Bearer TOKEN), kept as its
 * SHA-256 for routes.c's check.
 *
 * operator_token_setup() reads it from token_file (--operator-token-file) when given; else from
 * STATE_DIR/operator-token, generated on first start (32 random bytes as hex, 0600). That file
 * is reached through the state directory as statedir_open() checked it (sd), never by its
 * path, which state_dir gives for messages only. A token shorter than 16 characters is
 * refused. 0 with digest set, or -errno (logged, with the file named).
 */
#ifndef VERIFIER_OPERATOR_TOKEN_H
#define VERIFIER_OPERATOR_TOKEN_H

#include <stdint.h>

#include "verifier/statedir.h"

int operator_token_setup(const char *token_file, const struct statedir *sd,
			 const char *state_dir, uint8_t digest[32]);

#endif
