/*
 * agentcache: hits hand out a reference, only for the AK name asked for; a fill with another
 * name replaces the entry; invalidation drops an entry, and a fill that raced with an
 * invalidation (older generation) is not cached.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "verifier/facts/agentcache.h"
#include "tests/unit/check.h"

/* Hits, fills that arrive after an invalidation, invalidation, and 3000 agents. */
static void test_hits_stale_fills_invalidation_3000_agents(void)
{
	struct agentcache *c = agentcache_new();
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"), *got = NULL;
	static const uint8_t n1[34] = { 0, 11 }, n2[34] = { 0, 22 };
	char id[32];
	uint64_t g;
	int hits = 0;

	CHECK(c && k, "new");
	if (!c || !k) {
		agentcache_free(c);
		EVP_PKEY_free(k);
		return;
	}
	CHECK(!agentcache_get(c, "web-01", n1, sizeof(n1), &got) && !got, "miss");
	g = agentcache_generation(c);
	agentcache_put(c, g, "web-01", k, n1, sizeof(n1));
	CHECK(agentcache_get(c, "web-01", n1, sizeof(n1), &got) && got == k, "hit");
	EVP_PKEY_free(got);
	CHECK(agentcache_get(c, "web-01", NULL, 0, &got) && got == k, "hit whatever the name");
	EVP_PKEY_free(got);
	CHECK(!agentcache_get(c, "web-01", n2, sizeof(n2), &got) && !got,
	      "the store names another AK: no hit");
	CHECK(!agentcache_get(c, "web-01", n1, sizeof(n1) - 1, &got), "a name of another length");
	agentcache_put(c, g, "web-01", k, n2, sizeof(n2));
	CHECK(agentcache_get(c, "web-01", n2, sizeof(n2), &got) && agentcache_count(c) == 1,
	      "filled again with the new name: replaced, one entry");
	EVP_PKEY_free(got);
	CHECK(!agentcache_get(c, "web-01", n1, sizeof(n1), &got), "the old name is gone");
	agentcache_invalidate(c, "web-01");
	CHECK(!agentcache_get(c, "web-01", n2, sizeof(n2), &got), "invalidated");
	agentcache_put(c, g, "web-01", k, n2, sizeof(n2));
	CHECK(!agentcache_get(c, "web-01", NULL, 0, &got), "stale fill dropped");
	for (int i = 0; i < 3000; i++) {
		snprintf(id, sizeof(id), "agent-%05d", i);
		agentcache_put(c, agentcache_generation(c), id, k, n1, sizeof(n1));
	}
	for (int i = 0; i < 3000; i++) {
		snprintf(id, sizeof(id), "agent-%05d", i);
		if (agentcache_get(c, id, n1, sizeof(n1), &got)) {
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
}

int main(void)
{
	CASE(test_hits_stale_fills_invalidation_3000_agents);
	return check_finish();
}
