/*
 * TPM2_Quote verification: TPMS_ATTEST + TPMT_SIGNATURE + reported PCR values.
 *
 * quote_verify() checks, in this order, and returns the first failure:
 *   the signature parses and uses RSASSA, RSAPSS or ECDSA over sha256/384/512;
 *   it verifies with the AK over the attest bytes (nothing in the attest is trusted before);
 *   magic == TPM_GENERATED_VALUE, type == TPM_ST_ATTEST_QUOTE, the attest parses exactly;
 *   extraData == the nonce (constant time);
 *   the quoted selection equals the expected one (same banks, same order, same masks);
 *   pcrDigest == H_sig(the reported values of the selected PCRs in TPML order).
 *
 * Inputs are untrusted byte buffers; nothing is allocated; `out` is plain data owned by the
 * caller and filled as far as the checks got (zeroed first).
 */
#ifndef PROTO_QUOTE_H
#define PROTO_QUOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/limits.h"
#include "proto/pcrs.h"

/* What a quote check found. The wire names of the failures are the verifier's reasons (its
 * reason table maps each result to one); this library names none. */
enum quote_result {
	QUOTE_OK = 0,
	QUOTE_BAD_SIGNATURE,
	QUOTE_NONCE_MISMATCH,
	QUOTE_BAD_MAGIC,
	QUOTE_BAD_TYPE,
	QUOTE_PCR_SELECTION_MISMATCH,
	QUOTE_PCR_DIGEST_MISMATCH,
	QUOTE_MALFORMED_ATTEST,
	QUOTE_MALFORMED_SIGNATURE,
	QUOTE_UNSUPPORTED_ALGORITHM,
};

struct quote_info {
	uint64_t clock;
	uint32_t reset_count;
	uint32_t restart_count;
	bool safe;
	uint64_t firmware_version;
	uint16_t sig_alg;          /* TPM2_ALG_RSASSA / RSAPSS / ECDSA */
	uint16_t sig_hash;         /* TPM2_ALG_SHA256 / 384 / 512 */
	struct pcr_set selection;  /* quoted banks and masks; values unused */
	uint8_t pcr_digest[LIMIT_DIGEST];
	size_t pcr_digest_len;
};

/*
 * ak: the attestation key (from tpmkey_to_evp() or a PEM file).
 * expected: the selection the verifier asked for; NULL accepts any selection.
 * pcrs: the values the agent reported, its selection must equal the quoted one; NULL skips the
 *   digest check (then no PCR value may be trusted; out->pcr_digest is still filled).
 */
enum quote_result quote_verify(EVP_PKEY *ak, const uint8_t *attest, size_t attest_len,
			       const uint8_t *sig, size_t sig_len, const uint8_t *nonce,
			       size_t nonce_len, const struct pcr_set *expected,
			       const struct pcr_set *pcrs, struct quote_info *out);

/* Parsers used above, exposed for tools and fuzzing. QUOTE_OK or MALFORMED_/BAD_MAGIC/BAD_TYPE. */
enum quote_result quote_parse_attest(const uint8_t *buf, size_t len, TPMS_ATTEST *out);
/* QUOTE_OK, QUOTE_MALFORMED_SIGNATURE, or QUOTE_UNSUPPORTED_ALGORITHM. */
enum quote_result quote_parse_signature(const uint8_t *buf, size_t len, TPMT_SIGNATURE *out);

/*
 * TPML_PCR_SELECTION -> pcr_set masks. false if a bank is unknown or repeated, a PCR >= 24 is
 * selected, or there are more than LIMIT_PCR_BANKS banks.
 */
bool quote_selection_to_pcr_set(const TPML_PCR_SELECTION *sel, struct pcr_set *out);

/* H(values of pcrs in its bank order, PCRs ascending). 0 or -EINVAL. out holds LIMIT_DIGEST. */
int quote_pcr_digest(uint16_t hash_alg, const struct pcr_set *pcrs, uint8_t *out, size_t *outlen);

/*
 * tpm2-tools' serialized PCR file (`tpm2_quote -o`, `tpm2_pcrread -o`; tpm2-tools lib/pcr.c
 * pcr_fwrite_serialized): a little-endian dump of the C structs TPML_PCR_SELECTION (132 bytes),
 * u32 n, n x TPML_DIGEST (532 bytes each); the digests in selection order. 0 or -EINVAL.
 */
int quote_parse_tpm2tools_pcrs(const uint8_t *buf, size_t len, struct pcr_set *out);

#endif
