/*
 * judge: the policy's decision on one IMA entry: every entry but the first of a boot, which
 * attest.c checks against the quoted PCRs. The verifier (attest.c) and `attestctl evaluate`
 * both call judge_measurement(), so an operator's offline answer is the verifier's.
 *
 * The order, each step deciding or passing on to the next:
 *  1. A violation entry (zero template hash) passes only if the policy ignores violations.
 *  2. Without a policy everything else passes.
 *  3. An entry without a path or a digest of a known algorithm: unjudgeable_entry.
 *  4. An ima-buf entry whose buffer is a key (what the kernel measures when a key is loaded onto
 *     a keyring; the entry's name is the keyring's): allowed if an exclude matches the name, the
 *     keyring is ignored, or the keyring lists the key's digest; else keyring_key_not_allowed.
 *     Keylime judges such entries the same way, against its "keyrings".
 *  5. A signature field that does not parse: bad_file_signature. Keylime fails such an entry
 *     even on an excluded path (its parser refuses the line), and the kernel never writes one.
 *  6. An excluded path passes without its signature being looked at (Keylime's order).
 *  7. A signature by a trusted key over the measured digest accepts the file, whatever the
 *     digest list says. One that the trusted key of its id did not make over this digest is
 *     bad_file_signature: the file changed after it was signed, or the list lies; it is never
 *     judged by its digest instead. A signature by an unknown key, or of a kind we cannot check
 *     (sha1, v3, EVM portable), is unknown_signing_key resp. bad_file_signature on a path the
 *     policy requires signed, and otherwise passes on to the digest list.
 *  8. No signature on a path the policy requires signed: missing_file_signature.
 *  9. The digest list: policy_check() (digests, digest_only, excludes).
 *
 * Pure and read-only on the policy: safe from many threads at once.
 */
#ifndef VERIFIER_JUDGE_H
#define VERIFIER_JUDGE_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/imalog.h"
#include "proto/imasig.h"
#include "verifier/facts/reasons.h"

struct policy;

struct judgement {
	enum reason reason;     /* why the entry is not allowed (when judge_measurement() returns false) */
	bool signed_entry;      /* the entry carried a signature field */
	enum imasig_status sig; /* its status, when signed_entry */
	uint32_t keyid;         /* its key id, when it parsed */
	const char *why;        /* a static note on the signature or keyring, NULL if none */
};

/* true when the policy allows the entry; false with j->reason set otherwise. pol may be NULL. */
bool judge_measurement(const struct policy *pol, const struct ima_entry *e,
		       struct judgement *j);

#endif
