/*
 * policy_cache: the loaded policies agents are judged by, shared by every request.
 *
 * Every evidence round asks for its agent's policy; a policy can be 100 MB of JSON, so loading
 * it once per stored version matters. A slot is a (name, version): the round asks for the
 * version the store names now (store_round_context(), which reads it with the rest of the
 * round, so a policy changed through another verifier on the same store is used from the next
 * round on), and the policy is loaded only when no slot has it. Thread-safe (own mutex).
 *
 * Ownership: policy_cache_get() returns a new reference (release with policy_unref()); slots
 * evicted or invalidated are dropped by the cache while holders keep theirs.
 */
#ifndef VERIFIER_POLICY_CACHE_H
#define VERIFIER_POLICY_CACHE_H

#include <pthread.h>
#include <stdint.h>

#include "verifier/store/store.h"

struct policy;

/* The policy of agents that name none. When the store has no policy of this name, every entry
 * is allowed (no policy is configured). */
#define POLICY_DEFAULT_NAME "default"
#define POLICY_CACHE_SLOTS 32u

struct policy_slot {
	char name[STORE_AMENDMENT_NAME_MAX + 1]; /* a policy's name, or an amendment's */
	int64_t version;
	struct policy *policy;
};

struct policy_cache {
	pthread_mutex_t lock;
	struct policy_slot slot[POLICY_CACHE_SLOTS];
};

void policy_cache_init(struct policy_cache *c);
void policy_cache_release(struct policy_cache *c);

/*
 * The newest version of policy `name` ("" or NULL: the default). *out NULL means no policy is
 * configured at all (attest_evaluate then allows every entry). -ENOENT if a name other than the
 * default is not in the store, -EINVAL if the stored policy does not load, or the store's error.
 */
int policy_cache_get(struct policy_cache *c, struct store *st, const char *name,
		     struct policy **out);

/*
 * Version `version` of policy `name` ("" or NULL: the default); version 0 means the store has
 * none: *out NULL for the default (nothing configured), -ENOENT for any other name. -EINVAL if
 * the stored policy does not load, or the store's error.
 */
int policy_cache_get_version(struct policy_cache *c, struct store *st, const char *name,
			     int64_t version, struct policy **out);

/* Drops cached versions of `name` (memory: a lookup by version never finds an old one). */
void policy_cache_invalidate(struct policy_cache *c, const char *name);

#endif
