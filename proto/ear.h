/*
 * ear: attestation results as IETF RATS EAT Attestation Results (draft-ietf-rats-ear), signed
 * as a JWT with ES256 (RFC 7519, RFC 7515, RFC 7518 section 3.4), and the AR4SI
 * trustworthiness vector (draft-ietf-rats-ar4si) they carry.
 *
 * Pure: functions over buffers, jansson values and OpenSSL keys. What the verifier claims, and
 * why each value, is decided above (verifier/decision/ear_vector.c) and documented in
 * SECURITY.md ("Attestation results for relying parties").
 *
 * A token is the JWS compact serialisation BASE64URL(header) "." BASE64URL(claims) "."
 * BASE64URL(r || s): the signature is the raw 64-byte pair of P-256 integers (RFC 7518 section
 * 3.4), not OpenSSL's DER. The header is {"alg":"ES256","typ":"JWT","kid":KID}; KID is the
 * key's RFC 7638 thumbprint, so a key names itself and a JWK set needs no other bookkeeping.
 */
#ifndef PROTO_EAR_H
#define PROTO_EAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <openssl/evp.h>

/* The profile draft-ietf-rats-ear defines for EAR in JWT (claim "eat_profile"). */
#define EAR_PROFILE "tag:github.com,2023:veraison/ear"

/* A token's size cap: what a relying party's verifier or attestctl reads. */
#define EAR_TOKEN_MAX (64u * 1024u)
/* An RFC 7638 thumbprint in base64url: 43 characters. */
#define EAR_KID_LEN 43
/*
 * A relying party's nonce (claim "eat_nonce"): EAT's JSON form is a text string of 10 to 74
 * characters (RFC 9711 section 4.1); we take base64url text of that length.
 */
#define EAR_NONCE_MIN 10
#define EAR_NONCE_MAX 74

/* X(enum suffix, AR4SI claim name), in the draft's order. */
#define EAR_CLAIMS(X)                                                                              \
	X(INSTANCE_IDENTITY, "instance-identity")                                                  \
	X(CONFIGURATION, "configuration")                                                          \
	X(EXECUTABLES, "executables")                                                              \
	X(FILE_SYSTEM, "file-system")                                                              \
	X(HARDWARE, "hardware")                                                                    \
	X(RUNTIME_OPAQUE, "runtime-opaque")                                                        \
	X(STORAGE_OPAQUE, "storage-opaque")                                                        \
	X(SOURCED_DATA, "sourced-data")

enum ear_claim {
#define EAR_CLAIM_ENUM(id, name) EAR_##id,
	EAR_CLAIMS(EAR_CLAIM_ENUM)
#undef EAR_CLAIM_ENUM
	EAR_CLAIM_COUNT
};
const char *ear_claim_name(enum ear_claim c);

/*
 * The four trustworthiness tiers (AR4SI section 2.3.2), worst last; their names are the values
 * of "ear.status". A claim's value in -1..1 is NONE; 2..31 and -2..-32 AFFIRMING; 32..95 and
 * -33..-96 WARNING; 96..127 and -97..-128 CONTRAINDICATED.
 */
enum ear_tier { EAR_TIER_NONE, EAR_TIER_AFFIRMING, EAR_TIER_WARNING, EAR_TIER_CONTRAINDICATED };
enum ear_tier ear_tier_of(int v);
const char *ear_tier_name(enum ear_tier t);
/* -1 if s names no tier. */
int ear_tier_from_name(const char *s);

/* A vector: 0 is "no claim" and is left out of the JSON (AR4SI: 0 and absent mean the same). */
struct ear_vector {
	int8_t v[EAR_CLAIM_COUNT];
};
/*
 * Sets claim c to `value` unless it holds a worse one already. Worse: a higher tier, where an
 * affirming value is better than none (AR4SI section 2.3.3: the worst applicable value wins).
 */
void ear_vector_worsen(struct ear_vector *vec, enum ear_claim c, int value);
/* The worst tier of the claims present (NONE for an empty vector). */
enum ear_tier ear_vector_tier(const struct ear_vector *vec);
/* {"instance-identity": 2, ...}; NULL on allocation failure. */
json_t *ear_vector_json(const struct ear_vector *vec);
/* 0, or -EINVAL with *why: a member that is not a claim name, a value outside -128..127. */
int ear_vector_from_json(const json_t *o, struct ear_vector *vec, const char **why);

/* A P-256 key as a public JWK with its kid, "alg":"ES256", "use":"sig"; NULL on failure. */
json_t *ear_jwk_from_key(EVP_PKEY *key);
/* The RFC 7638 thumbprint of a P-256 key into kid (EAR_KID_LEN + 1 bytes). 0 or -EINVAL. */
int ear_key_kid(EVP_PKEY *key, char kid[EAR_KID_LEN + 1]);
/* A JWK's public key: "kty":"EC", "crv":"P-256", 32-byte x and y on the curve; NULL + *why. */
EVP_PKEY *ear_key_from_jwk(const json_t *jwk, const char **why);

/* The token of `claims` signed by key (a P-256 private key); the caller frees; NULL on failure. */
char *ear_jwt_sign(EVP_PKEY *key, const json_t *claims);

/*
 * Checks a token's form and signature against a JWK set ({"keys": [...]}): three base64url
 * parts, a header with "alg":"ES256" (nothing else is accepted: no "none", no HMAC) and a
 * "kid" the set holds, a signature by that key over the first two parts, a claims object.
 * 0 with *claims (the caller decrefs), or -EINVAL / -EBADMSG (the signature) / -ENOKEY (no key
 * with that kid) with a reason in why.
 */
int ear_jwt_verify(const char *token, size_t len, const json_t *jwks, json_t **claims,
		   char *why, size_t cap);

/*
 * Checks what an EAR must hold (draft-ietf-rats-ear section 3, and our profile's freshness):
 * "eat_profile" is EAR_PROFILE; "iat" a number not after now + skew (clocks differ); if "exp" is
 * present, now is before it (no skew: the verifier's exp already is the latest moment); if max_age > 0, iat is at most max_age seconds ago; "ear.verifier-id" with
 * "build" and "developer"; "submods" holding at least one appraisal whose "ear.status" names a
 * tier and whose "ear.trustworthiness-vector", if present, is a vector; if nonce is not NULL,
 * "eat_nonce" equals it. 0, or -EINVAL (a malformed claim), -ESTALE (expired, too old, issued
 * in the future), -EPERM (another nonce, or none) with a reason in why.
 */
int ear_claims_check(const json_t *claims, int64_t now, int64_t skew, int64_t max_age,
		     const char *nonce, char *why, size_t cap);

/* Whether s is a nonce a relying party may give: EAR_NONCE_MIN..MAX base64url characters. */
bool ear_nonce_valid(const char *s);

#endif
