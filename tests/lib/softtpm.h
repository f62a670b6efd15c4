/*
 * softtpm: a TPM's attestation outputs made in software, for tests and the load generator.
 *
 * Lives in the tests' own library (tests/lib -> libtesthelp.a), linked into unit tests, test
 * tools, fuzz targets and benchmarks only, never into attestd, the verifier or attestctl. It
 * builds, with OpenSSL keys the caller holds, the same bytes a TPM would send: an AK's TPM2B_PUBLIC with the AK attributes, and a quote
 * (TPMS_ATTEST + TPMT_SIGNATURE) over given PCR values. This lets tests and benchmarks drive
 * the real verifier without a TPM, and lets tests forge quotes a real TPM would refuse to make
 * (another nonce, a clock going back, a PCR value that lies).
 *
 * Ownership: outputs go into caller buffers; functions return 0 or -errno.
 */
#ifndef TESTS_LIB_SOFTTPM_H
#define TESTS_LIB_SOFTTPM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "proto/pcrs.h"


/*
 * TPM2B_PUBLIC for key (RSA-2048 -> RSASSA-SHA256, EC P-256 -> ECDSA-SHA256): the AK template
 * (tpmkey_ak_template()) with the key as its unique, as a TPM returns it. `attributes` 0 keeps
 * the template's (restricted|sign|fixedTPM|fixedParent|sensitiveDataOrigin|userWithAuth);
 * pass others to build a bad AK for tests.
 */
int softtpm_ak_public(EVP_PKEY *key, uint32_t attributes, uint8_t *out, size_t cap, size_t *outlen);

struct softtpm_clock {
	uint64_t clock;
	uint32_t reset_count;
	uint32_t restart_count;
	uint8_t safe;
	uint64_t firmware_version;
};

/*
 * A TPM2_Quote: TPMS_ATTEST (magic, type QUOTE, qualifiedSigner empty, extraData = nonce,
 * clock, selection = pcrs' banks/masks, pcrDigest = SHA-256 over pcrs' values in order) and
 * its TPMT_SIGNATURE by key (RSASSA or ECDSA, SHA-256).
 */
int softtpm_quote(EVP_PKEY *key, const uint8_t *nonce, size_t nonce_len,
		  const struct pcr_set *pcrs, const struct softtpm_clock *clk, uint8_t *attest,
		  size_t attest_cap, size_t *attest_len, uint8_t *sig, size_t sig_cap,
		  size_t *sig_len);

/*
 * One ima-ng record of the binary measurement list, as the kernel writes it on x86: PCR 10,
 * template hash SHA-1(template data) (20 zero bytes when `violation`), name "ima-ng", data
 * d-ng "<alg>:\0" + digest and n-ng path + NUL. Writes at most cap bytes into out and returns
 * the record's length, or -ENOSPC (nothing usable written) or -EINVAL (path with a NUL, or
 * an algorithm name over 16 bytes). softtpm_ima_ng_size() gives the length without writing.
 */
size_t softtpm_ima_ng_size(const char *alg, size_t digest_len, size_t path_len);
ssize_t softtpm_ima_ng_entry(uint8_t *out, size_t cap, const char *alg, const uint8_t *digest,
			     size_t digest_len, const char *path, size_t path_len, bool violation);
/* The same as an ima-sig record with sig[0..sig_len) as its sig field (sig NULL: empty). */
ssize_t softtpm_ima_sig_entry(uint8_t *out, size_t cap, const char *alg, const uint8_t *digest,
			      size_t digest_len, const char *path, size_t path_len,
			      const uint8_t *sig, size_t sig_len);
/* The same as an ima-sigv2 record: d-ngv2 with type_alg "verity:sha256" or "ima:sha256". */
ssize_t softtpm_ima_sigv2_entry(uint8_t *out, size_t cap, const char *type_alg,
				const uint8_t *digest, size_t digest_len, const char *path,
				size_t path_len, const uint8_t *sig, size_t sig_len);
/*
 * What `evmctl ima_sign` writes to security.ima for a file of this digest: the v2 signature
 * header (type 3, version 2, alg's kernel hash number, the key's id) and key's signature over
 * the digest (RSA PKCS#1 v1.5 or ECDSA). 0, or -EINVAL when cap is too small or signing fails.
 */
int softtpm_ima_sign(EVP_PKEY *key, const char *alg, const uint8_t *digest, size_t digest_len,
		     uint8_t *field, size_t cap, size_t *field_len);

/*
 * A software EK: TPM2B_PUBLIC of an RSA-2048 key under the TCG default EK template L-1, or of
 * an EC P-256 key under L-2 (tpmkey_ek_template()), the public key as its unique. P-256 keys
 * are made in microseconds, RSA-2048 ones in about 100 ms: many agents want P-256 EKs.
 */
int softtpm_ek_public(EVP_PKEY *ek, uint8_t *out, size_t cap, size_t *outlen);

/*
 * TPM2_ActivateCredential in software with the EK's private key: recovers the seed
 * (RSA-OAEP, label "IDENTITY"; for a P-256 EK, ECDH with the point sent and KDFe), checks the
 * outer HMAC over the blob and the AK name, and
 * decrypts the credential into out (at most 64 bytes; *outlen set). -EBADMSG if the blob was
 * not made for this EK and AK name (a real TPM refuses then too), -EINVAL malformed input.
 */
int softtpm_activate_credential(EVP_PKEY *ek, const uint8_t *ak_name, size_t ak_name_len,
				const uint8_t *blob, size_t blob_len, const uint8_t *enc_secret,
				size_t enc_secret_len, uint8_t *out, size_t *outlen);

/*
 * A test CA: a new P-256 key and a self-signed certificate with this common name, valid for
 * ten years. Caller frees both. 0 or -ENOMEM.
 */
int softtpm_ca_new(const char *common_name, EVP_PKEY **key, X509 **cert);

/*
 * An EK certificate for ek issued by the CA, DER-encoded into a malloc'd buffer the caller
 * frees. Carries the EK certificate's usual keyEncipherment usage. 0 or -ENOMEM.
 */
int softtpm_ek_cert(EVP_PKEY *ek, EVP_PKEY *ca_key, X509 *ca_cert, uint64_t serial,
		    uint8_t **der, size_t *der_len);

#endif
