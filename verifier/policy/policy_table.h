/*
 * policy_table: the index under a policy's tables (internal to verifier/policy/). A key table
 * maps byte-string keys (a path, or a digest_only [alg][digest] key) to 12-byte entries, stored
 * for million-entry policies: keys live in one byte arena, entries in one array, and the index
 * is open addressing over 8-byte slots; one malloc per arena, not per entry. Keys come from
 * the measured machine, so the index hashes with SipHash-2-4 under a random per-table key: an
 * attacker who picks file names cannot aim them at one probe chain.
 *
 * Owns: struct ktab and its arenas (policy_table.c). The entries' digest records (dig_off,
 * ndig) belong to the policy that owns the table (policy.c).
 */
#ifndef VERIFIER_POLICY_TABLE_H
#define VERIFIER_POLICY_TABLE_H

#include <stdint.h>

#include "proto/dynbuf.h"
#include "proto/limits.h"

/*
 * --- byte arenas: dynbufs capped at LIMIT_POLICY_BYTES ------------------------------------
 *
 * A policy's stored bytes never outgrow its JSON (a path is stored with one NUL where the JSON
 * has two quotes, a digest in binary where the JSON has hex), so the JSON's cap bounds each
 * arena; it also keeps every offset within the u32 the tables store.
 */
_Static_assert(LIMIT_POLICY_BYTES <= UINT32_MAX, "arena offsets are u32");

static inline uint8_t *arena_at(const struct dynbuf *a, size_t off)
{
	return (uint8_t *)a->buf + off;
}

/* --- key table: byte-string keys -> 12-byte entries, open addressing ---------------------- */

struct kentry {
	uint32_t key_off;  /* into keys */
	uint32_t dig_off;  /* into policy->digs: ndig records, contiguous */
	uint16_t key_len;  /* <= LIMIT_IMA_PATH */
	uint16_t ndig;     /* <= LIMIT_POLICY_DIGESTS_PER_PATH */
};

struct kslot {
	uint32_t idx;      /* entry index + 1; 0 = empty */
	uint32_t tag;      /* high half of the hash, to skip most memcmps */
};

struct ktab {
	uint64_t key[2];
	struct kslot *slots;
	uint32_t mask;     /* slot count - 1; slots == NULL when empty */
	uint32_t count;
	struct dynbuf ents; /* struct kentry[count], at most LIMIT_POLICY_ENTRIES */
	struct dynbuf keys; /* arena */
};

static inline struct kentry *ktab_ent(const struct ktab *t, uint32_t i)
{
	return (struct kentry *)t->ents.buf + i;
}

/* An empty table with a fresh random hash key: 0, or -EIO when no random bytes. */
int ktab_init(struct ktab *t);
void ktab_release(struct ktab *t);
/* Makes room in the index for n entries in total at a load factor of at most 0.7. */
int ktab_reserve(struct ktab *t, size_t n);
/* The entry index of key, or -1. */
long ktab_find(const struct ktab *t, const void *key, size_t len);
/* Inserts a key known to be absent; returns its entry index or -errno. */
long ktab_insert(struct ktab *t, const void *key, size_t len);

#endif
