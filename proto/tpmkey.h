/*
 * TPM 2.0 public keys: TPM2B_PUBLIC bytes -> TPMT_PUBLIC -> OpenSSL EVP_PKEY, object names, and
 * the EK and AK templates, and the checks, written against those templates, that decide whether
 * a key may serve as an attestation key (AK) or an endorsement key (EK).
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

#include "proto/limits.h"

/*
 * Parses a marshalled TPM2B_PUBLIC (u16 size || TPMT_PUBLIC, as `tpm2_createak -u` writes it).
 * 0, or -EINVAL if malformed, not exactly len bytes, or not in canonical form.
 */
int tpmkey_parse_public(const uint8_t *buf, size_t len, TPMT_PUBLIC *out);

/* Marshals pub as a TPM2B_PUBLIC into buf. 0 and *outlen, -ENOSPC or -EINVAL. */
int tpmkey_marshal_public(const TPMT_PUBLIC *pub, uint8_t *buf, size_t cap, size_t *outlen);

/*
 * Object name: u16be nameAlg || H_nameAlg(marshalled TPMT_PUBLIC). Writes at most
 * LIMIT_TPM_NAME bytes. 0, or -EINVAL for an unsupported nameAlg.
 */
int tpmkey_name(const TPMT_PUBLIC *pub, uint8_t name[LIMIT_TPM_NAME], size_t *name_len);

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
 * An AK must have every attribute of the AK template below (restricted|sign|fixedTPM|
 * fixedParent|sensitiveDataOrigin|userWithAuth) and not decrypt (so it only signs
 * TPM-generated structures and never leaves the TPM), with a scheme of RSASSA, RSAPSS (RSA) or
 * ECDSA (ECC) over sha256/384/512: wider than the template, for AKs made by other tools.
 */
enum tpmkey_check tpmkey_check_ak(const TPMT_PUBLIC *pub);

/*
 * An EK must be one of the EK Credential Profile's templates (tpmkey_ek_profiles()), field
 * for field: the low-range RSA-2048 (L-1) and ECC P-256 (L-2) below, or a high-range one (H-1
 * RSA-2048, H-2 P-256, H-3 P-384, H-4 P-521, H-6 RSA-3072, H-7 RSA-4096: userWithAuth, PolicyB,
 * AES-256 past 2048 bits and P-256). An RSA exponent of 65537 is the template's 0 spelled out;
 * the unique must be a valid public key of the template's size.
 */
enum tpmkey_check tpmkey_check_ek(const TPMT_PUBLIC *pub);

/* One EK template of the TCG EK Credential Profile and where its certificate lives. */
struct tpmkey_ek_profile {
	const char *name;       /* "L-1 RSA-2048", "H-3 ECC P-384", ... */
	uint32_t cert_nv_index; /* 0x01c00002, ... */
	TPMT_PUBLIC tmpl;       /* the template (a zero-sized unique for the high range) */
};

/* The table of supported profiles, low range first; *n gets its length. */
const struct tpmkey_ek_profile *tpmkey_ek_profiles(size_t *n);

/* The profile pub is an EK of (tpmkey_check_ek() accepts it), or NULL. */
const struct tpmkey_ek_profile *tpmkey_ek_profile_of(const TPMT_PUBLIC *pub);

/* The profile named id ("L-1", "h-3": its name up to the space, any case), or NULL. */
const struct tpmkey_ek_profile *tpmkey_ek_profile_by_id(const char *id);

/* The first profile whose key has pkey's type and size (RSA) or curve (ECC), or NULL. */
const struct tpmkey_ek_profile *tpmkey_ek_profile_for_key(const EVP_PKEY *pkey);

/*
 * What a policy session must do to satisfy the profile's authPolicy, after
 * PolicySecret(TPM_RH_ENDORSEMENT) in a session of the template's nameAlg: the low range's
 * policy is that PolicySecret alone (PolicyA): 0 branches. The high range's PolicyB is
 * PolicyOR(PolicyA, PolicyC): 2 branches, PolicyA then PolicyC (PolicyAuthorizeNV, the EK
 * Credential Profile's fixed digests) in the nameAlg, for TPM2_PolicyOR's list. The count, or
 * -EINVAL for a nameAlg without them.
 */
int tpmkey_ek_policy_branches(const struct tpmkey_ek_profile *p, TPM2B_DIGEST branches[2]);

/*
 * Key templates, written once: attestd creates its EK and AK from them, the checks above are
 * written against them, and the tests' software TPM builds its publics from them.
 */
enum tpmkey_kind {
	TPMKEY_RSA2048,  /* AK: RSASSA-SHA256, exponent 0 (65537) */
	TPMKEY_ECC_P256, /* AK: ECDSA-SHA256, no KDF */
};

/*
 * The TCG default low-range EK template (EK Credential Profile L-1 for RSA-2048, L-2 for ECC
 * NIST P-256): nameAlg sha256, attributes fixedTPM|fixedParent|sensitiveDataOrigin|
 * adminWithPolicy|restricted|decrypt, authPolicy PolicySecret(TPM_RH_ENDORSEMENT), AES-128-CFB,
 * no scheme, and a zero-filled unique of the key's size (RSA: 256 bytes; ECC: x and y of 32),
 * as the profile requires: CreatePrimary with it derives the key the EK certificate names.
 * Fills all of *out (size 0: marshalling computes it).
 */
void tpmkey_ek_template(TPM2B_PUBLIC *out, enum tpmkey_kind kind);

/*
 * The AK template attestd creates under the EK: nameAlg sha256, attributes
 * restricted|sign|fixedTPM|fixedParent|sensitiveDataOrigin|userWithAuth, no symmetric
 * algorithm, the scheme named in enum tpmkey_kind, and an empty unique (the TPM fills it).
 * Fills all of *out (size 0: marshalling computes it).
 */
void tpmkey_ak_template(TPM2B_PUBLIC *out, enum tpmkey_kind kind);

#endif
