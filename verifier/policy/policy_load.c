/*
 * policy_load: a policy's JSON into a policy (policy_load()): the input bounded and parsed,
 * the format chosen (ours by "version", Keylime's by "meta", policy_keylime.c), and our
 * format's keys: the digests tables, digest_only, boot_aggregate and the flags. The
 * "packages" section is policy_load_packages.c's, "boot" boot_policy.c's, the signature
 * section policy_keys.c's.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/encoding.h"
#include "proto/text.h"
#include "verifier/policy/boot_policy.h"
#include "verifier/policy/policy_internal.h"
#include "verifier/policy/policy_keys.h"

static bool depth_ok(const json_t *v, unsigned depth)
{
	const char *k;
	json_t *c;
	size_t i;

	if (depth > LIMIT_JSON_DEPTH)
		return false;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, c)
			if (!depth_ok(c, depth + 1))
				return false;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, c)
			if (!depth_ok(c, depth + 1))
				return false;
	}
	return true;
}

/*
 * The raw path a key of `form` stands for, returned with its length in *plen (in buf when it
 * is not the key itself); NULL with *why set when the key names no path.
 */
const char *digests_key_path(const char *key, enum digests_form form, char *buf,
				    size_t *plen, const char **why)
{
	size_t klen = strlen(key);
	ssize_t n;

	*plen = klen;
	if (form == DIGESTS_KEYLIME && klen <= LIMIT_IMA_PATH && memchr(key, ' ', klen)) {
		/* Keylime compares the recorded (underscored) name: map its policy keys the same
		 * way; two keys that collide merge their digests. */
		memcpy(buf, key, klen);
		for (size_t i = 0; i < klen; i++)
			if (buf[i] == ' ')
				buf[i] = '_';
		return buf;
	}
	if (form != DIGESTS_HEX)
		return key;
	/* One spelling per path: lowercase hex, and only for names JSON cannot carry. */
	if (klen > 2 * LIMIT_IMA_PATH || strspn(key, "0123456789abcdef") != klen ||
	    (n = hex_decode(key, klen, (uint8_t *)buf, LIMIT_IMA_PATH)) < 0) {
		*why = "not lowercase hex of at most " LIMIT_STR(LIMIT_IMA_PATH) " bytes";
		return NULL;
	}
	*plen = (size_t)n;
	if (*plen && text_is_utf8(buf, *plen)) {
		*why = "the path is UTF-8: write it under \"digests\"";
		return NULL;
	}
	return buf;
}

int load_digests(struct policy *p, const json_t *digests, enum digests_form form,
			char *err, size_t errlen)
{
	const char *table = form == DIGESTS_HEX ? "digests_hex" : "digests";
	bool keylime = form == DIGESTS_KEYLIME;
	uint8_t d[LIMIT_DIGEST];
	const char *key, *why;
	char *buf = NULL;
	json_t *list, *v;
	size_t i;
	int rc = -EINVAL;

	if (!json_is_object(digests)) {
		seterr(err, errlen, "\"%s\" must be an object of path -> list", table);
		return -EINVAL;
	}
	buf = malloc(LIMIT_IMA_PATH + 1);
	if (!buf)
		return -ENOMEM;
	rc = ktab_reserve(&p->paths, (size_t)p->paths.count + json_object_size(digests));
	if (rc) {
		seterr(err, errlen, "out of memory for %zu paths", json_object_size(digests));
		goto out;
	}
	/* json_object_foreach finds the next pair through the key: never reassign it. Messages
	 * quote the key (always UTF-8), never the raw path. */
	json_object_foreach((json_t *)digests, key, list) {
		bool is_ba = keylime && strcmp(key, "boot_aggregate") == 0;
		const char *path, *problem;
		size_t plen;
		long ei = -1;

		rc = -EINVAL;
		path = digests_key_path(key, form, buf, &plen, &why);
		problem = path ? path_problem(path, plen) : why;
		if (problem) {
			seterr(err, errlen, "%s[\"%.200s\"]: %s", table, key, problem);
			goto out;
		}
		if (!json_is_array(list)) {
			seterr(err, errlen, "%s[\"%.200s\"]: must be a list of digests", table, key);
			goto out;
		}
		if (json_array_size(list) > LIMIT_POLICY_DIGESTS_PER_PATH) {
			seterr(err, errlen, "%s[\"%.200s\"]: more than %u digests", table, key,
			       LIMIT_POLICY_DIGESTS_PER_PATH);
			goto out;
		}
		if (!is_ba) {
			ei = path_entry(p, path, plen);
			if (ei < 0) {
				rc = (int)ei;
				seterr(err, errlen, "%s[\"%.200s\"]: cannot store", table, key);
				goto out;
			}
		}
		json_array_foreach(list, i, v) {
			int ai = keylime ? parse_keylime_digest(v, d, &why)
				 : is_ba ? parse_alg_digest(v, d, &why)
					 : parse_file_digest(v, d, &why);

			if (ai < 0) {
				seterr(err, errlen, "%s[\"%.200s\"][%zu]: %s", table, key, i, why);
				rc = -EINVAL;
				goto out;
			}
			rc = is_ba ? ba_add(p, ai, d) : entry_add_digest(p, (uint32_t)ei, ai, d);
			if (rc) {
				seterr(err, errlen, "%s[\"%.200s\"][%zu]: cannot store (%s)", table,
				       key, i, strerror(-rc));
				goto out;
			}
		}
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

static int load_digest_list(const json_t *list, const char *key, struct policy *p,
			    int (*add)(struct policy *, int, const uint8_t *), char *err,
			    size_t errlen)
{
	uint8_t d[LIMIT_DIGEST];
	const char *why;
	json_t *v;
	size_t i;
	int rc;

	json_array_foreach(list, i, v) {
		/* digest_only lists file digests, typed; boot_aggregate's are IMA's own. */
		int ai = add == donly_add ? parse_file_digest(v, d, &why) : parse_alg_digest(v, d, &why);

		if (ai < 0) {
			seterr(err, errlen, "%s[%zu]: %s", key, i, why);
			return -EINVAL;
		}
		rc = add(p, ai, d);
		if (rc) {
			seterr(err, errlen, "%s[%zu]: cannot store (%s)", key, i, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static int load_ours(struct policy *p, const json_t *root, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	int rc;

	json_object_foreach((json_t *)root, key, v) {
		if (strcmp(key, "version") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) != POLICY_FORMAT_VERSION) {
				seterr(err, errlen, "\"version\" must be the integer %d",
				       POLICY_FORMAT_VERSION);
				return -EINVAL;
			}
		} else if (strcmp(key, "description") == 0) {
			if (!json_is_string(v)) {
				seterr(err, errlen, "\"description\" must be a string");
				return -EINVAL;
			}
			free(p->description);
			p->description = strdup(json_string_value(v));
			if (!p->description)
				return -ENOMEM;
		} else if (strcmp(key, "digests") == 0 || strcmp(key, "digests_hex") == 0) {
			rc = load_digests(p, v, key[7] ? DIGESTS_HEX : DIGESTS_OURS, err, errlen);
			if (rc)
				return rc;
		} else if (strcmp(key, "reboot_clears_open_violations") == 0) {
			if (!json_is_boolean(v)) {
				seterr(err, errlen, "\"reboot_clears_open_violations\" must be true or false");
				return -EINVAL;
			}
			p->reboot_clears = json_is_true(v);
		} else if (strcmp(key, "excludes") == 0) {
			rc = load_excludes(p, v, false, err, errlen);
			if (rc)
				return rc;
		} else if (strcmp(key, "violations") == 0) {
			if (json_is_string(v) && strcmp(json_string_value(v), "fail") == 0) {
				p->violations_ignore = false;
			} else if (json_is_string(v) && strcmp(json_string_value(v), "ignore") == 0) {
				p->violations_ignore = true;
			} else {
				seterr(err, errlen, "\"violations\" must be \"fail\" or \"ignore\"");
				return -EINVAL;
			}
		} else if (strcmp(key, "boot_aggregate") == 0) {
			if (json_is_string(v) &&
			    strcmp(json_string_value(v), POLICY_MODE_PCRS_NAME) == 0) {
				p->ba_mode = POLICY_BOOT_AGGREGATE_MATCHING_PCRS;
			} else if (json_is_array(v) && json_array_size(v) > 0) {
				rc = load_digest_list(v, "boot_aggregate", p, ba_add, err, errlen);
				if (rc)
					return rc;
			} else {
				seterr(err, errlen, "\"boot_aggregate\" must be \"%s\" or a non-empty list of \"alg:hex\"",
				       POLICY_MODE_PCRS_NAME);
				return -EINVAL;
			}
		} else if (strcmp(key, "packages") == 0) {
			rc = load_packages(p, v, err, errlen);
			if (rc)
				return rc;
		} else if (strcmp(key, "conffiles") == 0) {
			if (json_is_string(v) && strcmp(json_string_value(v), "packaged") == 0) {
				p->conffiles_any = false;
			} else if (json_is_string(v) && strcmp(json_string_value(v), "any") == 0) {
				p->conffiles_any = true;
			} else {
				seterr(err, errlen, "\"conffiles\" must be \"packaged\" or \"any\"");
				return -EINVAL;
			}
		} else if (strcmp(key, "boot") == 0) {
			p->boot = boot_policy_parse(v, err, errlen);
			if (!p->boot)
				return -EINVAL;
		} else if (strcmp(key, "digest_only") == 0) {
			if (!json_is_array(v)) {
				seterr(err, errlen, "\"digest_only\" must be a list of \"alg:hex\"");
				return -EINVAL;
			}
			rc = ktab_reserve(&p->donly, json_array_size(v));
			if (!rc)
				rc = load_digest_list(v, "digest_only", p, donly_add, err, errlen);
			if (rc)
				return rc;
		} else {
			rc = policy_keys_load(p->keys, key, v, err, errlen);
			if (rc == -ENOENT) {
				seterr(err, errlen, "unknown key \"%.100s\"", key);
				return -EINVAL;
			}
			if (rc)
				return rc;
		}
	}
	return 0;
}

struct policy *policy_load(const char *json, size_t len, char *err, size_t errlen)
{
	struct policy *p = NULL;
	json_error_t jerr;
	json_t *root = NULL;
	int rc;

	seterr(err, errlen, "no error");
	if (!json) {
		seterr(err, errlen, "no input");
		return NULL;
	}
	if (len > LIMIT_POLICY_BYTES) {
		seterr(err, errlen, "policy is %zu bytes, more than LIMIT_POLICY_BYTES (%u)", len,
		       LIMIT_POLICY_BYTES);
		return NULL;
	}
	/* Duplicate keys would let one path's digests silently replace another's. */
	root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		seterr(err, errlen, "invalid JSON at line %d column %d: %s", jerr.line, jerr.column,
		       jerr.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		seterr(err, errlen, "policy must be a JSON object");
		goto fail;
	}
	if (!depth_ok(root, 1)) {
		seterr(err, errlen, "JSON nested deeper than %u", LIMIT_JSON_DEPTH);
		goto fail;
	}
	p = policy_new();
	if (!p) {
		seterr(err, errlen, "out of memory");
		goto fail;
	}
	if (json_object_get(root, "version"))
		rc = load_ours(p, root, err, errlen);
	else if (json_object_get(root, "meta"))
		rc = load_keylime(p, root, err, errlen);
	else {
		seterr(err, errlen, "unknown policy format: no \"version\" (attest policy) and no \"meta\" (keylime runtime policy)");
		goto fail;
	}
	if (rc)
		goto fail;
	dynbuf_trim(&p->digs);
	dynbuf_trim(&p->paths.keys);
	json_decref(root);
	/* The parse tree of a large policy is many small blocks; hand them back to the system so
	 * the verifier's resident size reflects the compact tables. */
	if (len > (16u << 20))
		malloc_trim(0);
	return p;
fail:
	json_decref(root);
	policy_free(p);
	return NULL;
}
