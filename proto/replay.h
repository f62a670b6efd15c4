/*
 * PCR 10 replay of an IMA measurement list, per bank, one entry at a time.
 *
 * Rule per bank (docs/design.md, Template hash and replay; Violations): PCR = H_bank(PCR || d) from all zeros, where d is
 *   - the (verified) SHA-1 template hash for the sha1 bank,
 *   - H_bank(template data) for the other banks (6.1 lists carry only SHA-1; recompute),
 *   - 0xff x digest size in every bank for a violation entry (its data is never hashed).
 * Entries whose PCR is not 10 (a policy rule pcr=N) are counted in `other_pcr` and not extended.
 *
 * `struct replay_state` is plain bytes (no pointers): the verifier stores it between rounds and
 * restores it to continue from entry `entries` (incremental attestation). Counters are host
 * order. `struct replay_ctx` holds the fetched digests and preallocated EVP_MD_CTXs so that
 * replay_extend() never allocates: create it once with replay_ctx_new() (NULL on failure or on
 * an empty/unknown bank mask), free it with replay_ctx_free() (accepts NULL). A ctx is not
 * thread-safe; a state may be used with any ctx whose banks include the state's banks.
 * replay_extend() itself never allocates and cannot fail on a well-formed call.
 */
#ifndef PROTO_REPLAY_H
#define PROTO_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/imalog.h"
#include "proto/pcrs.h"

enum replay_bank {
	REPLAY_SHA1 = 1u << 0,
	REPLAY_SHA256 = 1u << 1,
	REPLAY_SHA384 = 1u << 2,
	REPLAY_SHA512 = 1u << 3,
};
#define REPLAY_ALL_BANKS (REPLAY_SHA1 | REPLAY_SHA256 | REPLAY_SHA384 | REPLAY_SHA512)

struct replay_state {
	uint32_t banks;      /* enum replay_bank bits this state follows */
	uint32_t reserved;   /* zero; keeps the layout free of padding */
	uint64_t entries;    /* entries consumed (all PCRs), i.e. the next list index */
	uint64_t violations; /* violation entries among them */
	uint64_t other_pcr;  /* entries for a PCR other than 10 (not extended) */
	uint8_t sha1[20];
	uint8_t sha256[32];
	uint8_t sha384[48];
	uint8_t sha512[64];
};

struct replay_ctx;

struct replay_ctx *replay_ctx_new(uint32_t banks);
void replay_ctx_free(struct replay_ctx *rc);
/* The bank mask the ctx was created with. */
uint32_t replay_ctx_banks(const struct replay_ctx *rc);

/* Fresh state (PCR 10 after reset: zeros) following `banks`. */
void replay_state_init(struct replay_state *st, uint32_t banks);

/*
 * Extends every bank of st with one entry decoded (and hash-checked) by imalog_next().
 * Returns 0, or -EINVAL (st unchanged) if st follows a bank rc does not have.
 */
int replay_extend(struct replay_ctx *rc, struct replay_state *st, const struct ima_entry *e);

/* Pointer to the running PCR 10 of a bank (TPM2_ALG_ID) and its size; NULL if not followed. */
const uint8_t *replay_state_pcr(const struct replay_state *st, uint16_t alg, size_t *len);

/*
 * True when every bank of `quoted` that selects PCR 10 is followed by st and equals its
 * running value, and at least one bank was compared.
 */
bool replay_state_matches(const struct replay_state *st, const struct pcr_set *quoted);

/* enum replay_bank bit for a TPM2_ALG_ID, 0 if none. */
uint32_t replay_bank_of_alg(uint16_t alg);

/*
 * boot_aggregate for bank alg from the PCR values in pcrs: H(PCR0 || ... || PCR7) for sha1,
 * H(PCR0 || ... || PCR9) for the other banks (docs/design.md, boot_aggregate). out gets the digest size of
 * alg (*outlen set). Returns 0, -EINVAL if the bank is unknown or PCR 0-7/0-9 is missing from
 * pcrs, -ENOMEM on an OpenSSL failure.
 */
int replay_boot_aggregate(uint16_t alg, const struct pcr_set *pcrs, uint8_t *out,
			  size_t *outlen);

#endif
