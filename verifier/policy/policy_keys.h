/*
 * policy_keys: the signature section of a policy. Which public keys the policy trusts for IMA
 * file signatures, which paths must carry such a signature, and which keys the machine may load
 * onto its kernel keyrings (`ima-buf` entries named after the keyring). Format:
 * policies/README.md, "File signatures and keyrings"; the order in which these and the digest
 * list decide an entry is verifier/decision/judge.c's.
 *
 * A policy owns one section (policy.c creates it and frees it with the policy); it is built
 * while the policy loads and read-only afterwards, so lookups are safe from many threads at
 * once, like the rest of the policy.
 *
 * Our format's top-level keys: "keys", "require_signatures", "keyrings", "ignored_keyrings".
 * From a Keylime runtime policy: "verification-keys", "keyrings" and ima.ignored_keyrings, with
 * a warning for whatever Keylime would do that we do not.
 */
#ifndef VERIFIER_POLICY_KEYS_H
#define VERIFIER_POLICY_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "proto/dynbuf.h"
#include "proto/imasig.h"

struct policy_keys;

/* NULL on allocation failure; free with policy_keys_free() (accepts NULL). */
struct policy_keys *policy_keys_new(void);
void policy_keys_free(struct policy_keys *k);

/*
 * One top-level key of our format. 0 when it was this section's and loaded; -ENOENT when key is
 * not one of this section's (the caller goes on); another -errno with a one-line reason in err.
 */
int policy_keys_load(struct policy_keys *k, const char *key, const json_t *v, char *err,
		     size_t errlen);

/*
 * This section's part of a Keylime runtime policy (root is the whole document). Appends one
 * line per warning to warnings: a key it could not load, keyring keys that Keylime would also
 * trust for signatures. 0 or -errno with err set.
 */
int policy_keys_load_keylime(struct policy_keys *k, const json_t *root, struct dynbuf *warnings,
			     char *err, size_t errlen);

/* Adds this section's keys to root in our format (none when the section is empty). 0 or -ENOMEM. */
int policy_keys_to_json(const struct policy_keys *k, json_t *root);

/* The trusted signing keys (never NULL for a section policy_keys_new() made). */
const struct imasig_keyset *policy_keys_keyset(const struct policy_keys *k);

/* true when path starts with one of the prefixes that must carry a trusted signature. */
bool policy_keys_required(const struct policy_keys *k, const char *path, size_t len);

enum policy_keyring_decision {
	POLICY_KEYRING_ALLOWED,  /* the keyring lists this key's digest */
	POLICY_KEYRING_IGNORED,  /* the keyring is ignored ("*" or by name) */
	POLICY_KEYRING_UNKNOWN,  /* the policy does not name this keyring */
	POLICY_KEYRING_MISMATCH, /* the keyring is named, this key's digest is not listed */
};

/* A key of digest (alg, d) loaded onto the keyring name (not NUL-terminated). */
enum policy_keyring_decision policy_keys_keyring(const struct policy_keys *k, const char *name,
						 size_t len, uint16_t alg, const uint8_t *d,
						 size_t dlen);

/* Counts, for summaries: keys, required prefixes, keyrings named. */
size_t policy_keys_key_count(const struct policy_keys *k);
size_t policy_keys_required_count(const struct policy_keys *k);
size_t policy_keys_keyring_count(const struct policy_keys *k);

#endif
