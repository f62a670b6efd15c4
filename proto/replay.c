/*
 * PCR 10 replay: one extend per bank per entry, no allocation after replay_ctx_new().
 * Per-entry digests use alg_digest3() (OpenSSL's low-level SHA functions); proto/alg.c says why.
 */
#include "proto/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/alg.h"

/* The running value of one bank in a state (the layout is stored: one field per bank). */
static uint8_t *bank_value(struct replay_state *st, uint32_t bank)
{
	switch (bank) {
	case REPLAY_SHA1: return st->sha1;
	case REPLAY_SHA256: return st->sha256;
	case REPLAY_SHA384: return st->sha384;
	case REPLAY_SHA512: return st->sha512;
	default: return NULL;
	}
}

/* Row i of proto/alg if it is a replay bank, else NULL. */
static const struct alg *bank_at(unsigned i)
{
	const struct alg *a = &alg_table[i];

	return alg_allows(a, ALG_USE_REPLAY) ? a : NULL;
}

/* Holds only the bank mask today; kept opaque so a faster digest backend can keep state here. */
struct replay_ctx {
	uint32_t banks;
};

static const uint8_t ff[LIMIT_DIGEST] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

uint32_t replay_bank_of_alg(uint16_t alg)
{
	const struct alg *a = alg_for_use(alg, ALG_USE_REPLAY);

	return a ? a->replay_bank : 0;
}

struct replay_ctx *replay_ctx_new(uint32_t mask)
{
	struct replay_ctx *rc;

	if (mask == 0 || (mask & ~(uint32_t)REPLAY_ALL_BANKS))
		return NULL;
	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return NULL;
	rc->banks = mask;
	return rc;
}

void replay_ctx_free(struct replay_ctx *rc)
{
	free(rc);
}

uint32_t replay_ctx_banks(const struct replay_ctx *rc)
{
	return rc->banks;
}

void replay_state_init(struct replay_state *st, uint32_t mask)
{
	memset(st, 0, sizeof(*st));
	st->banks = mask & REPLAY_ALL_BANKS;
}

/* pcr = H(pcr || d); pcr || d is at most two SHA-512 blocks, hashed in one update. */
static void extend(const struct alg *a, uint8_t *pcr, const uint8_t *d)
{
	uint8_t in[2 * LIMIT_DIGEST];

	memcpy(in, pcr, a->size);
	memcpy(in + a->size, d, a->size);
	(void)alg_digest3(a, in, 2 * a->size, NULL, 0, NULL, 0, pcr); /* a is a table row */
}

int replay_extend(struct replay_ctx *rc, struct replay_state *st, const struct ima_entry *e)
{
	uint8_t d[LIMIT_DIGEST];

	if ((st->banks & rc->banks) != st->banks)
		return -EINVAL;
	st->entries++;
	if (e->violation)
		st->violations++;
	if (e->pcr != PCR_IMA) {
		st->other_pcr++;
		return 0;
	}
	for (unsigned i = 0; i < ALG_COUNT; i++) {
		const struct alg *a = bank_at(i);
		const uint8_t *digest;

		if (!a || !(st->banks & a->replay_bank))
			continue;
		if (e->violation) {
			digest = ff;
		} else if (a->id == TPM2_ALG_SHA1) {
			digest = e->template_hash; /* imalog_next() checked it against the data */
		} else {
			if (imalog_template_digest(a->id, e, d) < 0)
				return -EINVAL;
			digest = d;
		}
		extend(a, bank_value(st, a->replay_bank), digest);
	}
	return 0;
}

const uint8_t *replay_state_pcr(const struct replay_state *st, uint16_t alg, size_t *len)
{
	const struct alg *a = alg_for_use(alg, ALG_USE_REPLAY);

	if (!a || !(st->banks & a->replay_bank))
		return NULL;
	if (len)
		*len = a->size;
	return bank_value((struct replay_state *)st, a->replay_bank);
}

bool replay_state_matches(const struct replay_state *st, const struct pcr_set *quoted)
{
	unsigned compared = 0;

	for (unsigned b = 0; b < quoted->nbanks && b < LIMIT_PCR_BANKS; b++) {
		const struct pcr_bank *bank = &quoted->bank[b];
		const uint8_t *mine;
		size_t len;

		if (!(bank->mask & (1u << PCR_IMA)))
			continue;
		mine = replay_state_pcr(st, bank->alg, &len);
		if (!mine || memcmp(mine, bank->value[PCR_IMA], len) != 0)
			return false;
		compared++;
	}
	return compared > 0;
}

int replay_boot_aggregate(uint16_t alg, const struct pcr_set *pcrs, uint8_t *out,
			  size_t *outlen)
{
	const struct pcr_bank *bank = pcr_set_bank_const(pcrs, alg);
	const struct alg *a = alg_for_use(alg, ALG_USE_REPLAY);
	unsigned last = alg == TPM2_ALG_SHA1 ? 7 : 9;
	uint32_t need = (1u << (last + 1)) - 1;
	size_t size;
	EVP_MD_CTX *ctx = NULL;
	const EVP_MD *md;
	int rc = -ENOMEM;

	if (!a || !bank || (bank->mask & need) != need)
		return -EINVAL;
	size = a->size;
	md = alg_evp_md(a);
	ctx = EVP_MD_CTX_new();
	if (!md || !ctx || EVP_DigestInit_ex2(ctx, md, NULL) != 1)
		goto cleanup;
	for (unsigned i = 0; i <= last; i++)
		if (EVP_DigestUpdate(ctx, bank->value[i], size) != 1)
			goto cleanup;
	if (EVP_DigestFinal_ex(ctx, out, NULL) != 1)
		goto cleanup;
	*outlen = size;
	rc = 0;
cleanup:
	EVP_MD_CTX_free(ctx);
	return rc;
}
