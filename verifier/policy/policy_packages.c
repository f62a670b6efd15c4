/*
 * Package versions of a policy and the owner of each path (policy_packages.h). Built for a
 * whole Debian release: one string arena, one array of versions, one array of 8-byte refs and
 * one 4-byte owner per path entry; no allocation per package or per file.
 */
#include "verifier/policy/policy_packages.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dynbuf.h"
#include "proto/limits.h"

/* The owner word of a path entry: version index + 1 (0: none), and the conffile bit. */
#define OWNER_CONFFILE 0x80000000u
#define OWNER_ID_MASK 0x7fffffffu
_Static_assert(LIMIT_POLICY_PACKAGES < OWNER_ID_MASK, "version ids fit the owner word");

struct pkgver {
	uint32_t name_off, version_off, arch_off; /* into strs */
	uint32_t ref_first, nrefs;                /* into refs */
	int64_t missing_since;
};

struct policy_packages {
	struct dynbuf strs;   /* NUL-terminated strings */
	struct dynbuf vers;   /* struct pkgver[nvers] */
	struct dynbuf refs;   /* struct policy_package_ref[], each version's contiguous */
	struct dynbuf owners; /* uint32_t per path entry, as far as one was set */
	size_t nvers;
};

static const struct pkgver *ver_at(const struct policy_packages *pk, size_t i)
{
	return (const struct pkgver *)pk->vers.buf + i;
}

static const char *str_at(const struct policy_packages *pk, uint32_t off)
{
	return pk->strs.buf + off;
}

struct policy_packages *policy_packages_new(void)
{
	struct policy_packages *pk = calloc(1, sizeof(*pk));

	if (!pk)
		return NULL;
	dynbuf_init(&pk->strs, (size_t)LIMIT_POLICY_PACKAGES * 3 * (LIMIT_PACKAGE_FIELD + 1));
	dynbuf_init(&pk->vers, (size_t)LIMIT_POLICY_PACKAGES * sizeof(struct pkgver));
	/* Every ref stands for one digest in the JSON (at least 40 bytes of hex). */
	dynbuf_init(&pk->refs, (size_t)LIMIT_POLICY_ENTRIES * sizeof(struct policy_package_ref));
	dynbuf_init(&pk->owners, (size_t)LIMIT_POLICY_ENTRIES * sizeof(uint32_t));
	return pk;
}

void policy_packages_free(struct policy_packages *pk)
{
	if (!pk)
		return;
	dynbuf_release(&pk->strs);
	dynbuf_release(&pk->vers);
	dynbuf_release(&pk->refs);
	dynbuf_release(&pk->owners);
	free(pk);
}

static int add_str(struct policy_packages *pk, const char *s, uint32_t *off)
{
	size_t n = strlen(s);
	char *at;

	if (n > LIMIT_PACKAGE_FIELD)
		return -E2BIG;
	at = dynbuf_grow(&pk->strs, n + 1);
	if (!at)
		return dynbuf_error(&pk->strs);
	memcpy(at, s, n + 1);
	*off = (uint32_t)(at - pk->strs.buf);
	return 0;
}

int policy_packages_add_version(struct policy_packages *pk, const char *name,
				const char *version, const char *arch, int64_t missing_since,
				uint32_t *id)
{
	struct pkgver v = { .missing_since = missing_since };
	size_t strs_len = pk->strs.len;
	int rc;

	if (pk->nvers >= LIMIT_POLICY_PACKAGES)
		return -E2BIG;
	/* A linear check would cost a release's load n^2: the caller checks duplicates
	 * (policy_load_packages.c keys them in its table); this module only stores. */
	rc = add_str(pk, name, &v.name_off);
	if (!rc)
		rc = add_str(pk, version, &v.version_off);
	if (!rc)
		rc = add_str(pk, arch, &v.arch_off);
	if (!rc) {
		v.ref_first = (uint32_t)(pk->refs.len / sizeof(struct policy_package_ref));
		rc = dynbuf_add(&pk->vers, &v, sizeof(v));
	}
	if (rc) {
		dynbuf_setlen(&pk->strs, strs_len);
		return rc;
	}
	*id = (uint32_t)pk->nvers++;
	return 0;
}

int policy_packages_add_ref(struct policy_packages *pk, uint32_t entry, uint16_t nth,
			    bool conffile)
{
	struct policy_package_ref r = { .entry = entry, .nth = nth, .conffile = conffile };
	struct pkgver *v;
	uint32_t *owner, id;
	size_t have = pk->owners.len / sizeof(uint32_t);
	int rc;

	if (!pk->nvers)
		return -EINVAL;
	id = (uint32_t)pk->nvers - 1;
	if (entry >= have) {
		size_t grow = ((size_t)entry + 1 - have) * sizeof(uint32_t);
		void *at = dynbuf_grow(&pk->owners, grow);

		if (!at)
			return dynbuf_error(&pk->owners);
		memset(at, 0, grow);
	}
	rc = dynbuf_add(&pk->refs, &r, sizeof(r));
	if (rc)
		return rc;
	v = (struct pkgver *)pk->vers.buf + id;
	v->nrefs++;
	owner = (uint32_t *)pk->owners.buf + entry;
	if (!(*owner & OWNER_ID_MASK))
		*owner |= id + 1;
	if (conffile)
		*owner |= OWNER_CONFFILE;
	return 0;
}

int policy_packages_mark_conffile(struct policy_packages *pk, uint32_t entry)
{
	struct policy_package_ref *refs = (struct policy_package_ref *)pk->refs.buf;
	const struct pkgver *v;
	bool found = false;

	if (!pk->nvers)
		return -ENOENT;
	v = ver_at(pk, pk->nvers - 1);
	for (uint32_t r = v->ref_first; r < v->ref_first + v->nrefs; r++)
		if (refs[r].entry == entry) {
			refs[r].conffile = 1;
			found = true;
		}
	if (!found)
		return -ENOENT;
	((uint32_t *)pk->owners.buf)[entry] |= OWNER_CONFFILE;
	return 0;
}

size_t policy_packages_count(const struct policy_packages *pk)
{
	return pk ? pk->nvers : 0;
}

void policy_packages_version(const struct policy_packages *pk, size_t i, const char **name,
			     const char **version, const char **arch, int64_t *missing_since,
			     const struct policy_package_ref **refs, size_t *nrefs)
{
	const struct pkgver *v = ver_at(pk, i);

	*name = str_at(pk, v->name_off);
	*version = str_at(pk, v->version_off);
	*arch = str_at(pk, v->arch_off);
	*missing_since = v->missing_since;
	*refs = (const struct policy_package_ref *)pk->refs.buf + v->ref_first;
	*nrefs = v->nrefs;
}

bool policy_packages_owner(const struct policy_packages *pk, uint32_t entry, uint32_t *id,
			   bool *conffile)
{
	uint32_t o;

	if (!pk || entry >= pk->owners.len / sizeof(uint32_t))
		return false;
	o = ((const uint32_t *)pk->owners.buf)[entry];
	if (!(o & OWNER_ID_MASK))
		return false;
	*id = (o & OWNER_ID_MASK) - 1;
	*conffile = (o & OWNER_CONFFILE) != 0;
	return true;
}

/* true when a version of `name` before index i has the same version string. */
static bool seen_before(const struct policy_packages *pk, size_t i, const char *name,
			const char *version)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(str_at(pk, ver_at(pk, j)->name_off), name) &&
		    !strcmp(str_at(pk, ver_at(pk, j)->version_off), version))
			return true;
	return false;
}

char *policy_packages_versions_text(const struct policy_packages *pk, uint32_t id, char *out,
				    size_t cap)
{
	const char *name = str_at(pk, ver_at(pk, id)->name_off);
	size_t off, listed = 0;
	int n;

	if (!cap)
		return out;
	n = snprintf(out, cap, "%s", name);
	off = n < 0 || (size_t)n >= cap ? cap - 1 : (size_t)n;
	/* Linear in the versions held: run for a violation an operator reads, not per lookup. */
	for (size_t i = 0; i < pk->nvers; i++) {
		const char *ver = str_at(pk, ver_at(pk, i)->version_off);

		if (strcmp(str_at(pk, ver_at(pk, i)->name_off), name) || seen_before(pk, i, name, ver))
			continue;
		/* Room for this version and a later ", ..." */
		if (off + strlen(ver) + 2 + 5 >= cap) {
			if (off + 5 < cap)
				off += (size_t)snprintf(out + off, cap - off, ", ...");
			break;
		}
		off += (size_t)snprintf(out + off, cap - off, "%s%s", listed++ ? ", " : " ", ver);
	}
	return out;
}
