/*
 * agentcache: what the evidence path needs of an active agent (its policy name and its AK as
 * a ready EVP_PKEY), in memory. Without it every round read the agent's row with its blobs
 * from the store and rebuilt the AK (tpmkey_parse_public + tpmkey_to_evp: OpenSSL's decoder
 * lookups cost more than the signature check).
 *
 * Only active agents are cached: an active agent's AK never changes (re-enrollment of an
 * active id with another AK is refused) and it never becomes pending again, so the one field
 * that changes is its policy name: whoever changes it calls agentcache_invalidate() after the
 * store has it. A fill that raced with an invalidation is dropped (a generation count), so a
 * stale policy name cannot be cached.
 *
 * Threads: every function may be called from any number of threads (sharded, one mutex per
 * shard). Ownership: agentcache_get() hands out a new reference to the key (EVP_PKEY_free()
 * it); agentcache_put() takes its own reference. agentcache_free() is NULL-safe.
 */
#ifndef VERIFIER_AGENTCACHE_H
#define VERIFIER_AGENTCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "verifier/store.h"

struct agentcache;

struct agentcache *agentcache_new(void);
void agentcache_free(struct agentcache *c);

/* The generation to pass to agentcache_put(): read it before reading the store. */
uint64_t agentcache_generation(struct agentcache *c);

/* true and *ak (a new reference) and policy filled if `id` is cached. */
bool agentcache_get(struct agentcache *c, const char *id, EVP_PKEY **ak,
		    char policy[LIMIT_POLICY_NAME + 1]);

/* Caches an active agent unless an invalidation happened since `generation`. */
void agentcache_put(struct agentcache *c, uint64_t generation, const char *id, EVP_PKEY *ak,
		    const char *policy);

/* Forgets `id` (its policy changed); NULL forgets everything. */
void agentcache_invalidate(struct agentcache *c, const char *id);

/* Entries held, for tests. */
size_t agentcache_count(struct agentcache *c);

#endif
