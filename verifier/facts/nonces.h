/*
 * nonces: the outstanding challenges, in memory. A challenge lives seconds; it needs no
 * durability: after a verifier restart the table is empty, the agent's evidence is refused as
 * nonce_unknown and attestd asks for a new challenge. Keeping them out of the store saves two
 * commits (two fsyncs) per attestation.
 *
 * Per agent the table holds at most NONCES_MAX_OUTSTANDING unused, unexpired challenges (the
 * rate limit) and, next to them, up to NONCES_KEEP_SPENT spent ones (consumed, or expired
 * unused), each until NONCES_KEEP_SECONDS past its expiry. The spent ones are what tells
 * nonce_reused and nonce_expired from nonce_unknown; when an agent has more spent challenges
 * than that, the oldest are forgotten early and a replay of one is refused as unknown (still
 * refused: a nonce is accepted at most once because it is consumed under the shard's lock and
 * never re-added). The cap bounds memory per agent (about 3 KiB) whatever the round rate.
 *
 * Threads: every function may be called from any number of threads. The table is sharded by
 * a keyed hash of the agent id; each shard has its own mutex; no call holds two.
 *
 * Returns: 0 or -errno as listed per function.
 * Ownership: nonces_new() returns a table the caller frees with nonces_free() (NULL-safe);
 * nonce bytes are wiped when an entry is dropped.
 */
#ifndef VERIFIER_NONCES_H
#define VERIFIER_NONCES_H

#include <stddef.h>
#include <stdint.h>

#include "proto/evidence.h"

#define NONCES_MAX_OUTSTANDING 10u /* unused, unexpired challenges per agent */
#define NONCES_KEEP_SPENT 16u      /* spent challenges remembered per agent, newest kept */
#define NONCES_KEEP_SECONDS 3600   /* a spent challenge is forgotten this long after expiry */

struct nonces;

struct nonces *nonces_new(void);
void nonces_free(struct nonces *ns);

/*
 * Records a fresh challenge for `agent` (c->nonce_len 1..LIMIT_NONCE_BYTES). -EBUSY if the
 * agent has NONCES_MAX_OUTSTANDING unused, unexpired challenges; -EINVAL bad length; -ENOMEM.
 */
int nonces_add(struct nonces *ns, const char *agent, const struct challenge *c, int64_t now);

/*
 * As nonces_add(), for the challenge a verdict carries (the agent's next round): it replaces
 * the agent's previous such challenge if that one is still unused (forgotten: an answer to it
 * is -ENOENT here; with a cluster key round.c may still take it on its MAC, once, the store
 * enforcing single use), so that an agent which asks for its challenges instead leaves at most
 * one of these outstanding, not one per round up to the rate limit.
 */
int nonces_add_given(struct nonces *ns, const char *agent, const struct challenge *c, int64_t now);

/*
 * Consumes a challenge: marks it used if it was issued to `agent`, is unused and unexpired
 * (expires_at >= now), and fills *out with what it asked for. -ENOENT unknown nonce or another
 * agent's, -EALREADY used before, -ETIMEDOUT expired (left as it is). *out is zeroed on error.
 */
int nonces_consume(struct nonces *ns, const char *agent, const uint8_t *nonce, size_t nonce_len,
		   int64_t now, struct challenge *out);

/* Unused, unexpired challenges of `agent` now (0 for an agent never challenged). */
unsigned nonces_outstanding(struct nonces *ns, const char *agent, int64_t now);

/* The same, leaving out the challenges verdicts carried: those the agent asked for. */
unsigned nonces_outstanding_asked(struct nonces *ns, const char *agent, int64_t now);

/* Entries held (outstanding and spent), for tests and memory accounting. */
size_t nonces_count(struct nonces *ns);

#endif
