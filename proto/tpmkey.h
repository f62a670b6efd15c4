/*
 * TPM 2.0 public keys: TPM2B_PUBLIC bytes -> TPMT_PUBLIC -> OpenSSL EVP_PKEY, object names, and
 * the attribute checks that decide whether a key may serve as an attestation key (AK) or an
 * endorsement key (EK).
 *
 * Input bytes are untrusted. tpmkey_parse_public() accepts only a canonical TPM2B_PUBLIC that
 * fills its buffer exactly, so the name computed from the parsed structure is the name of the
 * bytes received. TPMT_PUBLIC is plain data (no pointers): the caller owns it.
 *
 * Ownership: tpmkey_to_evp() returns a new key the caller frees with EVP_PKEY_free().
 */
#ifndef PROTO_TPMKEY_H
#define PROTO_TPMKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>

/* nameAlg (2) + the largest digest we support (SHA-512, 64). */
#define TPMKEY_NAME_MAX 66u

/*
 * Parses a marshalled TPM2B_PUBLIC (u16 size || TPMT_PUBLIC, as `tpm2_createak -u` writes it).
 * 0, or -EINVAL if malformed, not exactly len bytes, or not in canonical form.
 */
int tpmkey_parse_public(const uint8_t *buf, size_t len, TPMT_PUBLIC *out);

/* Marshals pub as a TPM2B_PUBLIC into buf. 0 and *outlen, -ENOSPC or -EINVAL. */
int tpmkey_marshal_public(const TPMT_PUBLIC *pub, uint8_t *buf, size_t cap, size_t *outlen);

/*
 * Object name: u16be nameAlg || H_nameAlg(marshalled TPMT_PUBLIC). Writes at most
 * TPMKEY_NAME_MAX bytes. 0, or -EINVAL for an unsupported nameAlg.
 */
int tpmkey_name(const TPMT_PUBLIC *pub, uint8_t name[TPMKEY_NAME_MAX], size_t *name_len);

/* RSA (2048..4096 bits) or ECC (NIST P-256/384/521) public key; NULL if unsupported. */
EVP_PKEY *tpmkey_to_evp(const TPMT_PUBLIC *pub);

/* True if pkey (e.g. from an X.509 EK certificate) is the same public key as pub. */
bool tpmkey_matches_evp(const TPMT_PUBLIC *pub, const EVP_PKEY *pkey);

enum tpmkey_check {
	TPMKEY_OK = 0,
	TPMKEY_BAD_TYPE,       /* not RSA or ECC, or an unsupported size or curve */
	TPMKEY_BAD_NAME_ALG,   /* nameAlg not sha256/384/512 (EK: not the template's) */
	TPMKEY_BAD_ATTRIBUTES, /* object attributes differ from what the role requires */
	TPMKEY_BAD_SCHEME,     /* AK: no signing scheme we verify; EK: a scheme set */
	TPMKEY_BAD_SYMMETRIC,  /* AK: a symmetric algorithm set; EK: not AES-128-CFB */
	TPMKEY_BAD_POLICY,     /* EK: authPolicy is not PolicySecret(TPM_RH_ENDORSEMENT) */
};

/* "ok", "bad_type", "bad_name_alg", "bad_attributes", "bad_scheme", "bad_symmetric", "bad_policy". */
const char *tpmkey_check_str(enum tpmkey_check c);

/*
 * An AK must be restricted|sign|fixedTPM|fixedParent|sensitiveDataOrigin|userWithAuth and not
 * decrypt (so it only signs TPM-generated structures and never leaves the TPM), with a scheme
 * of RSASSA, RSAPSS (RSA) or ECDSA (ECC) over sha256/384/512.
 */
enum tpmkey_check tpmkey_check_ak(const TPMT_PUBLIC *pub);

/*
 * An EK must match the TCG default low-range template for RSA-2048 or ECC NIST P-256 (EK
 * Credential Profile templates L-1 and L-2): nameAlg sha256, attributes exactly
 * fixedTPM|fixedParent|sensitiveDataOrigin|adminWithPolicy|restricted|decrypt, the
 * PolicySecret(TPM_RH_ENDORSEMENT) authPolicy, AES-128-CFB, no scheme.
 */
enum tpmkey_check tpmkey_check_ek(const TPMT_PUBLIC *pub);

#endif
