/*
 * enroll: the checks that decide whether a TPM may enroll, and the credential that binds its
 * AK to its EK (docs/design.md, Protocol and Credential activation).
 *
 * enroll_check() accepts an enroll_request only if
 *   - ek_pub is a TPM2B_PUBLIC of a proper EK (a template of the TCG EK Credential Profile,
 *     low or high range, tpmkey_check_ek),
 *   - ak_pub is a TPM2B_PUBLIC with the AK attributes (tpmkey_check_ak),
 *   - ek_cert is one DER certificate, followed at most by the 0xFF or 0x00 fill of the NV
 *     index it was read from (proto/ekcert.h; the store keeps the certificate without it),
 *   - it chains to a --ek-ca anchor, through the intermediates of the optional ek_chain
 *     (untrusted: only candidates for the path),
 *   - the certificate's key equals ek_pub;
 * then it runs MakeCredential with 32 fresh random bytes for the AK's name and keeps only
 * SHA-256(secret). The secret itself is wiped before return: only the TPM that holds the EK
 * and the AK can recover it (TPM2_ActivateCredential), and enroll_secret_matches() checks the
 * agent's answer against the digest in constant time.
 *
 * Ownership: enroll_trust_new() returns a trust store freed with enroll_trust_free() (NULL-safe);
 * it is read-only after creation and may be shared by threads.
 */
#ifndef VERIFIER_ENROLL_H
#define VERIFIER_ENROLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/credential.h"
#include "proto/evidence.h"
#include "proto/tpmkey.h"

#define ENROLL_SECRET_LEN 32u
#define ENROLL_DIGEST_LEN 32u

struct enroll_trust;

/*
 * Loads every certificate of every PEM file as a trust anchor, a self-signed root or a CA
 * issued by a root not in the files (X509_V_FLAG_PARTIAL_CHAIN): the chain check stops at the
 * first certificate it finds in the files. NULL on failure (logged).
 */
struct enroll_trust *enroll_trust_new(const char *const *ca_files, size_t nfiles);
void enroll_trust_free(struct enroll_trust *t);

enum enroll_status {
	ENROLL_OK = 0,
	ENROLL_BAD_EK,       /* 400 bad_ek: ek_pub malformed or not an EK */
	ENROLL_BAD_AK,       /* 400 bad_ak: ak_pub malformed or without the AK attributes */
	ENROLL_EK_UNTRUSTED, /* 403 ek_untrusted: certificate malformed or chain not trusted */
	ENROLL_EK_MISMATCH,  /* 403 ek_mismatch: certificate key is not ek_pub */
	ENROLL_INTERNAL,     /* 500: random or crypto failure */
};

struct enroll_result {
	struct credential cred;                 /* goes to the agent */
	uint8_t secret_digest[ENROLL_DIGEST_LEN]; /* SHA-256(secret), stored */
	uint8_t ak_name[LIMIT_TPM_NAME];
	size_t ak_name_len;
	size_t ek_cert_len;                     /* req->ek_cert without its NV fill */
	/* What admission names the EK by (store.h, store_ek_kind): SHA-256 of ek_pub as sent,
	 * and of the EK certificate's DER SubjectPublicKeyInfo */
	uint8_t ek_pub_sha256[ENROLL_DIGEST_LEN];
	uint8_t ek_spki_sha256[ENROLL_DIGEST_LEN];
	char why[160];                          /* reason for a refusal, for the error message */
};

enum enroll_status enroll_check(const struct enroll_trust *t, const struct enroll_request *req,
				struct enroll_result *out);

/*
 * An operator's EK certificate (attestctl agent add --ek-cert): exactly one DER certificate,
 * then at most the fill of an NV index; the SHA-256 of its DER SubjectPublicKeyInfo into out
 * and the certificate's length without the fill into *cert_len. -EINVAL if it is not one.
 */
int enroll_ek_cert_digest(const uint8_t *der, size_t len, uint8_t out[ENROLL_DIGEST_LEN],
			  size_t *cert_len);

/* SHA-256(secret) == digest, compared in constant time. */
bool enroll_secret_matches(const uint8_t digest[ENROLL_DIGEST_LEN], const uint8_t *secret,
			   size_t secret_len);

#endif
