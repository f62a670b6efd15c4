/*
 * agentcache: hits hand out a reference, invalidation drops an entry, and a fill that raced
 * with an invalidation (older generation) is not cached.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "verifier/agentcache.h"
#include "tests/unit/check.h"

int main(void)
{
	struct agentcache *c = agentcache_new();
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"), *got = NULL;
	char policy[LIMIT_POLICY_NAME + 1];
	char id[32];
	uint64_t g;
	int hits = 0;

	CASE_BEGIN("hits, stale fills, invalidation, 3000 agents");
	CHECK(c && k, "new");
	if (!c || !k)
		return check_finish();
	CHECK(!agentcache_get(c, "web-01", &got, policy) && !got, "miss");
	g = agentcache_generation(c);
	agentcache_put(c, g, "web-01", k, "strict");
	CHECK(agentcache_get(c, "web-01", &got, policy) && got == k && !strcmp(policy, "strict"),
	      "hit");
	EVP_PKEY_free(got);
	agentcache_invalidate(c, "web-01");
	CHECK(!agentcache_get(c, "web-01", &got, policy), "invalidated");
	agentcache_put(c, g, "web-01", k, "old");
	CHECK(!agentcache_get(c, "web-01", &got, policy), "stale fill dropped");
	for (int i = 0; i < 3000; i++) {
		snprintf(id, sizeof(id), "agent-%05d", i);
		agentcache_put(c, agentcache_generation(c), id, k, "");
	}
	for (int i = 0; i < 3000; i++) {
		snprintf(id, sizeof(id), "agent-%05d", i);
		if (agentcache_get(c, id, &got, policy)) {
			hits++;
			EVP_PKEY_free(got);
		}
	}
	CHECK(hits == 3000 && agentcache_count(c) == 3000, "3000 agents (%d)", hits);
	agentcache_invalidate(c, NULL);
	CHECK(agentcache_count(c) == 0, "all forgotten");
	agentcache_free(c);
	agentcache_free(NULL);
	EVP_PKEY_free(k);
	return check_finish();
}
