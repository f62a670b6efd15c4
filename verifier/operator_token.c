/* The operator token; the contract is in operator_token.h. */
#include "verifier/operator_token.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "common/file.h"
#include "common/log.h"
#include "proto/dynbuf.h"
#include "proto/encoding.h"

#define TOKEN_BYTES 32
#define TOKEN_FILE_MAX 4096
#define TOKEN_NAME "operator-token" /* in the state directory */

/*
 * Reads a file whole, at most max bytes (common/file.h): path from the directory open as dfd
 * (AT_FDCWD: the working directory). NUL-terminated; caller wipes, frees.
 */
static int read_file(int dfd, const char *path, size_t max, char **out, size_t *len)
{
	struct dynbuf b;
	int ret;

	*out = NULL;
	dynbuf_init(&b, max);
	ret = file_read_at(dfd, path, &b);
	if (ret)
		return ret;
	*out = dynbuf_take(&b, len);
	return *out ? 0 : -ENOMEM;
}

int operator_token_setup(const char *token_file, const struct statedir *sd,
			 const char *state_dir, uint8_t digest[32])
{
	char path[PATH_MAX];
	const char *name = token_file;
	char *tok = NULL;
	size_t len = 0;
	unsigned int dlen = 0;
	int ret, dfd = AT_FDCWD;

	if (token_file) {
		snprintf(path, sizeof(path), "%s", token_file);
	} else {
		snprintf(path, sizeof(path), "%s/" TOKEN_NAME, state_dir);
		name = TOKEN_NAME;
		dfd = sd->dfd;
		if (faccessat(dfd, name, F_OK, AT_SYMLINK_NOFOLLOW) != 0) {
			uint8_t raw[TOKEN_BYTES];
			char hex[2 * TOKEN_BYTES + 2];

			if (RAND_bytes(raw, sizeof(raw)) != 1)
				return -EIO;
			hex_encode(raw, sizeof(raw), hex);
			OPENSSL_cleanse(raw, sizeof(raw));
			hex[2 * TOKEN_BYTES] = '\n';
			ret = file_write_atomic_at(dfd, name, hex, 2 * TOKEN_BYTES + 1, 0600);
			OPENSSL_cleanse(hex, sizeof(hex));
			if (ret) {
				log_error("cannot write operator token \"%s\": %s", path, strerror(-ret));
				return ret;
			}
			log_info("operator token created in \"%s\"", path);
		}
	}
	ret = read_file(dfd, name, TOKEN_FILE_MAX, &tok, &len);
	if (ret) {
		log_error("cannot read operator token \"%s\": %s", path, strerror(-ret));
		return ret;
	}
	while (len > 0 && (tok[len - 1] == '\n' || tok[len - 1] == '\r' || tok[len - 1] == ' '))
		tok[--len] = '\0';
	if (len < 16) {
		log_error("operator token in \"%s\" is shorter than 16 characters", path);
		ret = -EINVAL;
	} else if (EVP_Digest(tok, len, digest, &dlen, EVP_sha256(), NULL) != 1) {
		ret = -EIO;
	} else {
		log_info("operator token: \"%s\"", path);
	}
	OPENSSL_cleanse(tok, len);
	free(tok);
	return ret;
}

