/*
 * imasig: IMA file signatures, parsed and verified against a set of trusted public keys.
 *
 * The `sig` field of an ima-sig entry holds the file's security.ima extended attribute when it
 * is a signature (what `evmctl ima_sign` writes). Its layout is the kernel's struct
 * signature_v2_hdr (security/integrity/integrity.h), every number big-endian:
 *
 *   u8  type       EVM_IMA_XATTR_DIGSIG (3); 5 (EVM portable) and 6 (fs-verity) also exist
 *   u8  version    2: signature over the file digest; 3: over H(struct ima_file_id)
 *   u8  hash_algo  the kernel's HASH_ALGO_* (hash_info.h: sha1 2, sha256 4, ...), not a TPM id
 *   u32 keyid      names the signing key (below)
 *   u16 sig_size   exactly the bytes that follow
 *   u8  sig[]      RSA PKCS#1 v1.5 (DigestInfo of hash_algo) or ECDSA (DER), over the digest
 *
 * What a v2 signature signs is the file digest itself: the kernel hands the digest to the
 * public key with hash_algo as its algorithm (digsig_asymmetric.c asymmetric_verify), evmctl
 * signs it with EVP_PKEY_sign and the hash set (libimaevm.c sign_hash_v2). So verifying is
 * EVP_PKEY_verify over the entry's d-ng digest with the signature md set to hash_algo, and
 * hash_algo must be the digest's algorithm (IMA hashes a signed file with the signature's
 * algorithm, so a mismatch is never honest).
 *
 * A key's id is the last 4 bytes of SHA-1 over its public key bits: the content of the
 * subjectPublicKey BIT STRING of its SubjectPublicKeyInfo (the PKCS#1 RSAPublicKey for RSA, the
 * uncompressed point for EC), as evmctl's calc_keyid_v2 and Keylime's _get_keyidv2 compute it.
 * For an X.509 certificate the kernel matches the id against the certificate's subject key
 * identifier instead, so a certificate with that extension takes its last 4 bytes.
 *
 * Version 3 is what the kernel (5.19+) takes for fs-verity: type 6 (IMA_VERITY_DIGSIG), and
 * what is signed is not the digest but H(struct ima_file_id), the hash (of hash_algo) of
 * u8 6 || u8 hash_algo || the file's fs-verity digest (ima_appraise.c calc_file_id_hash;
 * evmctl sign_hash --veritysig, ima-evm-utils 1.5, signs the same). Such an entry's digest is
 * the fs-verity one (d-ngv2 "verity:"): a v3 signature is checked only over a verity digest,
 * a v2 one only over IMA's file hash; the other pairings are IMASIG_UNSUPPORTED (the
 * signature signs something the entry does not carry). Type 3 with version 3 is refused by
 * the kernel and is IMASIG_UNSUPPORTED here, like the EVM portable signature (type 5), which
 * signs the file's metadata and not its digest.
 *
 * Pure: keys come in as DER or PEM bytes; nothing here reads a file. A key set is built once
 * (imasig_keyset_add() is not thread-safe) and then shared: imasig_verify() only reads it and
 * may run on many threads at once. Ownership: imasig_keyset_new() returns a set the caller
 * frees with imasig_keyset_free() (accepts NULL); a parsed struct imasig points into the
 * caller's buffer.
 */
#ifndef PROTO_IMASIG_H
#define PROTO_IMASIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/imalog.h"

#define IMASIG_TYPE_DIGSIG 0x03      /* EVM_IMA_XATTR_DIGSIG */
#define IMASIG_TYPE_EVM_PORTABLE 0x05 /* EVM_XATTR_PORTABLE_DIGSIG */
#define IMASIG_TYPE_VERITY 0x06      /* IMA_VERITY_DIGSIG */
#define IMASIG_HEADER_LEN 9u

/* The verdict on one signature; imasig_status_name() spells it. */
enum imasig_status {
	IMASIG_VALID,       /* a key of the set signed exactly this digest */
	IMASIG_UNKNOWN_KEY, /* well formed, but no key of the set has its key id */
	IMASIG_INVALID,     /* the key of its id did not sign this digest (or another hash) */
	IMASIG_MALFORMED,   /* the field does not parse: too short, lengths disagree, version */
	IMASIG_UNSUPPORTED, /* well formed, but nothing we can check (EVM, md5, sha1, a v3 over a
			     * file hash or a v2 over an fs-verity digest, ...) */
};

struct imasig {
	uint8_t type;
	uint8_t version;
	uint8_t hash_algo;   /* as in the field (kernel numbering) */
	uint16_t alg;        /* its TPM2_ALG_ID when proto/alg allows it for signatures, else 0 */
	uint32_t keyid;
	const uint8_t *sig;  /* sig_len bytes inside the parsed buffer */
	uint16_t sig_len;
};

/*
 * Parses the field buf[0..len) exactly (the signature must end where the field ends).
 * Returns IMASIG_VALID when it is a v2 signature this module can verify (it is not verified
 * yet), IMASIG_UNSUPPORTED for a well-formed field of another kind, or IMASIG_MALFORMED; *why
 * (if not NULL) gets a static message for the last two. *out is filled as far as it parsed.
 */
enum imasig_status imasig_parse(const uint8_t *buf, size_t len, struct imasig *out,
				const char **why);

struct imasig_keyset;

struct imasig_keyset *imasig_keyset_new(void);
void imasig_keyset_free(struct imasig_keyset *ks);

/*
 * Adds a public key: DER or PEM, a SubjectPublicKeyInfo ("PUBLIC KEY") or an X.509 certificate,
 * RSA (2048 to 16384 bits) or EC. keyid: NULL to compute it as above, else the id to file the key
 * under (Keylime's verification-keys carry one). *keyid_out (if not NULL) gets the id used.
 * Returns 0, -EINVAL (not a key we take; *why says why), -E2BIG (more than LIMIT_POLICY_KEYS
 * keys, or the input past LIMIT_POLICY_KEY_BYTES) or -ENOMEM. The same key twice is kept once.
 */
int imasig_keyset_add(struct imasig_keyset *ks, const uint8_t *data, size_t len,
		      const uint32_t *keyid, uint32_t *keyid_out, const char **why);

size_t imasig_keyset_count(const struct imasig_keyset *ks);
/*
 * Key i as added (its DER: the certificate or the SubjectPublicKeyInfo) and its id; for
 * serialising a policy. false past the end. The bytes stay owned by the set.
 */
bool imasig_keyset_get(const struct imasig_keyset *ks, size_t i, const uint8_t **der,
		       size_t *der_len, uint32_t *keyid);

/*
 * The key id evmctl gives to a public key in DER or PEM (SubjectPublicKeyInfo or certificate, as
 * above, the certificate's subject key identifier first). 0 or -EINVAL.
 */
int imasig_keyid_of(const uint8_t *data, size_t len, uint32_t *keyid);

/*
 * Verifies a parsed signature over a file digest of type digest_type and algorithm digest_alg
 * (a TPM2_ALG_ID; both from the entry's d-ng / d-ngv2 field). Keys of the set with the
 * signature's id are tried in turn. IMASIG_VALID, IMASIG_UNKNOWN_KEY, IMASIG_INVALID (also when
 * the signature's hash is not digest_alg or the digest length is not that hash's),
 * IMASIG_UNSUPPORTED when the signature's version is not the digest type's (above), or what
 * imasig_parse() said.
 */
enum imasig_status imasig_verify(const struct imasig_keyset *ks, const struct imasig *sig,
				 enum ima_digest_type digest_type, uint16_t digest_alg,
				 const uint8_t *digest, size_t digest_len);

/* Why imasig_verify() said IMASIG_UNSUPPORTED for a signature imasig_parse() accepted. */
const char *imasig_kind_mismatch(void);

/* imasig_parse() then imasig_verify(), for callers holding the raw field. */
enum imasig_status imasig_check(const struct imasig_keyset *ks, const uint8_t *field,
				size_t field_len, enum ima_digest_type digest_type,
				uint16_t digest_alg, const uint8_t *digest, size_t digest_len,
				struct imasig *out, const char **why);

/*
 * true when buf[0..len) is exactly one DER X.509 certificate or SubjectPublicKeyInfo of an RSA
 * or EC key: what the kernel measures (an ima-buf entry named after the keyring) when a key is
 * loaded onto a keyring.
 */
bool imasig_is_key(const uint8_t *buf, size_t len);

/* "valid", "unknown_key", "invalid", "malformed", "unsupported". */
const char *imasig_status_name(enum imasig_status s);

#endif
