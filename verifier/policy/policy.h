/*
 * policy: the allowlist engine. Loads a policy JSON (ours, or a Keylime runtime policy), answers
 * "may this file digest appear at this path" in O(1), and serialises a policy back to JSON so an
 * operator's approval can become a new policy version. Format: policies/README.md.
 *
 * Ownership and threads:
 *  - policy_load() and policy_new() return a policy holding one reference. policy_ref() adds one,
 *    policy_unref() drops one and frees at zero; policy_free() is the same as policy_unref().
 *    The count is atomic, so agents served by different threads may share one policy.
 *  - Lookups (policy_check() and every const accessor) never write and are safe to call from
 *    many threads at once on a shared policy.
 *  - Mutators (policy_add_digest(), policy_add_exclude()) are for a private copy only: they fail
 *    with -EBUSY while more than one reference exists. To amend a live policy: load its JSON
 *    again, add, serialise, store, and swap the new policy in.
 *  - policy_to_json() returns a malloc'd string; the caller free()s it.
 */
#ifndef VERIFIER_POLICY_H
#define VERIFIER_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/imalog.h" /* enum ima_digest_type */
#include "verifier/facts/reasons.h"
#include "verifier/policy/policy_digest.h" /* the digest spelling: alg:hex */

struct policy;
struct policy_keys;

/* The result of judging one measurement. Only ALLOWED and EXCLUDED let an entry pass. */
enum policy_decision {
	POLICY_ALLOWED,          /* digest listed for this path, or (unknown path) in digest_only */
	POLICY_EXCLUDED,         /* unknown path matching an exclude pattern: any content passes */
	POLICY_NOT_IN_ALLOWLIST, /* unknown path, digest not in digest_only, no exclude matches */
	POLICY_DIGEST_MISMATCH,  /* path listed, digest (with this alg) not among its digests */
};

enum policy_boot_aggregate_mode {
	/* Accept the boot_aggregate entry iff it equals the value the verifier recomputes from the
	 * quoted PCRs 0-9 (0-7 for sha1). The default. */
	POLICY_BOOT_AGGREGATE_MATCHING_PCRS,
	/* Accept only the listed values (policy_boot_aggregate_accepts()). */
	POLICY_BOOT_AGGREGATE_LIST,
};

/*
 * Parses a policy. The input need not be NUL-terminated; at most LIMIT_POLICY_BYTES. On error
 * returns NULL and writes a one-line reason naming the offending key or path into err
 * (errlen may be 0). Every value is type-checked; unknown keys are rejected in our format and,
 * in the Keylime format, named in policy_warnings().
 */
struct policy *policy_load(const char *json, size_t len, char *err, size_t errlen);
/* An empty policy in our format (version 1, violations fail, boot_aggregate by PCRs). */
struct policy *policy_new(void);

struct policy *policy_ref(struct policy *p);
void policy_unref(struct policy *p);
void policy_free(struct policy *p);

/*
 * Judges one measurement. path need not be NUL-terminated. alg is a TPM2_ALG_ID (sha1, sha256,
 * sha384, sha512); a digest matches only a listed digest of the same algorithm and length, so an
 * entry pinned to sha256 never accepts a sha1 digest. Order: the path table first (a listed path
 * is decided by its digests alone), then, for unknown paths, digest_only, then the excludes.
 */
enum policy_decision policy_check(const struct policy *p, const char *path, size_t path_len,
				  uint16_t alg, const uint8_t *digest, size_t digest_len);
/*
 * The same for a digest of a type: IMA's file hash (what policy_check() judges; listed as
 * "alg:hex" or "ima:alg:hex") or an fs-verity digest (listed as "verity:alg:hex"). A digest
 * matches only a listed one of its type: a file's fs-verity digest is not its hash.
 * IMA_DIGEST_OTHER matches nothing.
 */
enum policy_decision policy_check_typed(const struct policy *p, const char *path,
					size_t path_len, enum ima_digest_type type, uint16_t alg,
					const uint8_t *digest, size_t digest_len);
/*
 * true when path is not in the digests table and an exclude pattern matches it: policy_check()
 * would say EXCLUDED for any digest. An excluded path accepts anything, so verifier/decision/judge.c
 * asks this before it looks at a file's signature (Keylime's order).
 */
bool policy_excluded(const struct policy *p, const char *path, size_t path_len);
/* The policy's signature section: trusted keys, required signatures, keyrings (policy_keys.h). */
const struct policy_keys *policy_keys(const struct policy *p);
/*
 * What loading a Keylime policy could not enforce as Keylime would, one warning per line
 * ("" when none); the PUT's answer and `attestctl policy put` show them.
 */
const char *policy_warnings(const struct policy *p);
/* Warning i of those (its *len bytes, not NUL-terminated), or NULL past the last. */
const char *policy_warning(const struct policy *p, size_t i, size_t *len);
/* The verdict reason of a decision that refuses the entry (reasons.h): true with *out for
 * NOT_IN_ALLOWLIST and DIGEST_MISMATCH; false for ALLOWED and EXCLUDED, which let it pass. */
bool policy_decision_reason(enum policy_decision d, enum reason *out);

/* true when the policy says "violations": "ignore" (ToMToU/open_writers entries pass). */
bool policy_violations_allowed(const struct policy *p);
/* true when the policy says "reboot_clears_open_violations": true: violations of earlier boots
 * that await review no longer keep an agent untrusted (the default keeps them until reviewed). */
bool policy_reboot_clears_open_violations(const struct policy *p);
enum policy_boot_aggregate_mode policy_boot_aggregate_mode(const struct policy *p);
/* In LIST mode: true iff (alg, digest) is listed. In MATCHING_PCRS mode: always false, the
 * verifier compares with its own recomputation instead. */
bool policy_boot_aggregate_accepts(const struct policy *p, uint16_t alg, const uint8_t *digest,
				   size_t len);
/* Number of paths in the digests table. */
size_t policy_entry_count(const struct policy *p);
/* Number of package versions in the "packages" section (0: none). */
size_t policy_package_count(const struct policy *p);
/*
 * A decision about path in words an operator can act on, for a policy built from packages,
 * into out[cap] (POLICY_EXPLANATION_MAX holds any): for DIGEST_MISMATCH of a path a package
 * owns, "PATH: not the content of any known version of foo 1.0-1, 1.1-1; the file was changed
 * after installation or comes from elsewhere"; for NOT_IN_ALLOWLIST of a path no package and no
 * digest lists, "PATH: no package owns this path". false (out "") when there is nothing to say:
 * another decision, or a policy without packages. Paths that are not UTF-8 are shown escaped.
 */
#define POLICY_EXPLAIN_PATH 512u
#define POLICY_EXPLANATION_MAX 2048u
bool policy_explain(const struct policy *p, const char *path, size_t path_len,
		    enum policy_decision d, char *out, size_t cap);
/* true when the policy came from a Keylime runtime policy. */
bool policy_is_keylime(const struct policy *p);

/* The "boot" section (verifier/policy/boot_policy.h), or NULL when the policy has none. */
struct boot_policy;
const struct boot_policy *policy_boot(const struct policy *p);
/*
 * Approval of a boot finding: boot_policy_teach() on this policy's boot section (created if
 * missing). -EBUSY if the policy is shared; else what boot_policy_teach() returns.
 */
int policy_boot_teach(struct policy *p, const char *category, const char *subject,
		      const char *digest, char *why, size_t whylen);

/*
 * Adds one digest to a path (creating the path): path_len raw bytes, as IMA recorded them (a
 * path that is not UTF-8 is kept byte for byte and serialised under "digests_hex"). 0 on
 * success, also when it was present already; -EINVAL for an unknown alg, wrong length or bad
 * path (empty, too long, NUL, space); -E2BIG past LIMIT_POLICY_DIGESTS_PER_PATH; -EBUSY if the
 * policy is shared; -ENOMEM.
 */
int policy_add_digest_bytes(struct policy *p, const char *path, size_t path_len, uint16_t alg,
			    const uint8_t *digest, size_t len);
/* The same for a digest of a type (policy_check_typed()); -EINVAL for IMA_DIGEST_OTHER. */
int policy_add_file_digest(struct policy *p, const char *path, size_t path_len,
			   enum ima_digest_type type, uint16_t alg, const uint8_t *digest,
			   size_t len);
/* The same for a NUL-terminated path. */
int policy_add_digest(struct policy *p, const char *path, uint16_t alg, const uint8_t *digest,
		      size_t len);
/* Adds an exclude pattern (our syntax: POSIX ERE, matched against the whole path). 0, -EINVAL
 * if regcomp refuses it, -EBUSY, -ENOMEM. */
int policy_add_exclude(struct policy *p, const char *regex);

/*
 * The digests the policy lists for path (path_len raw bytes, as IMA recorded it), "alg:hex" each,
 * in a new JSON array (jansson's json_t): what an operator compares a digest_mismatch with.
 * NULL when the path is not listed (or on allocation failure).
 */
struct json_t;
struct json_t *policy_json_path_digests(const struct policy *p, const char *path,
					size_t path_len);

/* Our format, keys sorted, so equal policies serialise equally: paths that are UTF-8 under
 * "digests", the others under "digests_hex" (hex of the raw bytes). NULL on allocation failure. */
char *policy_to_json(const struct policy *p);

#endif
