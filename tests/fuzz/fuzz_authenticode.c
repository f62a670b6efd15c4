/*
 * libFuzzer target: the Authenticode digest of arbitrary bytes as a PE/COFF image. Nothing may
 * read outside the input; a refusal names why; an accepted image hashes the same from a copy.
 * (The CheckSum field is left out of the headers' part only: a section may cover it, so the
 * digest may depend on it; the copy just gets it changed, to reach that code.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_tpm2_types.h>

#include "proto/authenticode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct alg *a = alg_by_id(TPM2_ALG_SHA256);
	uint8_t d1[32], d2[32], *copy;
	const char *why = NULL;
	uint32_t pe;
	int r = authenticode_digest(a, data, size, d1, &why);

	if (r < 0) {
		if (!why)
			abort();
		return 0;
	}
	pe = (uint32_t)data[0x3c] | (uint32_t)data[0x3d] << 8 | (uint32_t)data[0x3e] << 16 |
	     (uint32_t)data[0x3f] << 24;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (authenticode_digest(a, copy, size, d2, &why) != 0 || memcmp(d1, d2, sizeof(d1)) != 0)
		abort();
	copy[pe + 24 + 64] ^= 0xff; /* CheckSum: accepted images have it inside the file */
	if (authenticode_digest(a, copy, size, d2, &why) != 0)
		abort();
	free(copy);
	return 0;
}
