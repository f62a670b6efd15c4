/*
 * policy_digest: how a policy spells a digest and an algorithm, "alg:hex" (policies/README.md).
 * A leaf: implemented in policy_digest.c, which needs no other part of the policy engine, so
 * that the files loading one section of a policy (boot_policy.c, policy_keys.c) and the ones
 * showing a digest (verdicts, violations, attestctl) read digests as the engine does without
 * depending on it. policy.h includes this header.
 */
#ifndef VERIFIER_POLICY_DIGEST_H
#define VERIFIER_POLICY_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "proto/imalog.h" /* enum ima_digest_type */

/*
 * "alg:hex" as policies write digests (lowercase hex of the algorithm's size; s need not be
 * NUL-terminated): the algorithm's row with out filled (LIMIT_DIGEST bytes of room), or NULL
 * with *why set.
 */
struct alg;
const struct alg *policy_digest_parse(const char *s, size_t len, uint8_t *out, const char **why);
/*
 * A file digest as policies write it: "alg:hex", or typed "ima:alg:hex" (the same) or
 * "verity:alg:hex" (an fs-verity digest); *type gets the type. As policy_digest_parse().
 */
const struct alg *policy_file_digest_parse(const char *s, size_t len, uint8_t *out,
					   enum ima_digest_type *type, const char **why);

/* Helpers shared with attestctl: "sha256" <-> TPM2_ALG_ID, digest size (0 if unknown). */
uint16_t policy_alg_from_name(const char *name, size_t len);
const char *policy_alg_name(uint16_t alg);
size_t policy_alg_digest_size(uint16_t alg);

/*
 * "alg:hex" into out[cap] (cut to fit; LIMIT_DIGEST_TEXT + 1 holds any policy algorithm's):
 * alg_name, ':', the lowercase hex of the len bytes of digest (none when digest is NULL or len
 * is past LIMIT_DIGEST). Returns out.
 */
char *policy_digest_text(const char *alg_name, const uint8_t *digest, size_t len, char *out,
			 size_t cap);

#endif
