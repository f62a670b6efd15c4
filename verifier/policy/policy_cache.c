/* The policy cache; the contract is in policy_cache.h. */
#include "verifier/policy/policy_cache.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "verifier/policy/policy.h"

void policy_cache_init(struct policy_cache *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
}

void policy_cache_release(struct policy_cache *c)
{
	for (unsigned i = 0; i < POLICY_CACHE_SLOTS; i++) {
		policy_unref(c->slot[i].policy);
		c->slot[i].policy = NULL;
	}
	pthread_mutex_destroy(&c->lock);
}

int policy_cache_get(struct policy_cache *c, struct store *st, const char *name,
		     struct policy **out)
{
	int64_t version = 0;
	int ret;

	*out = NULL;
	if (!name || !name[0])
		name = POLICY_DEFAULT_NAME;
	/* The version alone first: every evidence asks, and the JSON may be 100 MB. */
	ret = store_policy_version(st, name, &version);
	if (ret && ret != -ENOENT)
		return ret;
	return policy_cache_get_version(c, st, name, ret ? 0 : version, out);
}

int policy_cache_get_version(struct policy_cache *c, struct store *st, const char *name,
			     int64_t version, struct policy **out)
{
	struct policy_slot *free_slot = NULL, *same_name = NULL;
	char err[256] = "";
	char *json = NULL;
	struct policy *p;
	int ret = 0;

	*out = NULL;
	if (!name || !name[0])
		name = POLICY_DEFAULT_NAME;
	if (version <= 0)
		return strcmp(name, POLICY_DEFAULT_NAME) ? -ENOENT : 0; /* nothing to judge by */
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < POLICY_CACHE_SLOTS; i++) {
		struct policy_slot *s = &c->slot[i];

		if (s->policy && s->version == version && !strcmp(s->name, name)) {
			*out = policy_ref(s->policy);
			goto out;
		}
		if (!s->policy && !free_slot)
			free_slot = s;
		if (s->policy && !same_name && !strcmp(s->name, name))
			same_name = s;
	}
	/* Another version of the policy is what the new one replaces. */
	if (same_name)
		free_slot = same_name;
	/* A miss: load that version (loading holds the lock: one load per version, not one per
	 * round waiting for it). */
	ret = store_policy_get_version(st, name, version, &json);
	if (ret)
		goto out;
	p = policy_load(json, strlen(json), err, sizeof(err));
	if (!p) {
		log_error("policy: stored policy \"%s\" version %" PRId64 " does not load: %s", name,
			  version, err);
		ret = -EINVAL;
		goto out;
	}
	if (!free_slot)
		free_slot = &c->slot[0]; /* full: evict the first slot */
	/* Rounds holding the evicted policy keep their reference. */
	policy_unref(free_slot->policy);
	free_slot->policy = NULL;
	snprintf(free_slot->name, sizeof(free_slot->name), "%s", name);
	free_slot->version = version;
	free_slot->policy = p;
	*out = policy_ref(p);
out:
	pthread_mutex_unlock(&c->lock);
	free(json);
	return ret;
}

void policy_cache_invalidate(struct policy_cache *c, const char *name)
{
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < POLICY_CACHE_SLOTS; i++) {
		struct policy_slot *s = &c->slot[i];

		if (s->policy && !strcmp(s->name, name)) {
			policy_unref(s->policy);
			s->policy = NULL;
		}
	}
	pthread_mutex_unlock(&c->lock);
}
