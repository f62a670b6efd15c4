/*
 * agentcache: the AK of an active agent as a ready EVP_PKEY, in memory. Without it every round
 * read the agent's row with its blobs from the store and rebuilt the AK (tpmkey_parse_public
 * + tpmkey_to_evp: OpenSSL's decoder lookups cost more than the signature check).
 *
 * An entry is the AK of an agent id together with the AK's name (its digest, store_agent's
 * ak_name). A round looks it up with the name the store holds for the agent now
 * (store_round_context(), read every round anyway): an entry whose name differs is not used.
 * So a cache can never outlive what the store says, also when another verifier on the same
 * store changed the agent (deleted it and had it enrolled again with another AK). What else a
 * round needs of the agent (its state, its policy) comes from the store every round.
 *
 * A fill that raced with an invalidation is dropped (a generation count): invalidation stays
 * useful for an agent this verifier deleted or changed itself.
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

#include "verifier/store/store.h"

struct agentcache;

struct agentcache *agentcache_new(void);
void agentcache_free(struct agentcache *c);

/* The generation to pass to agentcache_put(): read it before reading the store. */
uint64_t agentcache_generation(struct agentcache *c);

/*
 * true and *ak (a new reference) if `id` is cached with the AK named ak_name (ak_name NULL:
 * whatever its name, for callers that need only to know it is an active agent).
 */
bool agentcache_get(struct agentcache *c, const char *id, const uint8_t *ak_name,
		    size_t ak_name_len, EVP_PKEY **ak);

/* Caches an active agent's AK and its name unless an invalidation happened since `generation`;
 * replaces an entry of the same id with another name. */
void agentcache_put(struct agentcache *c, uint64_t generation, const char *id, EVP_PKEY *ak,
		    const uint8_t *ak_name, size_t ak_name_len);

/* Forgets `id`; NULL forgets everything. */
void agentcache_invalidate(struct agentcache *c, const char *id);

/* Entries held, for tests. */
size_t agentcache_count(struct agentcache *c);

#endif
