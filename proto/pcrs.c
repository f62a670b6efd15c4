/* PCR bank helpers: algorithm table and selection comparison. */
#include "proto/pcrs.h"

#include <string.h>
#include <tss2/tss2_tpm2_types.h>

static const struct {
	uint16_t alg;
	const char *name;
	size_t size;
} algs[] = {
	{TPM2_ALG_SHA1, "sha1", 20},
	{TPM2_ALG_SHA256, "sha256", 32},
	{TPM2_ALG_SHA384, "sha384", 48},
	{TPM2_ALG_SHA512, "sha512", 64},
};

size_t pcr_alg_digest_size(uint16_t alg)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (algs[i].alg == alg)
			return algs[i].size;
	return 0;
}

const char *pcr_alg_name(uint16_t alg)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (algs[i].alg == alg)
			return algs[i].name;
	return NULL;
}

uint16_t pcr_alg_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (strcmp(algs[i].name, name) == 0)
			return algs[i].alg;
	return 0;
}

struct pcr_bank *pcr_set_bank(struct pcr_set *set, uint16_t alg)
{
	for (unsigned i = 0; i < set->nbanks && i < LIMIT_PCR_BANKS; i++)
		if (set->bank[i].alg == alg)
			return &set->bank[i];
	return NULL;
}

const struct pcr_bank *pcr_set_bank_const(const struct pcr_set *set, uint16_t alg)
{
	return pcr_set_bank((struct pcr_set *)set, alg);
}

struct pcr_bank *pcr_set_add_bank(struct pcr_set *set, uint16_t alg)
{
	if (!pcr_alg_digest_size(alg) || pcr_set_bank(set, alg) || set->nbanks >= LIMIT_PCR_BANKS)
		return NULL;
	struct pcr_bank *b = &set->bank[set->nbanks++];
	memset(b, 0, sizeof(*b));
	b->alg = alg;
	return b;
}

bool pcr_set_same_selection(const struct pcr_set *a, const struct pcr_set *b)
{
	if (a->nbanks != b->nbanks)
		return false;
	for (unsigned i = 0; i < a->nbanks; i++)
		if (a->bank[i].alg != b->bank[i].alg || a->bank[i].mask != b->bank[i].mask)
			return false;
	return true;
}
