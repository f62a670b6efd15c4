/*
 * SipHash-2-4: a keyed 64-bit hash for hash tables whose keys an attacker chooses (paths in
 * IMA lists, agent ids). With a random key per table, colliding keys cannot be precomputed,
 * so lookups stay O(1) under flooding. Not a MAC for protocol use; OpenSSL's EVP_MAC
 * "SIPHASH" is the same function, but allocates per call, which a table lookup cannot afford.
 */
#ifndef PROTO_SIPHASH_H
#define PROTO_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* key[0], key[1]: the 128-bit key as two little-endian words. */
uint64_t siphash24(const uint64_t key[2], const void *data, size_t len);

#endif
