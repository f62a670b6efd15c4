/*
 * policy_load_packages: our format's "packages" section: each Debian package version with its
 * files (digests added to the path table and referenced from the version, policy_packages.h)
 * and its conffiles.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/policy/policy_internal.h"
#include "verifier/policy/policy_packages.h"

/*
 * A package field as Debian spells it (policy 5.6.1, 5.6.7, 5.6.12): a name of lowercase
 * letters, digits and "+-.", a version of letters, digits and ".+~:-", an architecture of
 * lowercase letters, digits and "-". Narrower than what JSON carries, so that a violation's
 * text naming the package can be read as it is.
 */
static const char *package_field(const json_t *o, const char *key, const char *allowed)
{
	const json_t *v = json_object_get(o, key);
	const char *s;
	size_t n;

	if (!json_is_string(v))
		return NULL;
	s = json_string_value(v);
	n = json_string_length(v);
	if (n == 0 || n > LIMIT_PACKAGE_FIELD || strlen(s) != n || strspn(s, allowed) != n)
		return NULL;
	return s;
}

#define PKG_LOWER "abcdefghijklmnopqrstuvwxyz0123456789"
#define PKG_NAME_CHARS PKG_LOWER "+-."
#define PKG_VERSION_CHARS PKG_LOWER "ABCDEFGHIJKLMNOPQRSTUVWXYZ.+~:-"
#define PKG_ARCH_CHARS PKG_LOWER "-"

/* The files (or files_hex) of version `id`: each digest added to the path table and refed. */
static int load_package_files(struct policy *p, const json_t *files, enum digests_form form,
			      const char *where, char *err, size_t errlen)
{
	const char *table = form == DIGESTS_HEX ? "files_hex" : "files";
	uint8_t d[LIMIT_DIGEST];
	const char *key, *why;
	char *buf = NULL;
	json_t *list, *v;
	size_t i;
	int rc = 0;

	if (!files)
		return 0;
	if (!json_is_object(files)) {
		seterr(err, errlen, "%s: \"%s\" must be an object of path -> list", where, table);
		return -EINVAL;
	}
	buf = malloc(LIMIT_IMA_PATH + 1);
	if (!buf)
		return -ENOMEM;
	rc = ktab_reserve(&p->paths, (size_t)p->paths.count + json_object_size(files));
	if (rc) {
		seterr(err, errlen, "%s: out of memory for %zu paths", where, json_object_size(files));
		goto out;
	}
	json_object_foreach((json_t *)files, key, list) {
		const char *path, *problem;
		size_t plen;
		long ei;

		rc = -EINVAL;
		path = digests_key_path(key, form, buf, &plen, &why);
		problem = path ? path_problem(path, plen) : why;
		if (problem) {
			seterr(err, errlen, "%s: %s[\"%.200s\"]: %s", where, table, key, problem);
			goto out;
		}
		if (!json_is_array(list) || json_array_size(list) == 0 ||
		    json_array_size(list) > LIMIT_POLICY_DIGESTS_PER_PATH) {
			seterr(err, errlen, "%s: %s[\"%.200s\"]: must be a list of 1 to %u digests",
			       where, table, key, LIMIT_POLICY_DIGESTS_PER_PATH);
			goto out;
		}
		ei = path_entry(p, path, plen);
		if (ei < 0) {
			rc = (int)ei;
			seterr(err, errlen, "%s: %s[\"%.200s\"]: cannot store", where, table, key);
			goto out;
		}
		json_array_foreach(list, i, v) {
			int ai = parse_file_digest(v, d, &why);
			uint16_t nth;

			if (ai < 0) {
				seterr(err, errlen, "%s: %s[\"%.200s\"][%zu]: %s", where, table, key, i,
				       why);
				rc = -EINVAL;
				goto out;
			}
			rc = entry_add_digest_nth(p, (uint32_t)ei, ai, d, &nth);
			if (!rc)
				rc = policy_packages_add_ref(p->pkgs, (uint32_t)ei, nth, false);
			if (rc) {
				seterr(err, errlen, "%s: %s[\"%.200s\"][%zu]: cannot store (%s)", where,
				       table, key, i, strerror(-rc));
				goto out;
			}
		}
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

/* conffiles (or conffiles_hex): paths of this version's files that dpkg treats as conffiles. */
static int load_package_conffiles(struct policy *p, const json_t *list, enum digests_form form,
				  const char *where, char *err, size_t errlen)
{
	const char *table = form == DIGESTS_HEX ? "conffiles_hex" : "conffiles";
	char buf[LIMIT_IMA_PATH + 1];
	const char *why;
	size_t i;
	json_t *v;

	if (!list)
		return 0;
	if (!json_is_array(list)) {
		seterr(err, errlen, "%s: \"%s\" must be a list of paths", where, table);
		return -EINVAL;
	}
	json_array_foreach(list, i, v) {
		const char *path;
		size_t plen;
		long ei;

		path = json_is_string(v) ? digests_key_path(json_string_value(v), form, buf, &plen, &why)
					 : NULL;
		ei = path && !path_problem(path, plen) ? ktab_find(&p->paths, path, plen) : -1;
		/* Only a path among this version's files: the mark is the version's word on it. */
		if (ei < 0 || policy_packages_mark_conffile(p->pkgs, (uint32_t)ei)) {
			seterr(err, errlen, "%s: %s[%zu]: not a path among the version's files", where,
			       table, i);
			return -EINVAL;
		}
	}
	return 0;
}

int load_packages(struct policy *p, const json_t *arr, char *err, size_t errlen)
{
	static const char *const known[] = {"package", "version", "architecture", "files",
					    "files_hex", "conffiles", "conffiles_hex",
					    "missing_since"};
	struct ktab seen;
	json_t *o;
	size_t i;
	int rc;

	if (!json_is_array(arr)) {
		seterr(err, errlen, "\"packages\" must be a list of package versions");
		return -EINVAL;
	}
	if (p->pkgs) {
		seterr(err, errlen, "\"packages\" given twice");
		return -EINVAL;
	}
	p->pkgs = policy_packages_new();
	if (!p->pkgs || ktab_init(&seen)) {
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	json_array_foreach(arr, i, o) {
		const char *name, *ver, *arch, *key;
		char where[3 * LIMIT_PACKAGE_FIELD + 32], id3[3 * (LIMIT_PACKAGE_FIELD + 1)];
		const json_t *ms, *v;
		uint32_t id;
		int n;

		rc = -EINVAL;
		if (!json_is_object(o)) {
			seterr(err, errlen, "packages[%zu]: must be an object", i);
			goto out;
		}
		json_object_foreach((json_t *)o, key, v) {
			size_t k = 0;

			while (k < sizeof(known) / sizeof(known[0]) && strcmp(key, known[k]))
				k++;
			if (k == sizeof(known) / sizeof(known[0])) {
				seterr(err, errlen, "packages[%zu]: unknown key \"%.64s\"", i, key);
				goto out;
			}
		}
		name = package_field(o, "package", PKG_NAME_CHARS);
		ver = package_field(o, "version", PKG_VERSION_CHARS);
		arch = package_field(o, "architecture", PKG_ARCH_CHARS);
		if (!name || !ver || !arch) {
			seterr(err, errlen, "packages[%zu]: \"package\", \"version\" and \"architecture\" must be Debian's words (a name of [a-z0-9+.-], a version of [A-Za-z0-9.+~:-], an architecture of [a-z0-9-], each 1 to %u bytes)",
			       i, LIMIT_PACKAGE_FIELD);
			goto out;
		}
		snprintf(where, sizeof(where), "packages[%zu] (%s %s %s)", i, name, ver, arch);
		ms = json_object_get(o, "missing_since");
		if (ms && (!json_is_integer(ms) || json_integer_value(ms) <= 0)) {
			seterr(err, errlen, "%s: \"missing_since\" must be a positive Unix time", where);
			goto out;
		}
		n = snprintf(id3, sizeof(id3), "%s%c%s%c%s", name, 0, ver, 0, arch);
		if (ktab_find(&seen, id3, (size_t)n) >= 0) {
			seterr(err, errlen, "%s: listed twice", where);
			goto out;
		}
		if (ktab_insert(&seen, id3, (size_t)n) < 0 ||
		    (rc = policy_packages_add_version(p->pkgs, name, ver, arch,
						      ms ? json_integer_value(ms) : 0, &id))) {
			seterr(err, errlen, "%s: cannot store", where);
			rc = rc ? rc : -ENOMEM;
			goto out;
		}
		rc = load_package_files(p, json_object_get(o, "files"), DIGESTS_OURS, where, err, errlen);
		if (!rc)
			rc = load_package_files(p, json_object_get(o, "files_hex"), DIGESTS_HEX, where,
						err, errlen);
		if (!rc)
			rc = load_package_conffiles(p, json_object_get(o, "conffiles"), DIGESTS_OURS,
						    where, err, errlen);
		if (!rc)
			rc = load_package_conffiles(p, json_object_get(o, "conffiles_hex"), DIGESTS_HEX,
						    where, err, errlen);
		if (rc)
			goto out;
	}
	rc = 0;
out:
	ktab_release(&seen);
	return rc;
}
