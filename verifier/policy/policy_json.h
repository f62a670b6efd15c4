/*
 * policy_json: what policy.c shares with the files that load a part of a policy
 * (policy_keys.c, policy_file.c, boot_policy.c): how the JSON spells a digest, the one-line
 * error and the import warning; and the "alg:hex" text that verdicts and violations show too
 * (attest.c, boot_check.c), so that an operator reads a digest as a policy lists it.
 * Implemented in policy.c, which owns the format.
 */
#ifndef VERIFIER_POLICY_JSON_H
#define VERIFIER_POLICY_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "proto/dynbuf.h"
#include "proto/limits.h"

/*
 * A digest: in our format "alg:hex" (lowercase hex, alg sha1/sha256/sha384/sha512); in
 * Keylime's, bare hex whose length names the algorithm. Writes the digest bytes to out
 * (LIMIT_DIGEST) and returns its TPM2_ALG_ID, or 0 with *why set to a static message.
 */
uint16_t policy_json_digest(const json_t *v, bool keylime, uint8_t *out, const char **why);

/* "alg:hex" as a new JSON string (NULL for an unknown alg or on allocation failure). */
json_t *policy_json_digest_string(uint16_t alg, const uint8_t *digest);

struct policy;
/*
 * The digests the policy lists for path (path_len raw bytes, as IMA recorded it), "alg:hex" each,
 * in a new JSON array: what an operator compares a digest_mismatch with. NULL when the path is
 * not listed (or on allocation failure).
 */
json_t *policy_json_path_digests(const struct policy *p, const char *path, size_t path_len);

/*
 * "alg:hex" into out[cap] (cut to fit; LIMIT_DIGEST_TEXT + 1 holds any policy algorithm's):
 * alg_name, ':', the lowercase hex of the len bytes of digest (none when digest is NULL or len
 * is past LIMIT_DIGEST). Returns out.
 */
char *policy_digest_text(const char *alg_name, const uint8_t *digest, size_t len, char *out,
			 size_t cap);

/* printf into err[errlen] (nothing when err is NULL or errlen 0): a loader's one-line reason. */
void policy_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Appends one warning line to warnings (policy_warnings()' text). */
void policy_warn(struct dynbuf *warnings, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
