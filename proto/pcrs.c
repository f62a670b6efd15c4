/* PCR bank helpers: bank algorithms (from proto/alg) and selection comparison. */
#include "proto/pcrs.h"

#include <string.h>

#include "proto/alg.h"

/* Banks are the algorithms of proto/alg that ALG_USE_PCR accepts. */
size_t pcr_alg_digest_size(uint16_t alg)
{
	const struct alg *a = alg_for_use(alg, ALG_USE_PCR);

	return a ? a->size : 0;
}

const char *pcr_alg_name(uint16_t alg)
{
	const struct alg *a = alg_for_use(alg, ALG_USE_PCR);

	return a ? a->name : NULL;
}

uint16_t pcr_alg_from_name(const char *name)
{
	const struct alg *a = alg_by_name(name);

	return alg_allows(a, ALG_USE_PCR) ? a->id : 0;
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
