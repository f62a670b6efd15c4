/*
 * libFuzzer target: arbitrary bytes as a TPMT_SIGNATURE (quote_parse_signature) and through
 * quote_verify over a fixed attest with RSA and EC keys. Nothing may crash or verify.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rsa.h>
#include <tss2/tss2_mu.h>

#include "proto/quote.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tpm2-tss logs every failed unmarshal to stderr: silence it, a fuzzer makes millions. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	setenv("TSS2_LOG", "all+none", 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static EVP_PKEY *rsa, *ec;
	static const uint8_t attest[] = {0xff, 0x54, 0x43, 0x47, 0x80, 0x18, 0x00, 0x00, 0x00, 0x00};
	TPMT_SIGNATURE s;
	struct quote_info info;
	uint8_t again[sizeof(TPMT_SIGNATURE)];
	size_t off = 0;

	if (!rsa)
		rsa = EVP_RSA_gen(2048);
	if (!ec)
		ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!rsa || !ec)
		abort();
	if (quote_parse_signature(data, size, &s) == QUOTE_OK &&
	    (Tss2_MU_TPMT_SIGNATURE_Marshal(&s, again, sizeof(again), &off) != TSS2_RC_SUCCESS ||
	     off != size || memcmp(again, data, size) != 0))
		abort();
	if (quote_verify(rsa, attest, sizeof(attest), data, size, attest, 0, NULL, NULL, &info) == QUOTE_OK ||
	    quote_verify(ec, attest, sizeof(attest), data, size, attest, 0, NULL, NULL, &info) == QUOTE_OK)
		abort();
	return 0;
}
