/*
 * libFuzzer target for proto/dsse: arbitrary bytes as a policy's DSSE envelope (dsse_parse(),
 * then dsse_verify() against a real P-256 key) and as the PEM text of --policy-signers
 * (dsse_keys_parse()). Nothing may crash, leak or verify: a signature by the key cannot come
 * out of random bytes. A parsed envelope's payload must be within the cap and NUL-terminated.
 */
#include <stdint.h>
#include <stdlib.h>

#include <openssl/evp.h>

#include "proto/dsse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static EVP_PKEY *key;
	struct dsse_envelope e;
	const char *why = NULL;
	EVP_PKEY **keys = NULL;
	size_t signer = 0, n = 0;

	if (!key && !(key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")))
		abort();
	if (dsse_parse((const char *)data, size, 4096, &e, &why) == DSSE_OK) {
		if (e.payload_len == 0 || e.payload_len > 4096 || e.payload[e.payload_len] != 0 ||
		    e.nsigs == 0 || e.nsigs > LIMIT_DSSE_SIGNATURES)
			abort();
		if (dsse_verify(&e, &key, 1, &signer) == DSSE_OK)
			abort();
	}
	dsse_envelope_release(&e);
	if (dsse_keys_parse((const char *)data, size, &keys, &n, &why) == 0) {
		for (size_t i = 0; i < n; i++)
			EVP_PKEY_free(keys[i]);
		free(keys);
	}
	return 0;
}
