/*
 * policy_internal: what the files of the allowlist engine share and nobody else sees (internal
 * to verifier/policy/; policy.h is the API). Owns the layout of struct policy: its path table
 * and digest_only table (policy_table.h), the arena of digest records, the boot_aggregate list,
 * the compiled excludes and the sections other files keep (policy_keys, boot_policy,
 * policy_packages).
 *
 * Who implements what:
 *   policy.c               the object: lifetime, the digest records of a path, mutators,
 *                          lookups and accessors
 *   policy_table.c         the key table (policy_table.h)
 *   policy_digest.c        "alg:hex" text and algorithm names (policy_digest.h)
 *   policy_json.c          digests as JSON values, loader errors and warnings (policy_json.h)
 *   policy_exclude.c       exclude patterns: compiled, matched, loaded from a list
 *   policy_load.c          policy_load(): our format's keys and tables
 *   policy_load_packages.c our format's "packages" section
 *   policy_keylime.c       a Keylime runtime policy, and its Python patterns as POSIX EREs
 *   policy_write.c         policy_to_json(), policy_json_path_digests()
 */
#ifndef VERIFIER_POLICY_INTERNAL_H
#define VERIFIER_POLICY_INTERNAL_H

#include <regex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "proto/alg.h"
#include "proto/dynbuf.h"
#include "proto/limits.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_json.h"
#include "verifier/policy/policy_table.h"

#define POLICY_FORMAT_VERSION 1
/* Import warnings: LIMIT_POLICY_WARNINGS lines of at most POLICY_WARNING_LINE bytes. */
#define POLICY_WARNING_LINE 384u
#define POLICY_WARNINGS_BYTES (LIMIT_POLICY_WARNINGS * (POLICY_WARNING_LINE + 1u))
#define POLICY_MODE_PCRS_NAME "any-matching-pcrs"

/* Where a digests table comes from: its keys are paths, hex of raw paths, or Keylime's. */
enum digests_form {
	DIGESTS_OURS,    /* "digests": UTF-8 path -> ["alg:hex"] */
	DIGESTS_HEX,     /* "digests_hex": hex of a path that is not UTF-8 -> ["alg:hex"] */
	DIGESTS_KEYLIME, /* Keylime "digests": path -> [hex] */
};

#define seterr policy_seterr

/* --- algorithms: proto/alg rows that allow ALG_USE_POLICY; records store the row index --- */

#define NALGS ALG_COUNT

static inline int alg_index(uint16_t id)
{
	const struct alg *a = alg_for_use(id, ALG_USE_POLICY);

	return a ? (int)(a - alg_table) : -1;
}

/*
 * A stored file digest's first byte (a path's records, digest_only's keys): the index of its
 * algorithm in alg_table, with DIG_VERITY set for an fs-verity digest ("verity:alg:hex"), so
 * that a digest matches only one of its own type. boot_aggregate's list holds plain indices.
 */
#define DIG_VERITY 0x80
_Static_assert(ALG_COUNT < DIG_VERITY, "an algorithm index leaves DIG_VERITY free");

static inline const struct alg *dk_alg(int dk)
{
	return &alg_table[dk & ~DIG_VERITY];
}

/* The stored byte of a digest of this type and algorithm index, or -1 (IMA_DIGEST_OTHER). */
static inline int dk_of(enum ima_digest_type type, int ai)
{
	if (ai < 0 || type == IMA_DIGEST_OTHER)
		return -1;
	return type == IMA_DIGEST_VERITY ? (ai | DIG_VERITY) : ai;
}

/* --- the policy ------------------------------------------------------------------------- */

struct ba_value {
	uint8_t ai;  /* index into alg_table */
	uint8_t d[LIMIT_DIGEST];
};

struct exclude {
	char *src;   /* our syntax, as serialised */
	regex_t re;  /* "^(src)$" */
};

struct policy {
	atomic_size_t refs;
	bool keylime;
	bool violations_ignore;
	bool reboot_clears; /* "reboot_clears_open_violations": true */
	enum policy_boot_aggregate_mode ba_mode;
	char *description;
	struct ktab paths;  /* path -> digests */
	struct ktab donly;  /* [ai][digest] -> nothing: digest_only */
	struct dynbuf digs; /* arena of [ai][digest] records */
	struct dynbuf ba;   /* struct ba_value[nba], at most LIMIT_POLICY_DIGESTS_PER_PATH */
	size_t nba;
	struct dynbuf ex;   /* struct exclude[nex], at most LIMIT_POLICY_EXCLUDES */
	size_t nex;
	struct policy_keys *keys; /* signature section: policy_keys.c */
	struct dynbuf warnings;   /* import warnings, one per line */
	struct boot_policy *boot; /* the "boot" section (boot_policy.c); NULL: none */
	struct policy_packages *pkgs; /* the "packages" section (policy_packages.c); NULL: none */
	bool conffiles_any;       /* "conffiles": "any": a conffile's path passes with any content */
};

static inline struct ba_value *ba_at(const struct policy *p, size_t i)
{
	return (struct ba_value *)p->ba.buf + i;
}

static inline struct exclude *ex_at(const struct policy *p, size_t i)
{
	return (struct exclude *)p->ex.buf + i;
}

/* policy.c: true while more than one reference exists (mutators then answer -EBUSY). */
bool policy_shared(const struct policy *p);
/* policy.c: the entry of path in the path table, added when absent; its index or -errno. */
long path_entry(struct policy *p, const char *path, size_t len);
/* policy.c: why a path cannot be a key, or NULL when it can. */
const char *path_problem(const char *path, size_t len);
/*
 * policy.c: appends digest (ai, d) to entry ei unless listed (0 either way, -E2BIG, -ENOMEM);
 * *nth gets the record's index in its path, which never changes.
 */
int entry_add_digest_nth(struct policy *p, uint32_t ei, int ai, const uint8_t *d, uint16_t *nth);
int entry_add_digest(struct policy *p, uint32_t ei, int ai, const uint8_t *d);
/* policy.c: adds a digest_only key, or a boot_aggregate value (the mode becomes LIST). */
int donly_add(struct policy *p, int ai, const uint8_t *d);
int ba_add(struct policy *p, int ai, const uint8_t *d);

/* policy_exclude.c: compiles and adds one exclude in our syntax (0, -E2BIG, -EINVAL, -ENOMEM;
 * why says which). */
int exclude_add(struct policy *p, const char *src, char *why, size_t whylen);
/* policy_exclude.c: true when an exclude matches the whole path. */
bool path_excluded(const struct policy *p, const char *path, size_t len);
/* policy_exclude.c: frees the compiled excludes (the policy is being destroyed). */
void excludes_release(struct policy *p);
/* policy_exclude.c: an "excludes" list, ours or (keylime) Python patterns. */
int load_excludes(struct policy *p, const json_t *list, bool keylime, char *err, size_t errlen);

/* policy_json.c: a digest JSON value; its alg index (file digests: its stored byte) or -1. */
int parse_alg_digest(const json_t *v, uint8_t *out, const char **why);
int parse_file_digest(const json_t *v, uint8_t *out, const char **why);
int parse_keylime_digest(const json_t *v, uint8_t *out, const char **why);
/* policy_json.c: the stored digest (its stored byte, then the bytes) as a JSON string. */
json_t *digest_json(int ai, const uint8_t *d);

/* policy_load.c: the raw path a digests table's key stands for (see there). */
const char *digests_key_path(const char *key, enum digests_form form, char *buf, size_t *plen,
			     const char **why);
/* policy_load.c: a digests table into the path table. */
int load_digests(struct policy *p, const json_t *digests, enum digests_form form, char *err,
		 size_t errlen);

/* policy_load_packages.c: the "packages" section. */
int load_packages(struct policy *p, const json_t *arr, char *err, size_t errlen);

/* policy_keylime.c: a Keylime runtime policy into p; a Python pattern in our syntax. */
int load_keylime(struct policy *p, const json_t *root, char *err, size_t errlen);
char *keylime_regex(const char *py, const char **why, char *whybuf, size_t whylen);

#endif
