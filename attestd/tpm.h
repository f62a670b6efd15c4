/*
 * Everything attestd asks of the TPM, through tpm2-tss ESYS. No other file talks to the TPM.
 *
 * Keys:
 *  - EK: the endorsement key of one template of the TCG EK Credential Profile, a row of
 *    tpmkey_ek_profiles() (the table the verifier checks against), chosen by tpm_ek_choose():
 *    by name, by the key of a certificate given as a file, or the first row whose certificate
 *    NV index exists. The key at persistent handle 0x81010001 or 0x81010002 when it is an EK
 *    of that template; otherwise a transient one made by CreatePrimary from the template (the
 *    TPM derives the same key from the endorsement seed every time). Its certificate is read
 *    from the row's NV index, the intermediates between it and the maker's CA from NV
 *    0x01C00100 and up. The EK is used through policy sessions in its nameAlg that satisfy its
 *    authPolicy (PolicySecret(endorsement), and PolicyOR for the high range).
 *  - AK: a restricted signing key created under the EK (so quotes carry clear resetCount /
 *    restartCount) from tpmkey_ak_template(), RSA-2048 RSASSA-SHA256 or P-256 ECDSA-SHA256.
 *    Its public and private blobs
 *    are kept in the state dir (ak.pub = TPM2B_PUBLIC, ak.priv = TPM2B_PRIVATE, marshalled)
 *    and loaded again on later starts, so the enrolled AK survives restarts.
 *
 * Every TSS2_RC is logged decoded with Tss2_RC_Decode and mapped to -EIO (TPM or transport) or
 * -ENOENT (a handle or NV index that does not exist). Buffers returned through uint8_t ** are
 * malloc'd and owned by the caller (free()). tpm_close() accepts NULL and flushes every
 * transient object the module loaded.
 */
#ifndef ATTESTD_TPM_H
#define ATTESTD_TPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attestd/config.h"
#include "proto/limits.h"
#include "proto/pcrs.h"

#include <openssl/evp.h>

#include "proto/dynbuf.h"
#include "proto/tpmkey.h"

/* The EK Credential Profile's range for the EK certificate chain, first index first. */
#define TPM_EK_CHAIN_NV_FIRST 0x01C00100u
#define TPM_EK_CHAIN_NV_LAST 0x01C001FFu

struct tpm;

/* Opens the TCTI (e.g. "device:/dev/tpmrm0", "swtpm:host=127.0.0.1,port=2321"); NULL on error. */
struct tpm *tpm_open(const char *tcti);
void tpm_close(struct tpm *t);

/*
 * Chooses the EK's template once (later calls change nothing): want if not NULL; else the
 * first profile of cert_key's type and size if cert_key is not NULL (-EINVAL if none); else
 * the first profile whose certificate NV index exists (-ENOENT if none does).
 */
int tpm_ek_choose(struct tpm *t, const struct tpmkey_ek_profile *want,
		  const EVP_PKEY *cert_key);
/* Finds or creates the EK (see above; chooses automatically if tpm_ek_choose() was not called). */
int tpm_ek_load(struct tpm *t);
/* The EK's marshalled TPM2B_PUBLIC. */
int tpm_ek_public(struct tpm *t, uint8_t **out, size_t *out_len);
/*
 * The EK certificate (DER, without the fill after it) from the profile's NV index; -ENOENT if
 * the index is not defined.
 */
int tpm_ek_cert(struct tpm *t, uint8_t **out, size_t *out_len);
/*
 * Appends to chain the certificates (DER, fill dropped) of NV 0x01C00100, 0x01C00101, ... up
 * to the first index not defined, and counts them in *ncerts: 0; -EFBIG past
 * LIMIT_EK_CHAIN_CERTS certificates or chain's cap, -EINVAL for bytes that are no certificates.
 */
int tpm_ek_chain(struct tpm *t, struct dynbuf *chain, unsigned *ncerts);

/*
 * Loads the AK from state_dir/ak.{pub,priv}, or creates one of type alg and saves it there
 * (temp file, fsync, rename). *created tells which happened: a new AK must be enrolled again.
 * A saved AK of another type than alg is kept (the enrolled key wins) with a warning.
 */
int tpm_ak_load_or_create(struct tpm *t, const char *state_dir, enum attestd_ak_alg alg,
			  bool *created);
/* The AK's marshalled TPM2B_PUBLIC. */
int tpm_ak_public(struct tpm *t, uint8_t **out, size_t *out_len);
/* The AK's name (nameAlg u16 big-endian || digest) into name[LIMIT_TPM_NAME]. */
int tpm_ak_name(struct tpm *t, uint8_t *name, size_t *name_len);

/*
 * TPM2_ActivateCredential with the AK (password session) and the EK (PolicySecret(endorsement)
 * session). blob is a marshalled TPM2B_ID_OBJECT, secret a marshalled TPM2B_ENCRYPTED_SECRET
 * (both with their u16 size prefix, as the protocol carries them). The recovered credential
 * goes to out (cap >= 64); the caller wipes it after use. -EIO if the TPM refuses (wrong TPM or
 * AK name), -EINVAL for malformed blobs.
 */
int tpm_activate_credential(struct tpm *t, const uint8_t *blob, size_t blob_len,
			    const uint8_t *secret, size_t secret_len, uint8_t *out, size_t cap,
			    size_t *out_len);

/*
 * Quotes the PCRs selected in pcrs (bank masks) with nonce as qualifyingData, and fills the
 * values of those PCRs in pcrs. The values belong to the quote: they are read before and after
 * the quote and the whole is retried (a few times) if a PCR moved in between; -EAGAIN if it
 * kept moving. *attest gets the TPMS_ATTEST bytes (what was signed, without the TPM2B size),
 * *sig the marshalled TPMT_SIGNATURE.
 */
int tpm_quote(struct tpm *t, const uint8_t *nonce, size_t nonce_len, struct pcr_set *pcrs,
	      uint8_t **attest, size_t *attest_len, uint8_t **sig, size_t *sig_len);

/* Reads the selected PCR values into pcrs (masks in, values out); loops past 8 per call. */
int tpm_pcr_read(struct tpm *t, struct pcr_set *pcrs);

#endif
