/*
 * libFuzzer target: arbitrary bytes as a TPMS_ATTEST (quote_parse_attest), and, split in two,
 * as attest + signature through quote_verify with a fixed AK, nonce and PCR values; also as a
 * tpm2-tools PCR file. Nothing may crash; an accepted attest must re-marshal to its input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	static EVP_PKEY *ak;
	TPMS_ATTEST a;
	struct pcr_set pcrs;
	struct quote_info info;
	uint8_t again[sizeof(TPMS_ATTEST)];
	size_t off = 0, split;

	if (!ak)
		ak = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!ak)
		abort();
	if (quote_parse_attest(data, size, &a) == QUOTE_OK) {
		if (Tss2_MU_TPMS_ATTEST_Marshal(&a, again, sizeof(again), &off) != TSS2_RC_SUCCESS ||
		    off != size || memcmp(again, data, size) != 0)
			abort();
		(void)quote_selection_to_pcr_set(&a.attested.quote.pcrSelect, &pcrs);
	}
	(void)quote_parse_tpm2tools_pcrs(data, size, &pcrs);
	memset(&pcrs, 0, sizeof(pcrs));
	pcr_set_add_bank(&pcrs, 0x000b)->mask = 1u << 10;
	split = size ? data[0] % (size) : 0;
	if (quote_verify(ak, data, split, data + split, size - split, (const uint8_t *)"0123456789abcdef",
			 16, &pcrs, &pcrs, &info) == QUOTE_OK)
		abort(); /* no signature by a fresh random key can be forged */
	return 0;
}
