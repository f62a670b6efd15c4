/*
 * libFuzzer target for proto/imasig: arbitrary bytes as an IMA signature field, checked against
 * a set holding a real RSA and a real EC key over a digest taken from the input, and as a key
 * (DER or PEM) for a key set and for the keyring-entry test. Nothing may crash, leak or
 * verify: a valid signature cannot come out of random bytes.
 *
 * Input: byte 0 picks the digest algorithm, bytes 1..64 are the digest, the rest the field.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/imasig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct imasig_keyset *keyset(void)
{
	EVP_PKEY *keys[2] = {EVP_RSA_gen(2048), EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")};
	struct imasig_keyset *ks = imasig_keyset_new();
	const char *why;

	if (!ks)
		abort();
	for (int i = 0; i < 2; i++) {
		unsigned char *der = NULL;
		int n = keys[i] ? i2d_PUBKEY(keys[i], &der) : -1;

		if (n <= 0 || imasig_keyset_add(ks, der, (size_t)n, NULL, NULL, &why) != 0)
			abort();
		OPENSSL_free(der);
		EVP_PKEY_free(keys[i]);
	}
	return ks;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t algs[] = {TPM2_ALG_SHA1, TPM2_ALG_SHA256, TPM2_ALG_SHA384,
					TPM2_ALG_SHA512};
	static const size_t lens[] = {20, 32, 48, 64};
	static struct imasig_keyset *ks;
	struct imasig_keyset *tmp;
	struct imasig sig;
	const char *why = NULL;
	enum imasig_status st;
	uint32_t id;

	if (!ks)
		ks = keyset();
	if (size >= 65) {
		unsigned a = data[0] % 4;
		enum ima_digest_type t = (data[0] & 4) ? IMA_DIGEST_VERITY : IMA_DIGEST_IMA;

		st = imasig_check(ks, data + 65, size - 65, t, algs[a], data + 1, lens[a], &sig,
				  &why);
		if (st == IMASIG_VALID)
			abort();
		if ((st == IMASIG_MALFORMED || st == IMASIG_UNSUPPORTED) && !why)
			abort();
		if (st != IMASIG_MALFORMED && (size_t)sig.sig_len + IMASIG_HEADER_LEN != size - 65)
			abort();
	}
	st = imasig_parse(data, size, &sig, &why);
	if (st == IMASIG_VALID && (sig.sig != data + IMASIG_HEADER_LEN || !sig.alg))
		abort();

	/* The same bytes as a key. */
	tmp = imasig_keyset_new();
	if (!tmp)
		abort();
	if (imasig_keyset_add(tmp, data, size, NULL, &id, &why) == 0 && imasig_keyset_count(tmp) != 1)
		abort();
	imasig_keyset_free(tmp);
	(void)imasig_is_key(data, size);
	return 0;
}
