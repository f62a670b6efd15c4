/*
 * cluster: what several verifiers on one store share besides the database: the key that makes
 * a challenge one verifier issued acceptable to the others (--cluster-key FILE, the same file
 * on every verifier).
 *
 * A challenge's nonce says itself whom and until when it was issued to, under a MAC:
 *   nonce = 0x01 | expires_at (8 bytes, big-endian) | 7 random bytes | tag (16 bytes)
 *   tag   = HMAC-SHA256(key, "attest cluster challenge v1" 0x00 agent_id 0x00 nonce[0..15])[0..15]
 * 32 bytes in all, what the TPM quotes as qualifyingData. Any verifier with the key checks it
 * without having seen it; that it is answered only once is the store's part: the round that
 * answers it records it as spent in its own transaction (store.h, struct store_round), so a
 * second answer, on any verifier, is refused as nonce_reused. Why a MAC and not a row per
 * challenge: a challenge then costs the database nothing, and the evidence nothing more than
 * the round's commit, which it makes anyway (bench/results/capacity.md).
 *
 * The verifiers' clocks must agree to within a few seconds (NTP): a verifier judges another's
 * expiry time by its own clock.
 *
 * Ownership: cluster_load() returns a key the caller frees with cluster_free() (NULL-safe;
 * the key is wiped). Every other function may be called from any number of threads.
 */
#ifndef VERIFIER_CLUSTER_H
#define VERIFIER_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#define CLUSTER_NONCE_LEN 32u
#define CLUSTER_KEY_MIN 32u   /* bytes of the key file, its trailing newline not counted */
#define CLUSTER_KEY_MAX 4096u

struct cluster;

/*
 * Reads the key file: at least CLUSTER_KEY_MIN bytes (e.g. `openssl rand -hex 32`), used as
 * they are. -EINVAL (logged) for a short or long file, -errno if it cannot be read.
 */
int cluster_load(const char *path, struct cluster **out);
void cluster_free(struct cluster *c);

/* A nonce for `agent` valid until expires_at. 0, or -EIO (no randomness, MAC failure). */
int cluster_nonce_make(const struct cluster *c, const char *agent, int64_t expires_at,
		       uint8_t out[CLUSTER_NONCE_LEN]);

/*
 * 0 if nonce is one a verifier with this key issued to `agent` and expires_at >= now
 * (*expires_at filled); -ENOENT if it is not (another agent's, another key's, made up,
 * another length); -ETIMEDOUT if it was but has expired. Compares in constant time.
 */
int cluster_nonce_check(const struct cluster *c, const char *agent, const uint8_t *nonce,
			size_t len, int64_t now, int64_t *expires_at);

#endif
