/*
 * boot_state: what the verifier keeps per agent between rounds (the boot session it is in and
 * the IMA replay folded so far), and its stored form.
 *
 * attest_evaluate() reads the previous state and returns the next; the store keeps it as the
 * bytes of boot_state_encode(). The encoding is explicit so that verifiers of different
 * builds (compilers, architectures, struct padding) can share a database:
 *
 *   u8  version (BOOT_STATE_VERSION)      u8  started (0 or 1)
 *   u32 reset_count   u32 restart_count   u64 clock   u64 boot_number   u64 next_entry
 *   replay: u32 banks   u64 entries   u64 violations   u64 other_pcr
 *           sha1[20]   sha256[32]   sha384[48]   sha512[64]
 *
 * integers big-endian, no padding, BOOT_STATE_ENCODED_LEN bytes in all. A new layout gets a
 * new version and the store a migration that re-encodes what it holds.
 */
#ifndef VERIFIER_BOOT_STATE_H
#define VERIFIER_BOOT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/replay.h"

/* Per agent and boot: what the previous trusted-or-not rounds established. Plain data. */
struct boot_state {
	bool started;            /* false: no evidence yet for this agent */
	uint32_t reset_count;
	uint32_t restart_count;
	uint64_t clock;
	uint64_t boot_number;    /* 1 for the first boot seen, +1 on every reset */
	uint64_t next_entry;     /* entries folded into `replay` (the matched prefix) */
	struct replay_state replay;
};

#define BOOT_STATE_VERSION 1u
#define BOOT_STATE_ENCODED_LEN (2u + 4 + 4 + 8 + 8 + 8 + 4 + 8 + 8 + 8 + 20 + 32 + 48 + 64)

/* Writes exactly BOOT_STATE_ENCODED_LEN bytes. */
void boot_state_encode(const struct boot_state *bs, uint8_t out[BOOT_STATE_ENCODED_LEN]);

/*
 * Fills *out from an encoding. -EINVAL (out zeroed) unless buf is exactly
 * BOOT_STATE_ENCODED_LEN bytes of version BOOT_STATE_VERSION, with started 0 or 1 and only
 * known replay banks.
 */
int boot_state_decode(const uint8_t *buf, size_t len, struct boot_state *out);

#endif
