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
 *   judged: u8 known (0 or 1)   u8 policy name length   name[LIMIT_POLICY_NAME] (zero padded)
 *           u64 policy version   u64 amendment version                  (versions 2 and 3)
 *   u8 unconfirmed (0 or 1)                                                 (version 3)
 *
 * integers big-endian, no padding, BOOT_STATE_ENCODED_LEN bytes in all. A new layout gets a
 * new version. Version 1 (without `judged`) still decodes, as a state whose entries were
 * judged by versions nobody recorded: its next round judges the whole boot again, which is
 * what re-encoding it could do at best. Version 2 (without `unconfirmed`) decodes as a
 * confirmed state, which every state of a verifier of that version was.
 */
#ifndef VERIFIER_BOOT_STATE_H
#define VERIFIER_BOOT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/limits.h"
#include "proto/replay.h"

/*
 * Which policy and amendment versions judged the entries a boot state has folded (the agent's
 * amendment: its own approvals; version 0 when it has none). When the agent's current ones
 * differ, that judgement no longer holds: the boot is judged again from entry 0.
 */
struct judged_versions {
	bool known;                          /* false: nobody recorded them (an old state) */
	char policy[LIMIT_POLICY_NAME + 1];  /* the policy's name ("default" spelt out) */
	int64_t policy_version;
	int64_t amendment_version;
};
bool judged_versions_equal(const struct judged_versions *a, const struct judged_versions *b);

/* Per agent and boot: what the previous trusted-or-not rounds established. Plain data. */
struct boot_state {
	bool started;            /* false: no evidence yet for this agent */
	uint32_t reset_count;
	uint32_t restart_count;
	uint64_t clock;
	uint64_t boot_number;    /* 1 for the first boot seen, +1 on every reset */
	uint64_t next_entry;     /* entries folded into `replay` (the matched prefix) */
	struct replay_state replay;
	struct judged_versions judged; /* what judged entries [0, next_entry) */
	/*
	 * `replay` folds entries no quote has matched yet: the agent sent a list larger than one
	 * request in parts ("log_more", proto/evidence.h). A later quote that a prefix of the
	 * continued replay matches confirms them; evidence that continues it without a match, and
	 * without more to come, drops it (the boot is replayed from entry 0 again).
	 */
	bool unconfirmed;
};

#define BOOT_STATE_VERSION 3u
#define BOOT_STATE_ENCODED_LEN_V1 (2u + 4 + 4 + 8 + 8 + 8 + 4 + 8 + 8 + 8 + 20 + 32 + 48 + 64)
#define BOOT_STATE_ENCODED_LEN_V2 (BOOT_STATE_ENCODED_LEN_V1 + 2u + LIMIT_POLICY_NAME + 8 + 8)
#define BOOT_STATE_ENCODED_LEN (BOOT_STATE_ENCODED_LEN_V2 + 1u)

/* Writes exactly BOOT_STATE_ENCODED_LEN bytes. */
void boot_state_encode(const struct boot_state *bs, uint8_t out[BOOT_STATE_ENCODED_LEN]);

/*
 * Fills *out from an encoding. -EINVAL (out zeroed) unless buf is exactly
 * BOOT_STATE_ENCODED_LEN bytes of version BOOT_STATE_VERSION (or BOOT_STATE_ENCODED_LEN_V2
 * bytes of version 2: unconfirmed false; or BOOT_STATE_ENCODED_LEN_V1 bytes of version 1:
 * judged.known false too), with started, known and unconfirmed 0 or 1, only known replay
 * banks, and a policy name of at most LIMIT_POLICY_NAME bytes without NUL.
 */
int boot_state_decode(const uint8_t *buf, size_t len, struct boot_state *out);

#endif
