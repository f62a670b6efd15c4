/*
 * ear_keys: the key the verifier signs attestation results (EARs, proto/ear.h) with, and the
 * public keys it publishes as a JWK set.
 *
 * Two files in the state directory, reached through its descriptor (statedir.h), 0600:
 *   ear-key.pem    the current P-256 private key (PKCS#8 PEM), made on first start
 *   ear-keys.json  the public keys rotated out and when: {"retired": [{"jwk": {...},
 *                  "retired_at": UNIX}]}
 * A rotation (ear_keys_rotate(), an operator's POST /v1/ear/keys/rotate) makes a new key and
 * keeps publishing the old one for `keep` seconds, so results signed just before still verify
 * while relying parties refresh their copy of the set; then it leaves the set. The retired
 * list is written before the new key, so a crash between the two leaves the old key current and
 * published, never a result signed by a key nobody publishes.
 *
 * Thread-safe: rounds sign while an operator rotates. ear_keys_current() hands out a reference.
 */
#ifndef VERIFIER_EAR_KEYS_H
#define VERIFIER_EAR_KEYS_H

#include <stdint.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "proto/ear.h"
#include "verifier/store/statedir.h"

struct ear_keys;

/* How long a rotated-out key stays published by default: a day. */
#define EAR_KEYS_KEEP_DEFAULT 86400

/* Loads (or makes) the key; 0 or -errno, logged with the file named. */
int ear_keys_open(const struct statedir *sd, int64_t keep, struct ear_keys **out);
void ear_keys_free(struct ear_keys *k);
/* A new reference to the current private key (EVP_PKEY_free() it); NULL on failure. */
EVP_PKEY *ear_keys_current(struct ear_keys *k);
/* {"keys": [current, then the retired ones still kept at `now`]}; NULL on allocation failure. */
json_t *ear_keys_jwks(struct ear_keys *k, int64_t now);
/*
 * A new current key; the old one retired at `now`. kid gets the new key's id, old_kid the old
 * one's. 0, or -errno (logged; the old key stays current).
 */
int ear_keys_rotate(struct ear_keys *k, int64_t now, char kid[EAR_KID_LEN + 1],
		    char old_kid[EAR_KID_LEN + 1]);

#endif
