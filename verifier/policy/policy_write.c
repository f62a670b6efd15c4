/*
 * policy_write: a policy as JSON: the whole in our format (policy_to_json(): keys sorted,
 * digests a package lists written with the package), and the digests of one path
 * (policy_json_path_digests()).
 */
#include <stdlib.h>
#include <string.h>

#include "proto/encoding.h"
#include "proto/text.h"
#include "verifier/policy/boot_policy.h"
#include "verifier/policy/policy_internal.h"
#include "verifier/policy/policy_keys.h"
#include "verifier/policy/policy_packages.h"

json_t *policy_json_path_digests(const struct policy *p, const char *path, size_t path_len)
{
	const struct kentry *ke;
	const uint8_t *r;
	json_t *list;
	long ei;

	if (!p || !path || path_len > LIMIT_IMA_PATH)
		return NULL;
	ei = ktab_find(&p->paths, path, path_len);
	if (ei < 0)
		return NULL;
	ke = ktab_ent(&p->paths, (uint32_t)ei);
	r = arena_at(&p->digs, ke->dig_off);
	list = json_array();
	for (uint16_t n = 0; list && n < ke->ndig; n++) {
		if (json_array_append_new(list, digest_json(r[0], r + 1))) {
			json_decref(list);
			return NULL;
		}
		r += 1 + dk_alg(r[0])->size;
	}
	return list;
}

/* The byte offset in p->digs of record nth of entry e. */
static size_t record_offset(const struct policy *p, const struct kentry *e, uint16_t nth)
{
	size_t off = e->dig_off;

	for (uint16_t n = 0; n < nth; n++)
		off += 1 + dk_alg(*arena_at(&p->digs, off))->size;
	return off;
}

/*
 * One bit per byte of p->digs, set at each record a package version lists: those are written
 * under "packages", and only the others under "digests". NULL (and *fail false) when the
 * policy has no packages.
 */
static uint8_t *owned_records(const struct policy *p, bool *fail)
{
	uint8_t *bits;

	*fail = false;
	if (!policy_packages_count(p->pkgs))
		return NULL;
	bits = calloc(p->digs.len / 8 + 1, 1);
	if (!bits) {
		*fail = true;
		return NULL;
	}
	for (size_t i = 0; i < policy_packages_count(p->pkgs); i++) {
		const struct policy_package_ref *refs;
		const char *n, *v, *a;
		size_t nrefs;
		int64_t ms;

		policy_packages_version(p->pkgs, i, &n, &v, &a, &ms, &refs, &nrefs);
		for (size_t r = 0; r < nrefs; r++) {
			size_t off = record_offset(p, ktab_ent(&p->paths, refs[r].entry), refs[r].nth);

			bits[off / 8] |= (uint8_t)(1u << (off % 8));
		}
	}
	return bits;
}

static bool owned(const uint8_t *bits, size_t off)
{
	return bits && (bits[off / 8] >> (off % 8)) & 1u;
}

/* A path as a key of an object: itself when UTF-8, else hex in `hexkey` (the *_hex table). */
static int set_path_key(json_t *obj, json_t **hexobj, json_t *parent, const char *hexname,
			const char *path, size_t len, json_t *value)
{
	char hex[2 * LIMIT_IMA_PATH + 1];

	if (text_is_utf8(path, len))
		return json_object_setn_new(obj, path, len, value);
	if (!*hexobj) {
		*hexobj = json_object();
		if (json_object_set_new(parent, hexname, *hexobj)) {
			json_decref(value);
			return -1;
		}
	}
	hex_encode((const uint8_t *)path, len, hex);
	return json_object_set_new(*hexobj, hex, value);
}

static int path_list_append(json_t **list, json_t *parent, const char *hexname,
			    const char *path, size_t len, json_t **hexlist)
{
	char hex[2 * LIMIT_IMA_PATH + 1];
	json_t **l = text_is_utf8(path, len) ? list : hexlist;
	const char *name = l == list ? NULL : hexname;

	if (!*l) {
		*l = json_array();
		if (json_object_set_new(parent, name ? name : "conffiles", *l))
			return -1;
	}
	if (l == list)
		return json_array_append_new(*l, json_stringn(path, len));
	hex_encode((const uint8_t *)path, len, hex);
	return json_array_append_new(*l, json_string(hex));
}

/* The "packages" list: each version with its files (digests by path) and conffiles. */
static json_t *packages_json(const struct policy *p)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < policy_packages_count(p->pkgs); i++) {
		const struct policy_package_ref *refs;
		const char *n, *v, *a;
		json_t *o, *files, *fhex = NULL, *conf = NULL, *chex = NULL, *list = NULL;
		size_t nrefs;
		int64_t ms;

		policy_packages_version(p->pkgs, i, &n, &v, &a, &ms, &refs, &nrefs);
		o = json_pack("{s:s, s:s, s:s, s:{}}", "package", n, "version", v, "architecture", a,
			      "files");
		if (!o || json_array_append_new(arr, o))
			goto fail;
		files = json_object_get(o, "files");
		if (ms && json_object_set_new(o, "missing_since", json_integer(ms)))
			goto fail;
		for (size_t r = 0; r < nrefs; r++) {
			const struct kentry *ke = ktab_ent(&p->paths, refs[r].entry);
			const char *path = (const char *)arena_at(&p->paths.keys, ke->key_off);
			const uint8_t *rec = arena_at(&p->digs, record_offset(p, ke, refs[r].nth));

			/* A path's refs are adjacent: loading adds them path by path. */
			if (r == 0 || refs[r - 1].entry != refs[r].entry) {
				list = json_array();
				if (set_path_key(files, &fhex, o, "files_hex", path, ke->key_len, list))
					goto fail;
				if (refs[r].conffile &&
				    path_list_append(&conf, o, "conffiles_hex", path, ke->key_len, &chex))
					goto fail;
			}
			if (json_array_append_new(list, digest_json(rec[0], rec + 1)))
				goto fail;
		}
	}
	return arr;
fail:
	json_decref(arr);
	return NULL;
}

/*
 * The "digests" table digs of root (and root's "digests_hex" for paths that are not UTF-8): each
 * path with the digests no package version lists (own: owned_records()). 0, or -1 when out of
 * memory.
 */
static int digests_json(const struct policy *p, const uint8_t *own, json_t *root, json_t *digs)
{
	json_t *hexdigs = NULL, *list;

	for (uint32_t e = 0; e < p->paths.count; e++) {
		const struct kentry *ke = ktab_ent(&p->paths, e);
		const uint8_t *r = arena_at(&p->digs, ke->dig_off);
		const char *path = (const char *)arena_at(&p->paths.keys, ke->key_off);
		uint16_t mine = 0;

		/* Digests a package lists are written with it; a path whose digests all come
		 * from packages is not repeated here (one listed nowhere stays: pinned to nothing). */
		for (uint16_t n = 0; own && n < ke->ndig; n++) {
			size_t off = record_offset(p, ke, n);

			mine += !owned(own, off);
		}
		if (own && ke->ndig && !mine)
			continue;
		list = json_array();
		/* JSON carries UTF-8 only: the raw bytes as hex, never an escaped look-alike. */
		if (set_path_key(digs, &hexdigs, root, "digests_hex", path, ke->key_len, list))
			return -1;
		for (uint16_t n = 0; n < ke->ndig; n++) {
			if (!owned(own, (size_t)(r - arena_at(&p->digs, 0))) &&
			    json_array_append_new(list, digest_json(r[0], r + 1)))
				return -1;
			r += 1 + dk_alg(r[0])->size;
		}
	}
	return 0;
}

char *policy_to_json(const struct policy *p)
{
	json_t *root = NULL, *digs, *list, *ex, *ba;
	uint8_t *own = NULL;
	bool own_fail;
	char *out = NULL;

	if (!p)
		return NULL;
	root = json_object();
	if (!root)
		return NULL;
	digs = json_object();
	ex = json_array();
	if (json_object_set_new(root, "digests", digs) ||
	    json_object_set_new(root, "excludes", ex) ||
	    json_object_set_new(root, "version", json_integer(POLICY_FORMAT_VERSION)) ||
	    json_object_set_new(root, "violations",
				json_string(p->violations_ignore ? "ignore" : "fail")))
		goto out;
	if (p->description &&
	    json_object_set_new(root, "description", json_string(p->description)))
		goto out;
	if (p->reboot_clears &&
	    json_object_set_new(root, "reboot_clears_open_violations", json_true()))
		goto out;
	if (p->ba_mode == POLICY_BOOT_AGGREGATE_LIST) {
		ba = json_array();
		if (json_object_set_new(root, "boot_aggregate", ba))
			goto out;
		for (size_t i = 0; i < p->nba; i++)
			if (json_array_append_new(ba, digest_json(ba_at(p, i)->ai, ba_at(p, i)->d)))
				goto out;
	} else if (json_object_set_new(root, "boot_aggregate", json_string(POLICY_MODE_PCRS_NAME))) {
		goto out;
	}
	own = owned_records(p, &own_fail);
	if (own_fail)
		goto out;
	if (digests_json(p, own, root, digs))
		goto out;
	if (p->pkgs && json_object_set_new(root, "packages", packages_json(p)))
		goto out;
	if (p->conffiles_any && json_object_set_new(root, "conffiles", json_string("any")))
		goto out;
	for (size_t i = 0; i < p->nex; i++)
		if (json_array_append_new(ex, json_string(ex_at(p, i)->src)))
			goto out;
	if (p->boot && json_object_set_new(root, "boot", boot_policy_json(p->boot)))
		goto out;
	if (p->donly.count) {
		list = json_array();
		if (json_object_set_new(root, "digest_only", list))
			goto out;
		for (uint32_t e = 0; e < p->donly.count; e++) {
			const uint8_t *k = arena_at(&p->donly.keys, ktab_ent(&p->donly, e)->key_off);

			if (json_array_append_new(list, digest_json(k[0], k + 1)))
				goto out;
		}
	}
	if (policy_keys_to_json(p->keys, root))
		goto out;
	out = json_dumps(root, JSON_INDENT(1) | JSON_SORT_KEYS);
out:
	free(own);
	json_decref(root);
	return out;
}
