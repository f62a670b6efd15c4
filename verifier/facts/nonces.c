/*
 * nonces.h as a sharded hash table: shard = keyed hash of the agent id, in each shard a chained
 * table of agent records, each with a small array of its challenges (at most
 * NONCES_MAX_OUTSTANDING + NONCES_KEEP_SPENT). Lookups scan that array: it is short, and the
 * agent is known from the URL, so a nonce is found without a global index.
 *
 * The hash is SipHash-2-4 under a random key: agent ids are chosen by whoever enrolls, and a
 * chosen-collision chain would make every lookup in a shard linear.
 */
#include "verifier/facts/nonces.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "proto/limits.h"
#include "proto/siphash.h"

#define NONCES_SHARDS 64u           /* power of two */
#define NONCES_BUCKETS_MIN 16u      /* per shard, power of two; doubles past one agent/bucket */
#define NONCES_SWEEP_SECONDS 60     /* how often a shard drops forgotten entries and agents */
#define NONCES_AGENT_CAP (NONCES_MAX_OUTSTANDING + NONCES_KEEP_SPENT)

struct nonce_entry {
	int64_t expires_at;
	uint64_t log_offset;
	uint32_t mask[LIMIT_PCR_BANKS];
	uint16_t alg[LIMIT_PCR_BANKS];
	uint8_t nbanks;
	uint8_t nonce_len;
	bool used;
	bool given; /* issued with a verdict (nonces_add_given) */
	uint8_t nonce[LIMIT_NONCE_BYTES];
};

struct nonce_agent {
	struct nonce_agent *next;
	uint64_t hash;
	struct nonce_entry *e;
	unsigned n, cap;
	char id[]; /* NUL-terminated */
};

struct nonce_shard {
	pthread_mutex_t lock;
	struct nonce_agent **bucket;
	size_t nbuckets, nagents, nentries;
	int64_t last_sweep;
} __attribute__((aligned(64))); /* one cache line per lock: shards do not share lines */

struct nonces {
	uint64_t key[2]; /* SipHash key: agent ids come from the network */
	struct nonce_shard shard[NONCES_SHARDS];
};

/* Table ------------------------------------------------------------------------------------ */

struct nonces *nonces_new(void)
{
	struct nonces *ns = calloc(1, sizeof(*ns));

	if (!ns)
		return NULL;
	if (RAND_bytes((unsigned char *)ns->key, sizeof(ns->key)) != 1) {
		free(ns);
		return NULL;
	}
	for (unsigned i = 0; i < NONCES_SHARDS; i++) {
		struct nonce_shard *s = &ns->shard[i];

		pthread_mutex_init(&s->lock, NULL);
		s->bucket = calloc(NONCES_BUCKETS_MIN, sizeof(*s->bucket));
		if (!s->bucket) {
			nonces_free(ns);
			return NULL;
		}
		s->nbuckets = NONCES_BUCKETS_MIN;
	}
	return ns;
}

static void agent_free(struct nonce_agent *a)
{
	if (!a)
		return;
	if (a->e) {
		OPENSSL_cleanse(a->e, a->cap * sizeof(*a->e));
		free(a->e);
	}
	free(a);
}

void nonces_free(struct nonces *ns)
{
	if (!ns)
		return;
	for (unsigned i = 0; i < NONCES_SHARDS; i++) {
		struct nonce_shard *s = &ns->shard[i];

		for (size_t b = 0; s->bucket && b < s->nbuckets; b++) {
			struct nonce_agent *a = s->bucket[b], *next;

			for (; a; a = next) {
				next = a->next;
				agent_free(a);
			}
		}
		free(s->bucket);
		pthread_mutex_destroy(&s->lock);
	}
	OPENSSL_cleanse(ns, sizeof(*ns));
	free(ns);
}

/* Drops entry i (order is not kept: lookups scan). Caller holds the shard lock. */
static void entry_drop(struct nonce_shard *s, struct nonce_agent *a, unsigned i)
{
	a->n--;
	if (i != a->n)
		a->e[i] = a->e[a->n];
	OPENSSL_cleanse(&a->e[a->n], sizeof(a->e[a->n]));
	s->nentries--;
}

/* Forgets what is NONCES_KEEP_SECONDS past its expiry. */
static void agent_prune(struct nonce_shard *s, struct nonce_agent *a, int64_t now)
{
	for (unsigned i = 0; i < a->n;) {
		if (a->e[i].expires_at < now - NONCES_KEEP_SECONDS)
			entry_drop(s, a, i);
		else
			i++;
	}
}

/* Every so often: drop forgotten entries and agents with none left. */
static void shard_sweep(struct nonce_shard *s, int64_t now)
{
	if (now - s->last_sweep < NONCES_SWEEP_SECONDS)
		return;
	s->last_sweep = now;
	for (size_t b = 0; b < s->nbuckets; b++) {
		struct nonce_agent **pp = &s->bucket[b];

		while (*pp) {
			struct nonce_agent *a = *pp;

			agent_prune(s, a, now);
			if (a->n == 0) {
				*pp = a->next;
				agent_free(a);
				s->nagents--;
			} else {
				pp = &a->next;
			}
		}
	}
}

static struct nonce_agent *agent_find(struct nonce_shard *s, uint64_t h, const char *id)
{
	struct nonce_agent *a = s->bucket[(h >> 8) & (s->nbuckets - 1)];

	for (; a; a = a->next)
		if (a->hash == h && !strcmp(a->id, id))
			return a;
	return NULL;
}

/* Doubles the bucket array; on allocation failure the table just stays denser. */
static void shard_grow(struct nonce_shard *s)
{
	size_t n = s->nbuckets * 2;
	struct nonce_agent **nb = calloc(n, sizeof(*nb));

	if (!nb)
		return;
	for (size_t b = 0; b < s->nbuckets; b++) {
		struct nonce_agent *a = s->bucket[b], *next;

		for (; a; a = next) {
			size_t i = (a->hash >> 8) & (n - 1);

			next = a->next;
			a->next = nb[i];
			nb[i] = a;
		}
	}
	free(s->bucket);
	s->bucket = nb;
	s->nbuckets = n;
}

static struct nonce_agent *agent_add(struct nonce_shard *s, uint64_t h, const char *id)
{
	size_t len = strlen(id);
	struct nonce_agent *a;
	size_t i;

	if (len > LIMIT_AGENT_ID)
		return NULL;
	a = calloc(1, sizeof(*a) + len + 1);
	if (!a)
		return NULL;
	memcpy(a->id, id, len + 1);
	a->hash = h;
	if (s->nagents >= s->nbuckets)
		shard_grow(s);
	i = (h >> 8) & (s->nbuckets - 1);
	a->next = s->bucket[i];
	s->bucket[i] = a;
	s->nagents++;
	return a;
}

static struct nonce_shard *shard_of(struct nonces *ns, const char *agent, uint64_t *h)
{
	*h = siphash24(ns->key, agent, strlen(agent));
	return &ns->shard[*h & (NONCES_SHARDS - 1)];
}

static int add(struct nonces *ns, const char *agent, const struct challenge *c, int64_t now,
	       bool given)
{
	struct nonce_shard *s;
	struct nonce_agent *a;
	struct nonce_entry *e;
	unsigned outstanding = 0;
	int victim = -1; /* the spent entry that expires first */
	uint64_t h;
	int ret = 0;

	if (c->nonce_len == 0 || c->nonce_len > LIMIT_NONCE_BYTES ||
	    c->selection.nbanks > LIMIT_PCR_BANKS)
		return -EINVAL;
	s = shard_of(ns, agent, &h);
	pthread_mutex_lock(&s->lock);
	shard_sweep(s, now);
	a = agent_find(s, h, agent);
	if (!a && !(a = agent_add(s, h, agent))) {
		ret = -ENOMEM;
		goto out;
	}
	agent_prune(s, a, now);
	/* A verdict's challenge replaces the one the previous verdict gave, if still unused. */
	for (unsigned i = 0; given && i < a->n;) {
		if (a->e[i].given && !a->e[i].used)
			entry_drop(s, a, i);
		else
			i++;
	}
	for (unsigned i = 0; i < a->n; i++) {
		if (!a->e[i].used && a->e[i].expires_at >= now)
			outstanding++;
		else if (victim < 0 || a->e[i].expires_at < a->e[victim].expires_at)
			victim = (int)i;
	}
	if (outstanding >= NONCES_MAX_OUTSTANDING) {
		ret = -EBUSY;
		goto out;
	}
	if (a->n < NONCES_AGENT_CAP) {
		if (a->n == a->cap) {
			unsigned ncap = a->cap ? a->cap * 2 : 2;
			struct nonce_entry *ne;

			if (ncap > NONCES_AGENT_CAP)
				ncap = NONCES_AGENT_CAP;
			/* Not realloc: the old array holds nonces and is wiped before it is freed. */
			ne = calloc(ncap, sizeof(*ne));
			if (!ne) {
				ret = -ENOMEM;
				goto out;
			}
			if (a->e) {
				memcpy(ne, a->e, a->n * sizeof(*ne));
				OPENSSL_cleanse(a->e, a->cap * sizeof(*a->e));
				free(a->e);
			}
			a->e = ne;
			a->cap = ncap;
		}
		e = &a->e[a->n++];
		s->nentries++;
	} else {
		/* Full and outstanding < MAX: a spent entry exists; it is forgotten early. */
		e = &a->e[victim];
	}
	memset(e, 0, sizeof(*e));
	memcpy(e->nonce, c->nonce, c->nonce_len);
	e->nonce_len = (uint8_t)c->nonce_len;
	e->expires_at = c->expires_at;
	e->given = given;
	e->log_offset = c->log_offset;
	e->nbanks = (uint8_t)c->selection.nbanks;
	for (unsigned i = 0; i < c->selection.nbanks; i++) {
		e->alg[i] = c->selection.bank[i].alg;
		e->mask[i] = c->selection.bank[i].mask;
	}
out:
	if (a && a->n == 0 && ret) {
		/* A record made for this call and left empty: drop it now, not at the next sweep. */
		struct nonce_agent **pp = &s->bucket[(h >> 8) & (s->nbuckets - 1)];

		while (*pp && *pp != a)
			pp = &(*pp)->next;
		if (*pp) {
			*pp = a->next;
			agent_free(a);
			s->nagents--;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int nonces_add(struct nonces *ns, const char *agent, const struct challenge *c, int64_t now)
{
	return add(ns, agent, c, now, false);
}

int nonces_add_given(struct nonces *ns, const char *agent, const struct challenge *c, int64_t now)
{
	return add(ns, agent, c, now, true);
}

int nonces_consume(struct nonces *ns, const char *agent, const uint8_t *nonce, size_t nonce_len,
		   int64_t now, struct challenge *out)
{
	struct nonce_shard *s;
	struct nonce_agent *a;
	struct nonce_entry *e = NULL;
	uint64_t h;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (nonce_len == 0 || nonce_len > LIMIT_NONCE_BYTES)
		return -ENOENT;
	s = shard_of(ns, agent, &h);
	pthread_mutex_lock(&s->lock);
	shard_sweep(s, now);
	a = agent_find(s, h, agent);
	for (unsigned i = 0; a && i < a->n; i++) {
		if (a->e[i].nonce_len == nonce_len &&
		    CRYPTO_memcmp(a->e[i].nonce, nonce, nonce_len) == 0) {
			e = &a->e[i];
			break;
		}
	}
	/* Another agent's nonce is as unknown to this agent as a made-up one. */
	if (!e) {
		ret = -ENOENT;
		goto out;
	}
	if (e->used) {
		ret = -EALREADY;
		goto out;
	}
	if (e->expires_at < now) {
		ret = -ETIMEDOUT;
		goto out;
	}
	e->used = true;
	memcpy(out->nonce, e->nonce, e->nonce_len);
	out->nonce_len = e->nonce_len;
	out->expires_at = e->expires_at;
	out->log_offset = e->log_offset;
	out->selection.nbanks = e->nbanks;
	for (unsigned i = 0; i < e->nbanks; i++) {
		out->selection.bank[i].alg = e->alg[i];
		out->selection.bank[i].mask = e->mask[i];
	}
out:
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static unsigned outstanding(struct nonces *ns, const char *agent, int64_t now, bool asked_only)
{
	struct nonce_shard *s;
	struct nonce_agent *a;
	unsigned n = 0;
	uint64_t h;

	s = shard_of(ns, agent, &h);
	pthread_mutex_lock(&s->lock);
	a = agent_find(s, h, agent);
	for (unsigned i = 0; a && i < a->n; i++)
		if (!a->e[i].used && a->e[i].expires_at >= now && !(asked_only && a->e[i].given))
			n++;
	pthread_mutex_unlock(&s->lock);
	return n;
}

unsigned nonces_outstanding(struct nonces *ns, const char *agent, int64_t now)
{
	return outstanding(ns, agent, now, false);
}

unsigned nonces_outstanding_asked(struct nonces *ns, const char *agent, int64_t now)
{
	return outstanding(ns, agent, now, true);
}

size_t nonces_count(struct nonces *ns)
{
	size_t n = 0;

	for (unsigned i = 0; i < NONCES_SHARDS; i++) {
		pthread_mutex_lock(&ns->shard[i].lock);
		n += ns->shard[i].nentries;
		pthread_mutex_unlock(&ns->shard[i].lock);
	}
	return n;
}
