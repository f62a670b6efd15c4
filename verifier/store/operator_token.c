/* The operator token file; the contract is in operator_token.h. */
#include "verifier/store/operator_token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "common/file.h"
#include "common/log.h"
#include "proto/encoding.h"

#define TOKEN_BYTES 32
#define TOKEN_NAME "operator-token" /* in the state directory */

int operator_token_file(const char *token_file, const struct statedir *sd,
			const char *state_dir, char *read, char *shown, size_t cap)
{
	int ret;

	if (token_file) {
		snprintf(read, cap, "%s", token_file);
		snprintf(shown, cap, "%s", token_file);
		return 0;
	}
	snprintf(shown, cap, "%s/" TOKEN_NAME, state_dir);
	if (faccessat(sd->dfd, TOKEN_NAME, F_OK, AT_SYMLINK_NOFOLLOW) != 0) {
		uint8_t raw[TOKEN_BYTES];
		char hex[2 * TOKEN_BYTES + 2];

		if (RAND_bytes(raw, sizeof(raw)) != 1)
			return -EIO;
		hex_encode(raw, sizeof(raw), hex);
		OPENSSL_cleanse(raw, sizeof(raw));
		hex[2 * TOKEN_BYTES] = '\n';
		ret = file_write_atomic_at(sd->dfd, TOKEN_NAME, hex, 2 * TOKEN_BYTES + 1, 0600);
		OPENSSL_cleanse(hex, sizeof(hex));
		if (ret) {
			log_error("cannot write operator token \"%s\": %s", shown, strerror(-ret));
			return ret;
		}
		log_info("operator token created in \"%s\"", shown);
	}
	ret = statedir_path(sd, TOKEN_NAME, read, cap);
	if (ret)
		log_error("operator token \"%s\": %s", shown, strerror(-ret));
	return ret;
}
