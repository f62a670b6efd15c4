/*
 * policy_table: the key table under a policy's path and digest_only tables: SipHash-2-4 under a
 * random per-table key, open addressing, keys in one arena. See policy_table.h.
 */
#include "verifier/policy/policy_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "proto/siphash.h"

int ktab_init(struct ktab *t)
{
	memset(t, 0, sizeof(*t));
	dynbuf_init(&t->ents, (size_t)LIMIT_POLICY_ENTRIES * sizeof(struct kentry));
	dynbuf_init(&t->keys, LIMIT_POLICY_BYTES);
	if (RAND_bytes((unsigned char *)t->key, sizeof(t->key)) != 1)
		return -EIO;
	return 0;
}

void ktab_release(struct ktab *t)
{
	free(t->slots);
	dynbuf_release(&t->ents);
	dynbuf_release(&t->keys);
	OPENSSL_cleanse(t->key, sizeof(t->key));
}

static uint64_t ktab_hash(const struct ktab *t, const void *key, size_t len)
{
	return siphash24(t->key, key, len);
}

static void ktab_place(struct kslot *slots, uint32_t mask, uint64_t h, uint32_t idx)
{
	uint32_t i = (uint32_t)h & mask;

	while (slots[i].idx)
		i = (i + 1) & mask;
	slots[i].idx = idx + 1;
	slots[i].tag = (uint32_t)(h >> 32);
}

/* Makes room in the index for n entries in total at a load factor of at most 0.7. */
int ktab_reserve(struct ktab *t, size_t n)
{
	size_t nslots = 16;
	struct kslot *ns;

	if (n > LIMIT_POLICY_ENTRIES)
		return -E2BIG;
	while (nslots * 7 < n * 10)
		nslots *= 2;
	if (t->slots && nslots <= (size_t)t->mask + 1)
		return 0;
	ns = calloc(nslots, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (uint32_t e = 0; e < t->count; e++) {
		const struct kentry *ke = ktab_ent(t, e);

		ktab_place(ns, (uint32_t)(nslots - 1),
			   ktab_hash(t, arena_at(&t->keys, ke->key_off), ke->key_len), e);
	}
	free(t->slots);
	t->slots = ns;
	t->mask = (uint32_t)(nslots - 1);
	return 0;
}

long ktab_find(const struct ktab *t, const void *key, size_t len)
{
	uint64_t h;
	uint32_t i, tag;

	if (!t->count)
		return -1;
	h = ktab_hash(t, key, len);
	tag = (uint32_t)(h >> 32);
	for (i = (uint32_t)h & t->mask; t->slots[i].idx; i = (i + 1) & t->mask) {
		const struct kentry *e = ktab_ent(t, t->slots[i].idx - 1);

		if (t->slots[i].tag == tag && e->key_len == len &&
		    memcmp(arena_at(&t->keys, e->key_off), key, len) == 0)
			return (long)t->slots[i].idx - 1;
	}
	return -1;
}

/* Inserts a key known to be absent; returns its entry index or -errno. */
long ktab_insert(struct ktab *t, const void *key, size_t len)
{
	struct kentry *e;
	uint8_t *k;
	int rc;

	if (len > UINT16_MAX)
		return -EINVAL;
	rc = ktab_reserve(t, (size_t)t->count + 1);
	if (rc)
		return rc;
	/* The entry only after the key: a failure leaves ents holding exactly count entries. */
	k = dynbuf_grow(&t->keys, len + 1);
	if (!k)
		return dynbuf_error(&t->keys);
	e = dynbuf_grow(&t->ents, sizeof(*e));
	if (!e)
		return dynbuf_error(&t->ents);
	e->key_off = (uint32_t)(k - arena_at(&t->keys, 0));
	e->key_len = (uint16_t)len;
	e->dig_off = 0;
	e->ndig = 0;
	memcpy(k, key, len);
	/* NUL after each key so a path can be handed to C string APIs when serialising. */
	k[len] = '\0';
	ktab_place(t->slots, t->mask, ktab_hash(t, key, len), t->count);
	return (long)t->count++;
}
