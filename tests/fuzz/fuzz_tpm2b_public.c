/*
 * libFuzzer target: arbitrary bytes as a TPM2B_PUBLIC; every accepted key goes through name,
 * EVP conversion, the AK and EK checks and a MakeCredential attempt. Nothing may crash, and an
 * accepted input must marshal back to itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/credential.h"
#include "proto/tpmkey.h"

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
	TPMT_PUBLIC pub;
	uint8_t name[LIMIT_TPM_NAME], again[sizeof(TPM2B_PUBLIC)];
	size_t nl = 0, al = 0;
	struct credential c;
	EVP_PKEY *k;

	if (tpmkey_parse_public(data, size, &pub) != 0)
		return 0;
	if (tpmkey_marshal_public(&pub, again, sizeof(again), &al) != 0 || al != size ||
	    memcmp(again, data, size) != 0)
		abort();
	(void)tpmkey_name(&pub, name, &nl);
	k = tpmkey_to_evp(&pub);
	if (k && !tpmkey_matches_evp(&pub, k))
		abort();
	EVP_PKEY_free(k);
	(void)tpmkey_check_ak(&pub);
	if (tpmkey_check_ek(&pub) == TPMKEY_OK)
		(void)credential_make(&pub, (const uint8_t *)"\x00\x0bname-name-name-name-name-name-na", 34,
				      (const uint8_t *)"secret", 6, &c);
	return 0;
}
