/*
 * Allowlist policy engine: the policy object (policy.h for the API and ownership,
 * policies/README.md for the format). This file owns a policy's lifetime and its storage: the
 * path table's digest records (contiguous [alg index][digest bytes] per path in one arena), the
 * digest_only keys and the boot_aggregate list; the mutators, the lookups (policy_check()) and
 * the accessors. Loading is policy_load.c's, serialising policy_write.c's, the excludes
 * policy_exclude.c's; policy_internal.h lists the rest.
 */
#include "verifier/policy/policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/text.h"
#include "verifier/policy/boot_policy.h"
#include "verifier/policy/policy_internal.h"
#include "verifier/policy/policy_keys.h"
#include "verifier/policy/policy_packages.h"

struct policy *policy_new(void)
{
	struct policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	atomic_init(&p->refs, 1);
	dynbuf_init(&p->digs, LIMIT_POLICY_BYTES);
	dynbuf_init(&p->ba, (size_t)LIMIT_POLICY_DIGESTS_PER_PATH * sizeof(struct ba_value));
	dynbuf_init(&p->ex, (size_t)LIMIT_POLICY_EXCLUDES * sizeof(struct exclude));
	dynbuf_init(&p->warnings, POLICY_WARNINGS_BYTES);
	p->ba_mode = POLICY_BOOT_AGGREGATE_MATCHING_PCRS;
	p->keys = policy_keys_new();
	if (!p->keys || ktab_init(&p->paths) || ktab_init(&p->donly)) {
		policy_keys_free(p->keys);
		free(p);
		return NULL;
	}
	return p;
}

static void policy_destroy(struct policy *p)
{
	ktab_release(&p->paths);
	ktab_release(&p->donly);
	dynbuf_release(&p->digs);
	dynbuf_release(&p->ba);
	excludes_release(p);
	policy_keys_free(p->keys);
	dynbuf_release(&p->warnings);
	boot_policy_free(p->boot);
	policy_packages_free(p->pkgs);
	free(p->description);
	free(p);
}

struct policy *policy_ref(struct policy *p)
{
	if (p)
		atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
	return p;
}

void policy_unref(struct policy *p)
{
	if (p && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
		policy_destroy(p);
}

void policy_free(struct policy *p)
{
	policy_unref(p);
}

bool policy_shared(const struct policy *p)
{
	return atomic_load_explicit(&((struct policy *)p)->refs, memory_order_acquire) != 1;
}

/* The index of the path's record of (ai, d), or -1. */
static int records_find(const struct policy *p, const struct kentry *e, int ai, const uint8_t *d)
{
	const uint8_t *r = arena_at(&p->digs, e->dig_off);

	for (uint16_t n = 0; n < e->ndig; n++) {
		size_t sz = dk_alg(r[0])->size;

		if (r[0] == ai && memcmp(r + 1, d, sz) == 0)
			return n;
		r += 1 + sz;
	}
	return -1;
}

static bool records_contain(const struct policy *p, const struct kentry *e, int ai,
			    const uint8_t *d)
{
	return records_find(p, e, ai, d) >= 0;
}

static size_t records_len(const struct policy *p, const struct kentry *e)
{
	size_t len = 0;

	for (uint16_t n = 0; n < e->ndig; n++)
		len += 1 + dk_alg(*arena_at(&p->digs, e->dig_off + len))->size;
	return len;
}

/*
 * Appends a digest to entry ei. A path's records must stay contiguous: loading appends them in
 * order, so only a later addition to an earlier path moves that path's records to the tail.
 */
int entry_add_digest_nth(struct policy *p, uint32_t ei, int ai, const uint8_t *d,
				uint16_t *nth)
{
	struct kentry *e = ktab_ent(&p->paths, ei);
	size_t old = records_len(p, e), sz = dk_alg(ai)->size;
	int have = records_find(p, e, ai, d);
	uint8_t *at;

	if (have >= 0) {
		*nth = (uint16_t)have;
		return 0;
	}
	if (e->ndig >= LIMIT_POLICY_DIGESTS_PER_PATH)
		return -E2BIG;
	if (e->ndig && (size_t)e->dig_off + old == p->digs.len) {
		at = dynbuf_grow(&p->digs, 1 + sz);
		if (!at)
			return dynbuf_error(&p->digs);
	} else {
		at = dynbuf_grow(&p->digs, old + 1 + sz);
		if (!at)
			return dynbuf_error(&p->digs);
		memmove(at, arena_at(&p->digs, e->dig_off), old);
		e->dig_off = (uint32_t)(at - arena_at(&p->digs, 0));
		at += old;
	}
	at[0] = (uint8_t)ai;
	memcpy(at + 1, d, sz);
	/* Records are only ever appended, moved whole: a record's index in its path is stable,
	 * which is what a package's reference to it (policy_packages.h) relies on. */
	*nth = e->ndig++;
	return 0;
}

int entry_add_digest(struct policy *p, uint32_t ei, int ai, const uint8_t *d)
{
	uint16_t nth;

	return entry_add_digest_nth(p, ei, ai, d, &nth);
}

long path_entry(struct policy *p, const char *path, size_t len)
{
	long ei = ktab_find(&p->paths, path, len);

	return ei >= 0 ? ei : ktab_insert(&p->paths, path, len);
}

int donly_add(struct policy *p, int ai, const uint8_t *d)
{
	uint8_t key[1 + LIMIT_DIGEST];
	size_t klen = 1 + dk_alg(ai)->size;
	long rc;

	key[0] = (uint8_t)ai;
	memcpy(key + 1, d, dk_alg(ai)->size);
	if (ktab_find(&p->donly, key, klen) >= 0)
		return 0;
	rc = ktab_insert(&p->donly, key, klen);
	return rc < 0 ? (int)rc : 0;
}

int ba_add(struct policy *p, int ai, const uint8_t *d)
{
	struct ba_value *nb;

	for (size_t i = 0; i < p->nba; i++)
		if (ba_at(p, i)->ai == ai && memcmp(ba_at(p, i)->d, d, alg_table[ai].size) == 0)
			return 0;
	if (p->nba >= LIMIT_POLICY_DIGESTS_PER_PATH)
		return -E2BIG;
	nb = dynbuf_grow(&p->ba, sizeof(*nb));
	if (!nb)
		return dynbuf_error(&p->ba);
	memset(nb, 0, sizeof(*nb));
	nb->ai = (uint8_t)ai;
	memcpy(nb->d, d, alg_table[ai].size);
	p->nba++;
	p->ba_mode = POLICY_BOOT_AGGREGATE_LIST;
	return 0;
}

/* Why a path cannot be a key, or NULL when it can. */
const char *path_problem(const char *path, size_t len)
{
	if (len == 0)
		return "empty path";
	if (len > LIMIT_IMA_PATH)
		return "path longer than LIMIT_IMA_PATH";
	if (memchr(path, '\0', len))
		return "NUL in path";
	if (memchr(path, ' ', len))
		return "space in path: IMA records spaces as '_', write the path with '_'";
	return NULL;
}

int policy_add_digest_bytes(struct policy *p, const char *path, size_t path_len, uint16_t alg,
			    const uint8_t *digest, size_t len)
{
	return policy_add_file_digest(p, path, path_len, IMA_DIGEST_IMA, alg, digest, len);
}

int policy_add_file_digest(struct policy *p, const char *path, size_t path_len,
			   enum ima_digest_type type, uint16_t alg, const uint8_t *digest,
			   size_t len)
{
	int ai = dk_of(type, alg_index(alg));
	long ei;

	if (!p || !path || !digest || ai < 0 || len != dk_alg(ai)->size)
		return -EINVAL;
	if (policy_shared(p))
		return -EBUSY;
	/* Raw bytes: a path that is not UTF-8 is serialised under digests_hex. */
	if (path_problem(path, path_len))
		return -EINVAL;
	ei = path_entry(p, path, path_len);
	if (ei < 0)
		return (int)ei;
	return entry_add_digest(p, (uint32_t)ei, ai, digest);
}

int policy_add_digest(struct policy *p, const char *path, uint16_t alg, const uint8_t *digest,
		      size_t len)
{
	return policy_add_digest_bytes(p, path, path ? strlen(path) : 0, alg, digest, len);
}

/* --- lookups ---------------------------------------------------------------------------- */

enum policy_decision policy_check(const struct policy *p, const char *path, size_t path_len,
				  uint16_t alg, const uint8_t *digest, size_t digest_len)
{
	return policy_check_typed(p, path, path_len, IMA_DIGEST_IMA, alg, digest, digest_len);
}

enum policy_decision policy_check_typed(const struct policy *p, const char *path,
					size_t path_len, enum ima_digest_type type, uint16_t alg,
					const uint8_t *digest, size_t digest_len)
{
	int ai = dk_of(type, alg_index(alg));
	bool okdig = ai >= 0 && digest && digest_len == dk_alg(ai)->size;
	long ei;

	if (!p || (!path && path_len))
		return POLICY_NOT_IN_ALLOWLIST;
	if (path_len <= LIMIT_IMA_PATH) {
		ei = ktab_find(&p->paths, path, path_len);
		if (ei >= 0) {
			uint32_t owner;
			bool conffile;

			if (okdig && records_contain(p, ktab_ent(&p->paths, (uint32_t)ei), ai, digest))
				return POLICY_ALLOWED;
			/* "conffiles": "any": the operator accepts whatever a machine made of its
			 * configuration files, and only of those. */
			if (p->conffiles_any &&
			    policy_packages_owner(p->pkgs, (uint32_t)ei, &owner, &conffile) && conffile)
				return POLICY_EXCLUDED;
			return POLICY_DIGEST_MISMATCH;
		}
	}
	if (okdig && p->donly.count) {
		uint8_t key[1 + LIMIT_DIGEST];

		key[0] = (uint8_t)ai;
		memcpy(key + 1, digest, digest_len);
		if (ktab_find(&p->donly, key, 1 + digest_len) >= 0)
			return POLICY_ALLOWED;
	}
	if (path && path_excluded(p, path, path_len))
		return POLICY_EXCLUDED;
	return POLICY_NOT_IN_ALLOWLIST;
}

bool policy_excluded(const struct policy *p, const char *path, size_t path_len)
{
	if (!p || !path || path_len > LIMIT_IMA_PATH || ktab_find(&p->paths, path, path_len) >= 0)
		return false;
	return path_excluded(p, path, path_len);
}

const struct policy_keys *policy_keys(const struct policy *p)
{
	return p ? p->keys : NULL;
}

const char *policy_warnings(const struct policy *p)
{
	return p ? dynbuf_str(&p->warnings) : "";
}

const char *policy_warning(const struct policy *p, size_t i, size_t *len)
{
	const char *w = policy_warnings(p);

	for (; *w; i--) {
		size_t n = strcspn(w, "\n");

		if (!i) {
			*len = n;
			return w;
		}
		w += n + (w[n] == '\n');
	}
	return NULL;
}

bool policy_decision_reason(enum policy_decision d, enum reason *out)
{
	switch (d) {
	case POLICY_ALLOWED:
	case POLICY_EXCLUDED:
		return false;
	case POLICY_NOT_IN_ALLOWLIST:
		*out = REASON_NOT_IN_ALLOWLIST;
		return true;
	case POLICY_DIGEST_MISMATCH:
		*out = REASON_DIGEST_MISMATCH;
		return true;
	}
	return false;
}

bool policy_violations_allowed(const struct policy *p)
{
	return p && p->violations_ignore;
}

bool policy_reboot_clears_open_violations(const struct policy *p)
{
	return p && p->reboot_clears;
}

enum policy_boot_aggregate_mode policy_boot_aggregate_mode(const struct policy *p)
{
	return p ? p->ba_mode : POLICY_BOOT_AGGREGATE_MATCHING_PCRS;
}

bool policy_boot_aggregate_accepts(const struct policy *p, uint16_t alg, const uint8_t *digest,
				   size_t len)
{
	int ai = alg_index(alg);

	if (!p || p->ba_mode != POLICY_BOOT_AGGREGATE_LIST || ai < 0 || !digest ||
	    len != alg_table[ai].size)
		return false;
	for (size_t i = 0; i < p->nba; i++)
		if (ba_at(p, i)->ai == ai && memcmp(ba_at(p, i)->d, digest, len) == 0)
			return true;
	return false;
}

size_t policy_entry_count(const struct policy *p)
{
	return p ? p->paths.count : 0;
}

bool policy_is_keylime(const struct policy *p)
{
	return p && p->keylime;
}

size_t policy_package_count(const struct policy *p)
{
	return p ? policy_packages_count(p->pkgs) : 0;
}

bool policy_explain(const struct policy *p, const char *path, size_t path_len,
		    enum policy_decision d, char *out, size_t cap)
{
	char shown[TEXT_ESCAPED_MAX(POLICY_EXPLAIN_PATH)];
	char versions[POLICY_EXPLANATION_MAX / 2];
	uint32_t owner;
	bool conffile;
	long ei;

	if (cap)
		out[0] = '\0';
	if (!p || !p->pkgs || !path || path_len > LIMIT_IMA_PATH || !cap)
		return false;
	/* The path shown as text_render() shows any path to an operator, cut to fit a line. */
	text_render(path, path_len < POLICY_EXPLAIN_PATH ? path_len : POLICY_EXPLAIN_PATH, shown,
		    sizeof(shown));
	ei = ktab_find(&p->paths, path, path_len);
	if (d == POLICY_NOT_IN_ALLOWLIST && ei < 0) {
		snprintf(out, cap, "%s%s: no package owns this path", shown,
			 path_len > POLICY_EXPLAIN_PATH ? "..." : "");
		return true;
	}
	if (d != POLICY_DIGEST_MISMATCH || ei < 0 ||
	    !policy_packages_owner(p->pkgs, (uint32_t)ei, &owner, &conffile))
		return false;
	policy_packages_versions_text(p->pkgs, owner, versions, sizeof(versions));
	snprintf(out, cap, "%s%s: not the content of any known version of %s; %s", shown,
		 path_len > POLICY_EXPLAIN_PATH ? "..." : "", versions,
		 conffile ? "a conffile the machine changed (set \"conffiles\": \"any\" to accept local configuration)"
			  : "the file was changed after installation or comes from elsewhere");
	return true;
}

const struct boot_policy *policy_boot(const struct policy *p)
{
	return p ? p->boot : NULL;
}

int policy_boot_teach(struct policy *p, const char *category, const char *subject,
		      const char *digest, char *why, size_t whylen)
{
	if (policy_shared(p))
		return -EBUSY;
	if (!p->boot && !(p->boot = boot_policy_new()))
		return -ENOMEM;
	return boot_policy_teach(p->boot, category, subject, digest, why, whylen);
}
