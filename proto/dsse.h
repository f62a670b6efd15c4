/*
 * dsse: signed policies in Dead Simple Signing Envelopes (github.com/secure-systems-lab/dsse,
 * envelope.md and protocol.md), the format Keylime's `keylime-policy sign` writes:
 *
 *   {"payloadType": TYPE, "payload": BASE64(BODY), "signatures": [{"keyid": ID, "sig": BASE64}]}
 *
 * A signature is over PAE(TYPE, BODY) = "DSSEv1" SP LEN(TYPE) SP TYPE SP LEN(BODY) SP BODY (the
 * lengths in ASCII decimal, the type's UTF-8 bytes): ECDSA P-256 over SHA-256, the signature
 * DER-encoded (what OpenSSL and Python's cryptography write). The payload type is authenticated;
 * a keyid is not (it only names the key the signer says it used): a signature is checked
 * against every trusted key, and the signer is the key that verified it, never the keyid.
 *
 * Two payload types are known: ours (DSSE_TYPE_POLICY, what `attestctl policy sign` writes) and
 * Keylime's (DSSE_TYPE_KEYLIME, "application/vnd.keylime+json"); both carry a policy text that
 * the policy engine loads (which reads Keylime's runtime policy format too). Any other type is
 * refused: a signature over another kind of document is not a policy signature.
 *
 * Base64 is the standard alphabet, padded, no whitespace (proto/encoding.h; what DSSE and
 * Keylime write). A keyid here is Keylime's: the SHA-256, in lowercase hex, of the key's PEM
 * SubjectPublicKeyInfo as OpenSSL writes it (`openssl pkey -pubin -in KEY.pem | sha256sum`).
 *
 * Pure: functions over buffers (JSON by jansson, signatures by OpenSSL's EVP). Ownership: an
 * envelope filled by dsse_parse() owns its buffers: release it with dsse_envelope_release()
 * (NULL-safe, idempotent). Keys passed in are borrowed.
 */
#ifndef PROTO_DSSE_H
#define PROTO_DSSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "proto/limits.h"

#define DSSE_TYPE_POLICY "application/vnd.attest.policy+json"
#define DSSE_TYPE_KEYLIME "application/vnd.keylime+json"
#define DSSE_KEYID_LEN 64u /* hex digits of a keyid */

enum dsse_status {
	DSSE_OK = 0,
	DSSE_NOT_ENVELOPE, /* a JSON object with none of the envelope's members: not one (a policy) */
	DSSE_MALFORMED,    /* an envelope that does not parse: *why says what */
	DSSE_BAD_TYPE,     /* a payload type that is not a policy's */
	DSSE_UNSIGNED,     /* no signature verifies with any of the keys */
	DSSE_NOMEM,
};

struct dsse_signature {
	char *keyid; /* as the envelope says it (unauthenticated); "" when it has none */
	uint8_t *sig; /* DER */
	size_t sig_len;
};

struct dsse_envelope {
	char *payload_type;
	uint8_t *payload; /* NUL-terminated (not counted in payload_len) */
	size_t payload_len;
	struct dsse_signature sigs[LIMIT_DSSE_SIGNATURES];
	size_t nsigs;
};

void dsse_envelope_release(struct dsse_envelope *e);

/*
 * Parses an envelope (len bytes of JSON text). Strict: a JSON object whose members are exactly
 * payloadType (a known type), payload (base64, 1 to max_payload bytes decoded, no NUL byte),
 * signatures (1 to LIMIT_DSSE_SIGNATURES objects of sig, base64 of 1 to LIMIT_DSSE_SIG bytes,
 * and an optional keyid of at most LIMIT_DSSE_KEYID bytes); duplicate members refused.
 * DSSE_NOT_ENVELOPE for a JSON object that has none of the three members (nothing filled).
 * On any status but DSSE_OK, *out holds nothing and *why (when not NULL) a static reason.
 */
enum dsse_status dsse_parse(const char *text, size_t len, size_t max_payload,
			    struct dsse_envelope *out, const char **why);

/* PAE(type, payload) into a malloc'd buffer (*pae, *pae_len; the caller frees); 0 or -ENOMEM. */
int dsse_pae(const char *type, const uint8_t *payload, size_t len, uint8_t **pae,
	     size_t *pae_len);

/* The key is one a signer may hold: ECDSA on P-256. */
bool dsse_key_ok(EVP_PKEY *key);

/* Keylime's keyid of a public key (see above) into out; 0, -EINVAL (not a key), -ENOMEM. */
int dsse_keyid(EVP_PKEY *key, char out[DSSE_KEYID_LEN + 1]);

/*
 * Checks e's signatures against keys[0..nkeys) (each dsse_key_ok(); others are skipped): DSSE_OK
 * with *signer the index of the first key that verifies a signature over PAE(e's type, e's
 * payload), else DSSE_UNSIGNED (or DSSE_NOMEM).
 */
enum dsse_status dsse_verify(const struct dsse_envelope *e, EVP_PKEY *const *keys, size_t nkeys,
			     size_t *signer);

/*
 * Signs payload as `type` with private key `key` (dsse_key_ok()), naming it by its keyid: the
 * envelope as compact JSON text (caller frees), or NULL.
 */
char *dsse_sign(const char *type, const uint8_t *payload, size_t len, EVP_PKEY *key);

/*
 * The public keys of a PEM text (PUBLIC KEY blocks; anything between them ignored, as OpenSSL
 * does), each dsse_key_ok(): 0 with *keys (caller frees each with EVP_PKEY_free() and the array
 * with free()) and *n (1 to LIMIT_POLICY_SIGNERS), or -EINVAL with *why.
 */
int dsse_keys_parse(const char *pem, size_t len, EVP_PKEY ***keys, size_t *n, const char **why);

#endif
