/*
 * policy_json: what the policy loader shares with the files that load a part of a policy
 * (policy_keys.c, policy_file.c, boot_policy.c): how the JSON spells a digest, the one-line
 * error and the import warning; and (through policy_digest.h) the "alg:hex" text that verdicts
 * and violations show too (attest.c, boot_check.c), so that an operator reads a digest as a
 * policy lists it. Implemented in policy_json.c, which needs no other part of the engine: the
 * section loaders depend on it, never on policy.c.
 */
#ifndef VERIFIER_POLICY_JSON_H
#define VERIFIER_POLICY_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "proto/dynbuf.h"
#include "proto/limits.h"
#include "verifier/policy/policy_digest.h"

/*
 * A digest: in our format "alg:hex" (lowercase hex, alg sha1/sha256/sha384/sha512); in
 * Keylime's, bare hex whose length names the algorithm. Writes the digest bytes to out
 * (LIMIT_DIGEST) and returns its TPM2_ALG_ID, or 0 with *why set to a static message.
 */
uint16_t policy_json_digest(const json_t *v, bool keylime, uint8_t *out, const char **why);

/* "alg:hex" as a new JSON string (NULL for an unknown alg or on allocation failure). */
json_t *policy_json_digest_string(uint16_t alg, const uint8_t *digest);

/* printf into err[errlen] (nothing when err is NULL or errlen 0): a loader's one-line reason. */
void policy_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Appends one warning line to warnings (policy_warnings()' text). */
void policy_warn(struct dynbuf *warnings, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
