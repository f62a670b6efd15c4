/*
 * TPM2_MakeCredential in software, so the verifier can bind an AK to an EK without a TPM
 * (TPM 2.0 Part 1, 24 "Credential Protection"; docs/design.md, Credential activation). The agent gets the secret back
 * only through TPM2_ActivateCredential on the TPM that holds both the EK and a key with that name.
 *
 * Outputs are marshalled TPM structures in caller-owned fixed buffers, exactly the bytes
 * TPM2_ActivateCredential takes: credentialBlob (TPM2B_ID_OBJECT) and secret
 * (TPM2B_ENCRYPTED_SECRET). Secret material (seed, derived keys) is wiped before return;
 * the caller wipes `secret` and the struct when done with them.
 */
#ifndef PROTO_CREDENTIAL_H
#define PROTO_CREDENTIAL_H

#include <stddef.h>
#include <stdint.h>

#include <tss2/tss2_tpm2_types.h>

struct credential {
	uint8_t blob[sizeof(TPM2B_ID_OBJECT)];                /* TPM2B_ID_OBJECT, size included */
	size_t blob_len;
	uint8_t encrypted_secret[sizeof(TPM2B_ENCRYPTED_SECRET)]; /* TPM2B_ENCRYPTED_SECRET */
	size_t encrypted_secret_len;
};

/*
 * ek: an EK that passed tpmkey_check_ek() (RSA with OAEP, or ECC P-256/P-384/P-521 with
 * ECDH+KDFe on the EK's curve; the seed, KDFs and HMAC with the EK's nameAlg, AES-128- or
 * AES-256-CFB as its template says). ak_name: the AK's name (tpmkey_name()). secret: 1..digest size of the EK's
 * nameAlg bytes. 0, -EINVAL for bad input or an unsupported EK, -EIO on a crypto failure.
 */
int credential_make(const TPMT_PUBLIC *ek, const uint8_t *ak_name, size_t ak_name_len,
		    const uint8_t *secret, size_t secret_len, struct credential *out);

/*
 * The blob half with a given seed (what credential_make() does after choosing and encrypting
 * the seed); deterministic, for known-answer tests.
 */
int credential_wrap(TPMI_ALG_HASH name_alg, uint16_t sym_bits, const uint8_t *seed,
		    size_t seed_len, const uint8_t *ak_name, size_t ak_name_len,
		    const uint8_t *secret, size_t secret_len, struct credential *out);

/*
 * KDFa (SP 800-108 counter mode with HMAC, TPM 2.0 Part 1 11.4.10.2):
 * out = first bits/8 bytes of HMAC(key, u32be(i) || label || 0x00 || ctx_u || ctx_v || u32be(bits)),
 * i = 1, 2, ... bits must be a positive multiple of 8, at most 8 * out_cap. 0 or -EINVAL/-EIO.
 */
int credential_kdfa(TPMI_ALG_HASH alg, const uint8_t *key, size_t key_len, const char *label,
		    const uint8_t *ctx_u, size_t u_len, const uint8_t *ctx_v, size_t v_len,
		    uint32_t bits, uint8_t *out, size_t out_cap);

/*
 * KDFe (SP 800-56A concatenation KDF, TPM 2.0 Part 1 11.4.10.3):
 * out = first bits/8 bytes of H(u32be(i) || z || label || 0x00 || party_u || party_v), i = 1, ...
 */
int credential_kdfe(TPMI_ALG_HASH alg, const uint8_t *z, size_t z_len, const char *label,
		    const uint8_t *party_u, size_t u_len, const uint8_t *party_v, size_t v_len,
		    uint32_t bits, uint8_t *out, size_t out_cap);

#endif
