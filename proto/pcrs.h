/*
 * PCR banks and values as the protocol and the quote check see them.
 *
 * A `struct pcr_set` holds, per bank, a selection mask (bit n = PCR n) and the values of the
 * selected PCRs. It is plain data (no pointers): copy it, store it, compare it with memcmp.
 * Bank ids are TPM2_ALG_ID values (TPM2_ALG_SHA1 = 0x0004, TPM2_ALG_SHA256 = 0x000B, ...); the
 * banks accepted are the algorithms of proto/alg.h that allow ALG_USE_PCR.
 */
#ifndef PROTO_PCRS_H
#define PROTO_PCRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/limits.h"

#define PCR_COUNT 24u
#define PCR_IMA 10u

struct pcr_bank {
	uint16_t alg;     /* TPM2_ALG_ID */
	uint32_t mask;    /* bit n set: PCR n selected / present */
	uint8_t value[PCR_COUNT][LIMIT_DIGEST];
};

struct pcr_set {
	unsigned nbanks;
	struct pcr_bank bank[LIMIT_PCR_BANKS];
};

/* Digest size of a bank algorithm, 0 if the algorithm is not one we support. */
size_t pcr_alg_digest_size(uint16_t alg);
/* "sha1", "sha256", "sha384", "sha512"; NULL for an unknown id. */
const char *pcr_alg_name(uint16_t alg);
/* TPM2_ALG_ID for a name above, 0 if unknown. */
uint16_t pcr_alg_from_name(const char *name);

/* The bank with this algorithm, or NULL. */
struct pcr_bank *pcr_set_bank(struct pcr_set *set, uint16_t alg);
const struct pcr_bank *pcr_set_bank_const(const struct pcr_set *set, uint16_t alg);
/* Appends an empty bank (mask 0); NULL if the alg is unknown, present already, or no room. */
struct pcr_bank *pcr_set_add_bank(struct pcr_set *set, uint16_t alg);

/* Same banks in the same order with the same masks (values not compared). */
bool pcr_set_same_selection(const struct pcr_set *a, const struct pcr_set *b);

#endif
