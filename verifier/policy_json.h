/*
 * policy_json: how a policy's JSON spells a digest, for policy.c and the files that load a
 * section of the policy (policy_keys.c). Implemented in policy.c, which owns the format.
 */
#ifndef VERIFIER_POLICY_JSON_H
#define VERIFIER_POLICY_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/*
 * A digest: in our format "alg:hex" (lowercase hex, alg sha1/sha256/sha384/sha512); in
 * Keylime's, bare hex whose length names the algorithm. Writes the digest bytes to out
 * (LIMIT_DIGEST) and returns its TPM2_ALG_ID, or 0 with *why set to a static message.
 */
uint16_t policy_json_digest(const json_t *v, bool keylime, uint8_t *out, const char **why);

/* "alg:hex" as a new JSON string (NULL for an unknown alg or on allocation failure). */
json_t *policy_json_digest_string(uint16_t alg, const uint8_t *digest);

#endif
