/* The hash algorithm table; the contract is in alg.h. */
#include "proto/alg.h"

#include <string.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/replay.h"

/* sha1 is refused where a signature or a key depends on the hash: no current TPM needs it. */
#define USES_ALL (ALG_USE_PCR | ALG_USE_REPLAY | ALG_USE_POLICY | ALG_USE_IMA)
#define USES_STRONG (ALG_USE_QUOTE | ALG_USE_CREDENTIAL | ALG_USE_KEY_NAME)

const struct alg alg_table[ALG_COUNT] = {
	{TPM2_ALG_SHA1, "sha1", 20, REPLAY_SHA1, USES_ALL, EVP_sha1},
	{TPM2_ALG_SHA256, "sha256", 32, REPLAY_SHA256, USES_ALL | USES_STRONG, EVP_sha256},
	{TPM2_ALG_SHA384, "sha384", 48, REPLAY_SHA384, USES_ALL | USES_STRONG, EVP_sha384},
	{TPM2_ALG_SHA512, "sha512", 64, REPLAY_SHA512, USES_ALL | USES_STRONG, EVP_sha512},
};

const struct alg *alg_by_id(uint16_t id)
{
	for (unsigned i = 0; i < ALG_COUNT; i++)
		if (alg_table[i].id == id)
			return &alg_table[i];
	return NULL;
}

const struct alg *alg_by_name_len(const char *name, size_t len)
{
	if (!name)
		return NULL;
	for (unsigned i = 0; i < ALG_COUNT; i++)
		if (strlen(alg_table[i].name) == len && memcmp(alg_table[i].name, name, len) == 0)
			return &alg_table[i];
	return NULL;
}

const struct alg *alg_by_name(const char *name)
{
	return name ? alg_by_name_len(name, strlen(name)) : NULL;
}

bool alg_allows(const struct alg *a, enum alg_use use)
{
	return a && (a->uses & (uint32_t)use) == (uint32_t)use;
}

const struct alg *alg_for_use(uint16_t id, enum alg_use use)
{
	const struct alg *a = alg_by_id(id);

	return alg_allows(a, use) ? a : NULL;
}

const EVP_MD *alg_evp_md(const struct alg *a)
{
	return a ? a->evp() : NULL;
}
