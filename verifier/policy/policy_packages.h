/*
 * policy_packages: where a policy's digests come from. A policy built from Debian packages
 * (policies/README.md, "Packages") keeps, for each package version (name, version,
 * architecture), the files it installs and the digest records of each; a path's owner is the
 * first version that listed it. policy_load_packages.c reads the JSON and policy.c owns the
 * path table; this module owns the versions, the references from each version to (path entry,
 * digest record) and the owner of each path entry, so that a violation can name the package and
 * its known versions.
 *
 * Ownership: policy_packages_new() returns an empty table the caller frees with
 * policy_packages_free() (NULL is fine). Strings passed in are copied. Lookups are read-only and
 * thread-safe once loading is over.
 */
#ifndef VERIFIER_POLICY_PACKAGES_H
#define VERIFIER_POLICY_PACKAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct policy_packages;

/* One file digest of a version: path entry `entry` of the policy's table, its record `nth`. */
struct policy_package_ref {
	uint32_t entry;
	uint16_t nth;
	uint16_t conffile; /* 1: a conffile of this version (dpkg's conffiles list) */
};

struct policy_packages *policy_packages_new(void);
void policy_packages_free(struct policy_packages *pk);

/*
 * Adds a version (name, version, architecture; missing_since 0 or the Unix time an archive
 * update first found it gone) and makes it the one later refs belong to. *id is its index.
 * 0, -EEXIST when that (name, version, architecture) is there already, -E2BIG, -ENOMEM.
 */
int policy_packages_add_version(struct policy_packages *pk, const char *name,
				const char *version, const char *arch, int64_t missing_since,
				uint32_t *id);
/* Adds a ref to the last version added; the path entry's owner becomes it if it had none. */
int policy_packages_add_ref(struct policy_packages *pk, uint32_t entry, uint16_t nth,
			    bool conffile);

/*
 * Marks path entry `entry` a conffile of the last version added (each of its refs there) and
 * of the path. 0, or -ENOENT when that version has no ref to the entry.
 */
int policy_packages_mark_conffile(struct policy_packages *pk, uint32_t entry);

size_t policy_packages_count(const struct policy_packages *pk);
/* Version i: its strings (NUL-terminated, owned by pk), missing_since, and its refs. */
void policy_packages_version(const struct policy_packages *pk, size_t i, const char **name,
			     const char **version, const char **arch, int64_t *missing_since,
			     const struct policy_package_ref **refs, size_t *nrefs);

/*
 * The owner of path entry `entry`: true with *id its version's index (and *conffile whether any
 * version marks the path a conffile), false when no package lists the path.
 */
bool policy_packages_owner(const struct policy_packages *pk, uint32_t entry, uint32_t *id,
			   bool *conffile);
/*
 * "foo 1.0-1, 1.1-1": the owner's name and every version of that name the policy holds, in
 * the order loaded, each once, into out[cap] (cut at a version boundary with ", ..." when
 * longer). Returns out.
 */
char *policy_packages_versions_text(const struct policy_packages *pk, uint32_t id, char *out,
				    size_t cap);

#endif
