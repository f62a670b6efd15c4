/*
 * agentcache.h as a hash table in shards: shard and bucket from FNV-1a of the id mixed with a
 * random seed. Ids are chosen at enrollment, which needs a valid EK certificate; chains stay
 * short because buckets double with the entries.
 */
#include "verifier/facts/agentcache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "proto/limits.h"

#define AGENTCACHE_SHARDS 32u     /* power of two */
#define AGENTCACHE_BUCKETS_MIN 16u

struct ac_entry {
	struct ac_entry *next;
	uint64_t hash;
	EVP_PKEY *ak;
	uint8_t name[LIMIT_TPM_NAME];
	size_t name_len;
	char id[]; /* NUL-terminated */
};

struct ac_shard {
	pthread_mutex_t lock;
	struct ac_entry **bucket;
	size_t nbuckets, n;
} __attribute__((aligned(64)));

struct agentcache {
	uint64_t seed;
	uint64_t generation; /* atomic */
	struct ac_shard shard[AGENTCACHE_SHARDS];
};

static uint64_t ac_hash(const struct agentcache *c, const char *id)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ c->seed;

	for (; *id; id++) {
		h ^= (unsigned char)*id;
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

struct agentcache *agentcache_new(void)
{
	struct agentcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (RAND_bytes((unsigned char *)&c->seed, sizeof(c->seed)) != 1) {
		free(c);
		return NULL;
	}
	for (unsigned i = 0; i < AGENTCACHE_SHARDS; i++) {
		pthread_mutex_init(&c->shard[i].lock, NULL);
		c->shard[i].bucket = calloc(AGENTCACHE_BUCKETS_MIN, sizeof(struct ac_entry *));
		if (!c->shard[i].bucket) {
			agentcache_free(c);
			return NULL;
		}
		c->shard[i].nbuckets = AGENTCACHE_BUCKETS_MIN;
	}
	return c;
}

static void entry_free(struct ac_entry *e)
{
	if (!e)
		return;
	EVP_PKEY_free(e->ak);
	free(e);
}

/* Empties a shard; caller holds its lock (or owns the cache). */
static void shard_clear(struct ac_shard *s)
{
	for (size_t b = 0; s->bucket && b < s->nbuckets; b++) {
		struct ac_entry *e = s->bucket[b], *next;

		for (; e; e = next) {
			next = e->next;
			entry_free(e);
		}
		s->bucket[b] = NULL;
	}
	s->n = 0;
}

void agentcache_free(struct agentcache *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < AGENTCACHE_SHARDS; i++) {
		shard_clear(&c->shard[i]);
		free(c->shard[i].bucket);
		pthread_mutex_destroy(&c->shard[i].lock);
	}
	free(c);
}

uint64_t agentcache_generation(struct agentcache *c)
{
	return __atomic_load_n(&c->generation, __ATOMIC_ACQUIRE);
}

static struct ac_shard *shard_of(struct agentcache *c, uint64_t h)
{
	return &c->shard[h & (AGENTCACHE_SHARDS - 1)];
}

static struct ac_entry **slot_of(struct ac_shard *s, uint64_t h, const char *id)
{
	struct ac_entry **pp = &s->bucket[(h >> 8) & (s->nbuckets - 1)];

	while (*pp && !((*pp)->hash == h && !strcmp((*pp)->id, id)))
		pp = &(*pp)->next;
	return pp;
}

bool agentcache_get(struct agentcache *c, const char *id, const uint8_t *ak_name,
		    size_t ak_name_len, EVP_PKEY **ak)
{
	uint64_t h = ac_hash(c, id);
	struct ac_shard *s = shard_of(c, h);
	struct ac_entry *e;
	bool hit = false;

	*ak = NULL;
	pthread_mutex_lock(&s->lock);
	e = *slot_of(s, h, id);
	if (e && (!ak_name || (e->name_len == ak_name_len && !memcmp(e->name, ak_name, ak_name_len))) &&
	    EVP_PKEY_up_ref(e->ak) == 1) {
		*ak = e->ak;
		hit = true;
	}
	pthread_mutex_unlock(&s->lock);
	return hit;
}

/* Doubles the buckets; on allocation failure the table just stays denser. */
static void shard_grow(struct ac_shard *s)
{
	size_t n = s->nbuckets * 2;
	struct ac_entry **nb = calloc(n, sizeof(*nb));

	if (!nb)
		return;
	for (size_t b = 0; b < s->nbuckets; b++) {
		struct ac_entry *e = s->bucket[b], *next;

		for (; e; e = next) {
			size_t i = (e->hash >> 8) & (n - 1);

			next = e->next;
			e->next = nb[i];
			nb[i] = e;
		}
	}
	free(s->bucket);
	s->bucket = nb;
	s->nbuckets = n;
}

void agentcache_put(struct agentcache *c, uint64_t generation, const char *id, EVP_PKEY *ak,
		    const uint8_t *ak_name, size_t ak_name_len)
{
	uint64_t h = ac_hash(c, id);
	struct ac_shard *s = shard_of(c, h);
	size_t len = strlen(id);
	struct ac_entry *e, **pp;

	if (len > LIMIT_AGENT_ID || ak_name_len > LIMIT_TPM_NAME)
		return;
	e = calloc(1, sizeof(*e) + len + 1);
	if (!e)
		return; /* a cache: the next round reads the store again */
	if (EVP_PKEY_up_ref(ak) != 1) {
		free(e);
		return;
	}
	e->ak = ak;
	e->hash = h;
	memcpy(e->id, id, len + 1);
	memcpy(e->name, ak_name, ak_name_len);
	e->name_len = ak_name_len;
	pthread_mutex_lock(&s->lock);
	/* Checked under the shard lock: an invalidation bumps the generation before it takes
	 * the lock, so either it sees this entry and drops it, or this sees the new generation. */
	if (agentcache_generation(c) != generation) {
		pthread_mutex_unlock(&s->lock);
		entry_free(e);
		return;
	}
	pp = slot_of(s, h, id);
	if (*pp) {
		/* The store names another AK for the id now: the new one replaces it. */
		struct ac_entry *old = *pp;

		e->next = old->next;
		*pp = e;
		pthread_mutex_unlock(&s->lock);
		entry_free(old);
		return;
	}
	if (s->n >= s->nbuckets) {
		shard_grow(s);
		pp = slot_of(s, h, id);
	}
	*pp = e;
	s->n++;
	pthread_mutex_unlock(&s->lock);
}

void agentcache_invalidate(struct agentcache *c, const char *id)
{
	__atomic_add_fetch(&c->generation, 1, __ATOMIC_ACQ_REL);
	if (!id) {
		for (unsigned i = 0; i < AGENTCACHE_SHARDS; i++) {
			pthread_mutex_lock(&c->shard[i].lock);
			shard_clear(&c->shard[i]);
			pthread_mutex_unlock(&c->shard[i].lock);
		}
		return;
	}
	{
		uint64_t h = ac_hash(c, id);
		struct ac_shard *s = shard_of(c, h);
		struct ac_entry **pp, *e;

		pthread_mutex_lock(&s->lock);
		pp = slot_of(s, h, id);
		if ((e = *pp)) {
			*pp = e->next;
			entry_free(e);
			s->n--;
		}
		pthread_mutex_unlock(&s->lock);
	}
}

size_t agentcache_count(struct agentcache *c)
{
	size_t n = 0;

	for (unsigned i = 0; i < AGENTCACHE_SHARDS; i++) {
		pthread_mutex_lock(&c->shard[i].lock);
		n += c->shard[i].n;
		pthread_mutex_unlock(&c->shard[i].lock);
	}
	return n;
}
