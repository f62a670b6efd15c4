/*
 * The signature section of a policy: trusted keys, paths that must be signed, keyrings. The
 * contract is in policy_keys.h, the format in policies/README.md.
 *
 * Sizes are small next to the digest table (a handful of keys and keyrings, tens of prefixes),
 * so plain arrays searched in order do; every count is capped in proto/limits.h.
 */
#include "verifier/policy/policy_keys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_tpm2_types.h>

#include "proto/alg.h"
#include "proto/encoding.h"
#include "proto/limits.h"
#include "verifier/policy/policy_json.h"

/* A kernel keyring name as IMA records it (the keyring's description). */
#define KEYRING_NAME_MAX 255u

struct ring_digest {
	uint16_t alg;
	uint8_t d[LIMIT_DIGEST];
};

struct keyring {
	char *name;
	struct dynbuf digs; /* struct ring_digest[n], at most LIMIT_POLICY_DIGESTS_PER_PATH */
	size_t n;
};

struct policy_keys {
	struct imasig_keyset *ks;
	struct dynbuf prefixes; /* char *[nprefixes] */
	size_t nprefixes;
	struct dynbuf rings; /* struct keyring[nrings] */
	size_t nrings;
	struct dynbuf ignored; /* char *[nignored]: keyring names whose keys pass */
	size_t nignored;
	bool ignore_all; /* "*" */
};

static char **prefix_at(const struct policy_keys *k, size_t i)
{
	return (char **)k->prefixes.buf + i;
}

static struct keyring *ring_at(const struct policy_keys *k, size_t i)
{
	return (struct keyring *)k->rings.buf + i;
}

static char **ignored_at(const struct policy_keys *k, size_t i)
{
	return (char **)k->ignored.buf + i;
}

static const struct ring_digest *ring_digest_at(const struct keyring *r, size_t i)
{
	return (const struct ring_digest *)r->digs.buf + i;
}


struct policy_keys *policy_keys_new(void)
{
	struct policy_keys *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->ks = imasig_keyset_new();
	if (!k->ks) {
		free(k);
		return NULL;
	}
	dynbuf_init(&k->prefixes, (size_t)LIMIT_POLICY_SIG_PREFIXES * sizeof(char *));
	dynbuf_init(&k->rings, (size_t)LIMIT_POLICY_KEYRINGS * sizeof(struct keyring));
	dynbuf_init(&k->ignored, (size_t)LIMIT_POLICY_KEYRINGS * sizeof(char *));
	return k;
}

void policy_keys_free(struct policy_keys *k)
{
	if (!k)
		return;
	imasig_keyset_free(k->ks);
	for (size_t i = 0; i < k->nprefixes; i++)
		free(*prefix_at(k, i));
	for (size_t i = 0; i < k->nrings; i++) {
		free(ring_at(k, i)->name);
		dynbuf_release(&ring_at(k, i)->digs);
	}
	for (size_t i = 0; i < k->nignored; i++)
		free(*ignored_at(k, i));
	dynbuf_release(&k->prefixes);
	dynbuf_release(&k->rings);
	dynbuf_release(&k->ignored);
	free(k);
}

/* Appends a copy of s to an array of strings; 0, -E2BIG past its cap, -ENOMEM. */
static int strings_add(struct dynbuf *arr, size_t *n, const char *s)
{
	char *copy = strdup(s);
	int rc;

	if (!copy)
		return -ENOMEM;
	rc = dynbuf_add(arr, &copy, sizeof(copy));
	if (rc) {
		free(copy);
		return rc;
	}
	(*n)++;
	return 0;
}

/* --- keys -------------------------------------------------------------------------------- */

/* {"pem": TEXT} | {"der": BASE64}, optional "keyid": 8 hex digits. */
static int load_key_object(struct policy_keys *k, size_t i, const json_t *o, char *err,
			   size_t errlen)
{
	const json_t *pem = json_object_get(o, "pem"), *der = json_object_get(o, "der");
	const json_t *kid = json_object_get(o, "keyid");
	uint8_t *bytes = NULL, idb[4];
	const char *why = "?", *key;
	uint32_t keyid = 0;
	size_t len = 0;
	json_t *v;
	int rc;

	json_object_foreach((json_t *)o, key, v) {
		if (strcmp(key, "pem") && strcmp(key, "der") && strcmp(key, "keyid")) {
			if (!strcmp(key, "file"))
				policy_seterr(err, errlen, "keys[%zu]: \"file\" is read by the tool that reads the policy file (attestctl, verifier --policy); a policy sent to the verifier carries its keys inline (\"pem\" or \"der\")",
				       i);
			else
				policy_seterr(err, errlen, "keys[%zu]: unknown key \"%.64s\" (pem, der, keyid)", i, key);
			return -EINVAL;
		}
	}
	if (!!pem + !!der != 1) {
		policy_seterr(err, errlen, "keys[%zu]: give exactly one of \"pem\" and \"der\"", i);
		return -EINVAL;
	}
	if (kid) {
		const char *s = json_string_value(kid);

		if (!s || json_string_length(kid) != 8 || hex_decode(s, 8, idb, sizeof(idb)) != 4) {
			policy_seterr(err, errlen, "keys[%zu]: \"keyid\" must be 8 hex digits", i);
			return -EINVAL;
		}
		keyid = (uint32_t)idb[0] << 24 | (uint32_t)idb[1] << 16 | (uint32_t)idb[2] << 8 | idb[3];
	}
	if (pem) {
		if (!json_is_string(pem)) {
			policy_seterr(err, errlen, "keys[%zu]: \"pem\" must be a string", i);
			return -EINVAL;
		}
		rc = imasig_keyset_add(k->ks, (const uint8_t *)json_string_value(pem),
				       json_string_length(pem), kid ? &keyid : NULL, NULL, &why);
	} else {
		if (!json_is_string(der) ||
		    !(bytes = base64_decode_alloc(json_string_value(der), json_string_length(der), &len))) {
			policy_seterr(err, errlen, "keys[%zu]: \"der\" must be base64", i);
			return -EINVAL;
		}
		rc = imasig_keyset_add(k->ks, bytes, len, kid ? &keyid : NULL, NULL, &why);
		free(bytes);
	}
	if (rc)
		policy_seterr(err, errlen, "keys[%zu]: %s", i, rc == -ENOMEM ? "out of memory" : why);
	return rc;
}

static int load_keys(struct policy_keys *k, const json_t *v, char *err, size_t errlen)
{
	const json_t *o;
	size_t i;
	int rc;

	if (!json_is_array(v)) {
		policy_seterr(err, errlen, "\"keys\" must be a list of {\"pem\": ...} or {\"der\": ...}");
		return -EINVAL;
	}
	if (json_array_size(v) > LIMIT_POLICY_KEYS) {
		policy_seterr(err, errlen, "\"keys\": more than %d keys", LIMIT_POLICY_KEYS);
		return -E2BIG;
	}
	json_array_foreach(v, i, o) {
		if (!json_is_object(o)) {
			policy_seterr(err, errlen, "keys[%zu]: must be an object", i);
			return -EINVAL;
		}
		rc = load_key_object(k, i, o, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

/* --- required prefixes ------------------------------------------------------------------- */

static int load_required(struct policy_keys *k, const json_t *v, char *err, size_t errlen)
{
	const json_t *s;
	size_t i;
	int rc;

	if (!json_is_array(v)) {
		policy_seterr(err, errlen, "\"require_signatures\" must be a list of path prefixes");
		return -EINVAL;
	}
	json_array_foreach(v, i, s) {
		const char *p = json_string_value(s);
		size_t len = json_string_length(s);

		if (!p || len == 0 || len > LIMIT_IMA_PATH || strlen(p) != len || p[0] != '/' ||
		    memchr(p, ' ', len)) {
			policy_seterr(err, errlen, "require_signatures[%zu]: a path prefix starting with '/', at most %u bytes, with '_' for spaces as IMA records them",
			       i, LIMIT_IMA_PATH);
			return -EINVAL;
		}
		rc = strings_add(&k->prefixes, &k->nprefixes, p);
		if (rc) {
			policy_seterr(err, errlen, "require_signatures: more than %u prefixes",
			       LIMIT_POLICY_SIG_PREFIXES);
			return rc;
		}
	}
	return 0;
}

/* --- keyrings ---------------------------------------------------------------------------- */

static bool keyring_name_ok(const char *name, size_t len)
{
	return len > 0 && len <= KEYRING_NAME_MAX && strlen(name) == len;
}

static struct keyring *ring_find(const struct policy_keys *k, const char *name, size_t len)
{
	for (size_t i = 0; i < k->nrings; i++)
		if (strlen(ring_at(k, i)->name) == len && memcmp(ring_at(k, i)->name, name, len) == 0)
			return ring_at(k, i);
	return NULL;
}

static int ring_add_digest(struct keyring *r, uint16_t alg, const uint8_t *d)
{
	size_t sz = alg_by_id(alg)->size;
	struct ring_digest rd;

	for (size_t i = 0; i < r->n; i++)
		if (ring_digest_at(r, i)->alg == alg && memcmp(ring_digest_at(r, i)->d, d, sz) == 0)
			return 0;
	memset(&rd, 0, sizeof(rd));
	rd.alg = alg;
	memcpy(rd.d, d, sz);
	if (dynbuf_add(&r->digs, &rd, sizeof(rd)))
		return dynbuf_error(&r->digs);
	r->n++;
	return 0;
}

/* {"NAME": [digest, ...]}: ours "alg:hex", Keylime bare hex. */
static int load_keyrings(struct policy_keys *k, const json_t *v, bool keylime, char *err,
			 size_t errlen)
{
	const char *name, *why;
	const json_t *list, *d;
	uint8_t dig[LIMIT_DIGEST];
	size_t i;
	int rc;

	if (!json_is_object(v)) {
		policy_seterr(err, errlen, "\"keyrings\" must be an object of keyring name -> list of digests");
		return -EINVAL;
	}
	json_object_foreach((json_t *)v, name, list) {
		struct keyring *r;

		if (!keyring_name_ok(name, strlen(name))) {
			policy_seterr(err, errlen, "keyrings[\"%.64s\"]: a keyring name of 1 to %u bytes", name,
			       KEYRING_NAME_MAX);
			return -EINVAL;
		}
		if (!json_is_array(list) || json_array_size(list) > LIMIT_POLICY_DIGESTS_PER_PATH) {
			policy_seterr(err, errlen, "keyrings[\"%.64s\"]: a list of at most %u digests", name,
			       LIMIT_POLICY_DIGESTS_PER_PATH);
			return -EINVAL;
		}
		r = ring_find(k, name, strlen(name));
		if (!r) {
			struct keyring nr = {0};

			dynbuf_init(&nr.digs,
				    (size_t)LIMIT_POLICY_DIGESTS_PER_PATH * sizeof(struct ring_digest));
			nr.name = strdup(name);
			if (!nr.name)
				return -ENOMEM;
			if (dynbuf_add(&k->rings, &nr, sizeof(nr))) {
				free(nr.name);
				policy_seterr(err, errlen, "keyrings: more than %u keyrings", LIMIT_POLICY_KEYRINGS);
				return dynbuf_error(&k->rings);
			}
			r = ring_at(k, k->nrings++);
		}
		json_array_foreach(list, i, d) {
			uint16_t alg = policy_json_digest(d, keylime, dig, &why);

			if (!alg) {
				policy_seterr(err, errlen, "keyrings[\"%.64s\"][%zu]: %s", name, i, why);
				return -EINVAL;
			}
			rc = ring_add_digest(r, alg, dig);
			if (rc) {
				policy_seterr(err, errlen, "keyrings[\"%.64s\"]: cannot store (%s)", name,
				       strerror(-rc));
				return rc;
			}
		}
	}
	return 0;
}

static int load_ignored(struct policy_keys *k, const json_t *v, const char *what, char *err,
			size_t errlen)
{
	const json_t *s;
	size_t i;
	int rc;

	if (!json_is_array(v)) {
		policy_seterr(err, errlen, "\"%s\" must be a list of keyring names or \"*\"", what);
		return -EINVAL;
	}
	json_array_foreach(v, i, s) {
		const char *name = json_string_value(s);

		if (!name || !keyring_name_ok(name, json_string_length(s))) {
			policy_seterr(err, errlen, "%s[%zu]: a keyring name of 1 to %u bytes, or \"*\"", what, i,
			       KEYRING_NAME_MAX);
			return -EINVAL;
		}
		if (!strcmp(name, "*")) {
			k->ignore_all = true;
			continue;
		}
		rc = strings_add(&k->ignored, &k->nignored, name);
		if (rc) {
			policy_seterr(err, errlen, "%s: more than %u names", what, LIMIT_POLICY_KEYRINGS);
			return rc;
		}
	}
	return 0;
}

int policy_keys_load(struct policy_keys *k, const char *key, const json_t *v, char *err,
		     size_t errlen)
{
	if (!strcmp(key, "keys"))
		return load_keys(k, v, err, errlen);
	if (!strcmp(key, "require_signatures"))
		return load_required(k, v, err, errlen);
	if (!strcmp(key, "keyrings"))
		return load_keyrings(k, v, false, err, errlen);
	if (!strcmp(key, "ignored_keyrings"))
		return load_ignored(k, v, "ignored_keyrings", err, errlen);
	return -ENOENT;
}

/* --- Keylime ----------------------------------------------------------------------------- */

/*
 * verification-keys: a string holding Keylime's ImaKeyring JSON, {"pubkeys": [base64 DER
 * SubjectPublicKeyInfo, ...], "keyids": [int, ...]} (keyids optional, by position). Keylime
 * logs and skips a key it cannot load; so do we, with a warning, since files that key signed
 * are then judged by the digest list.
 */
static int load_verification_keys(struct policy_keys *k, const json_t *v, struct dynbuf *w,
				  char *err, size_t errlen)
{
	json_t *ring = NULL, *pubkeys, *keyids, *pk;
	json_error_t jerr;
	size_t i;
	int rc = -EINVAL;

	if (!json_is_string(v)) {
		policy_seterr(err, errlen, "keylime \"verification-keys\" must be a string");
		return -EINVAL;
	}
	if (json_string_length(v) == 0)
		return 0;
	ring = json_loadb(json_string_value(v), json_string_length(v),
			  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (ring && json_is_string(ring)) {
		/* Keylime's database stores the string JSON-encoded once more. */
		json_t *inner = json_loadb(json_string_value(ring), json_string_length(ring),
					   JSON_REJECT_DUPLICATES, &jerr);
		json_decref(ring);
		ring = inner;
	}
	pubkeys = json_object_get(ring, "pubkeys");
	keyids = json_object_get(ring, "keyids");
	if (!json_is_object(ring) || !json_is_array(pubkeys) || (keyids && !json_is_array(keyids))) {
		policy_seterr(err, errlen, "keylime \"verification-keys\" is not {\"pubkeys\": [...], \"keyids\": [...]}");
		goto out;
	}
	if (json_array_size(pubkeys) > LIMIT_POLICY_KEYS) {
		policy_seterr(err, errlen, "keylime \"verification-keys\": more than %d keys", LIMIT_POLICY_KEYS);
		rc = -E2BIG;
		goto out;
	}
	json_array_foreach(keyids, i, pk) {
		if (!json_is_integer(pk) || json_integer_value(pk) < 0 ||
		    json_integer_value(pk) > (json_int_t)UINT32_MAX) {
			policy_seterr(err, errlen, "keylime \"verification-keys\": keyids[%zu] is not a 32-bit key id", i);
			goto out;
		}
	}
	json_array_foreach(pubkeys, i, pk) {
		const json_t *idv = json_array_get(keyids, i);
		uint8_t *der = NULL;
		size_t len = 0;
		const char *why = "not base64";
		uint32_t keyid = 0, got = 0;
		int r = -EINVAL;

		keyid = idv ? (uint32_t)json_integer_value(idv) : 0;
		if (json_is_string(pk))
			der = base64_decode_alloc(json_string_value(pk), json_string_length(pk), &len);
		if (der)
			r = imasig_keyset_add(k->ks, der, len, idv ? &keyid : NULL, &got, &why);
		free(der);
		if (r == -ENOMEM) {
			rc = r;
			goto out;
		}
		if (r)
			policy_warn(w, "verification-keys: key %zu not used (%s); files it signed are judged by the digest list",
			     i, why);
	}
	rc = 0;
out:
	json_decref(ring);
	return rc;
}

int policy_keys_load_keylime(struct policy_keys *k, const json_t *root, struct dynbuf *warnings,
			     char *err, size_t errlen)
{
	const json_t *v, *ima = json_object_get(root, "ima");
	int rc;

	v = json_object_get(root, "verification-keys");
	if (v) {
		rc = load_verification_keys(k, v, warnings, err, errlen);
		if (rc)
			return rc;
	}
	v = json_object_get(root, "keyrings");
	if (v) {
		rc = load_keyrings(k, v, true, err, errlen);
		if (rc)
			return rc;
		if (k->nrings)
			policy_warn(warnings, "keyrings: a key the machine loads onto a listed keyring is accepted, but unlike Keylime it does not become a signing key for later entries: list it under \"keys\" to trust its signatures");
	}
	v = json_object_get(ima, "ignored_keyrings");
	if (v) {
		rc = load_ignored(k, v, "ima.ignored_keyrings", err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

/* --- serialising ------------------------------------------------------------------------- */

static json_t *strings_json(struct dynbuf *arr, size_t n, bool star)
{
	json_t *a = json_array();

	if (!a)
		return NULL;
	if (star && json_array_append_new(a, json_string("*")))
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(a, json_string(((char **)arr->buf)[i])))
			goto fail;
	return a;
fail:
	json_decref(a);
	return NULL;
}

static json_t *keys_json(const struct policy_keys *k)
{
	json_t *a = json_array();
	const uint8_t *der;
	size_t len;
	uint32_t id;

	for (size_t i = 0; a && imasig_keyset_get(k->ks, i, &der, &len, &id); i++) {
		char *b64 = base64_encode_alloc(der, len), idhex[9];
		uint8_t idb[4] = {(uint8_t)(id >> 24), (uint8_t)(id >> 16), (uint8_t)(id >> 8),
				  (uint8_t)id};

		hex_encode(idb, 4, idhex);
		if (!b64 || json_array_append_new(a, json_pack("{s:s, s:s}", "der", b64, "keyid", idhex))) {
			free(b64);
			json_decref(a);
			return NULL;
		}
		free(b64);
	}
	return a;
}

static json_t *keyrings_json(const struct policy_keys *k)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < k->nrings; i++) {
		const struct keyring *r = ring_at(k, i);
		json_t *list = json_array();

		if (json_object_set_new(o, r->name, list))
			goto fail;
		for (size_t j = 0; j < r->n; j++)
			if (json_array_append_new(list, policy_json_digest_string(
							   ring_digest_at(r, j)->alg,
							   ring_digest_at(r, j)->d)))
				goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

int policy_keys_to_json(const struct policy_keys *k, json_t *root)
{
	if (!k)
		return 0;
	if (imasig_keyset_count(k->ks) && json_object_set_new(root, "keys", keys_json(k)))
		return -ENOMEM;
	if (k->nprefixes && json_object_set_new(root, "require_signatures",
						strings_json((struct dynbuf *)&k->prefixes,
							     k->nprefixes, false)))
		return -ENOMEM;
	if (k->nrings && json_object_set_new(root, "keyrings", keyrings_json(k)))
		return -ENOMEM;
	if ((k->nignored || k->ignore_all) &&
	    json_object_set_new(root, "ignored_keyrings",
				strings_json((struct dynbuf *)&k->ignored, k->nignored,
					     k->ignore_all)))
		return -ENOMEM;
	return 0;
}

/* --- lookups ----------------------------------------------------------------------------- */

const struct imasig_keyset *policy_keys_keyset(const struct policy_keys *k)
{
	return k ? k->ks : NULL;
}

bool policy_keys_required(const struct policy_keys *k, const char *path, size_t len)
{
	for (size_t i = 0; k && path && i < k->nprefixes; i++) {
		const char *p = *prefix_at(k, i);
		size_t n = strlen(p);

		if (n <= len && memcmp(path, p, n) == 0)
			return true;
	}
	return false;
}

enum policy_keyring_decision policy_keys_keyring(const struct policy_keys *k, const char *name,
						 size_t len, uint16_t alg, const uint8_t *d,
						 size_t dlen)
{
	const struct keyring *r;

	if (!k || !name)
		return POLICY_KEYRING_UNKNOWN;
	if (k->ignore_all)
		return POLICY_KEYRING_IGNORED;
	for (size_t i = 0; i < k->nignored; i++)
		if (strlen(*ignored_at(k, i)) == len && memcmp(*ignored_at(k, i), name, len) == 0)
			return POLICY_KEYRING_IGNORED;
	r = ring_find(k, name, len);
	if (!r)
		return POLICY_KEYRING_UNKNOWN;
	for (size_t i = 0; d && i < r->n; i++) {
		const struct ring_digest *rd = ring_digest_at(r, i);

		if (rd->alg == alg && alg_by_id(alg)->size == dlen && memcmp(rd->d, d, dlen) == 0)
			return POLICY_KEYRING_ALLOWED;
	}
	return POLICY_KEYRING_MISMATCH;
}

size_t policy_keys_key_count(const struct policy_keys *k)
{
	return k ? imasig_keyset_count(k->ks) : 0;
}

size_t policy_keys_required_count(const struct policy_keys *k)
{
	return k ? k->nprefixes : 0;
}

size_t policy_keys_keyring_count(const struct policy_keys *k)
{
	return k ? k->nrings : 0;
}
