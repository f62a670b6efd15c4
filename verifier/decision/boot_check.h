/*
 * boot_check: what the firmware's event log says about a boot, for one round. Pure (no I/O);
 * attest.c calls it once the quote is authentic and its PCR values are believed.
 *
 *  1. The log must replay to the quoted PCR 0-9, and to any other quoted PCR it extends but
 *     10 (IMA's, replayed from the IMA list), in every quoted bank: else boot_log_mismatch.
 *     Checked every round: a root user can extend PCR 0-9 after boot, and the log stored at
 *     boot must still match each new quote.
 *  2. If it does and the policy has a boot section, the events are judged: PCR 0 (firmware),
 *     PCR 4 (kernels and boot applications, by Authenticode digest), PCR 7 (Secure Boot state,
 *     PK/KEK/db/dbx) and PCR 9 (the kernel command line). Nothing binds an event's type or
 *     unhashed data to the quote, and root can extend a PCR after boot and append any event:
 *     content is believed only where it hashes to the event's digests (one of them in a bank
 *     the quote covers), a list matches only such quoted digests, and no type lets an extend
 *     go unjudged. PCR 0 and 4: every extend is judged by digest whatever its type, but a
 *     marker in its spec form (a 4-byte separator, a short ASCII action string) whose data
 *     hashes to its digest. PCR 7: the separator is told by its digest and a SecureBoot
 *     variable by its content, whatever their types; the state is the one variable before the
 *     separator. PCR 9: the command line event the EFI stub tagged must be the only one and
 *     may be followed by one initrd; any other extend is boot_unverifiable, since it cannot be
 *     told from a relabelled command line whose place a later extend took. A boot is judged
 *     once per (boot session, log, command line, boot policy, amendment): the findings
 *     become stored violations that keep the agent untrusted until reviewed (attest.c's
 *     review rule), so a dismissed finding does not reopen every round.
 *  3. A summary for operators (firmware, Secure Boot, kernel, command line), as JSON text.
 *
 * Ownership: boot_check() fills *out; boot_result_release() frees it (NULL-safe, idempotent).
 */
#ifndef VERIFIER_BOOT_CHECK_H
#define VERIFIER_BOOT_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/limits.h"
#include "proto/pcrs.h"
#include "verifier/policy/boot_policy.h"
#include "verifier/facts/reasons.h"

/* What the verifier knows of the boot this round. */
struct boot_input {
	const uint8_t *log;  /* the evidence's event log, else the stored one; NULL: none */
	size_t log_len;
	const char *cmdline; /* /proc/cmdline as the agent sent it with that log; NULL: none */
	bool judged;         /* judged_* hold what the last judgement covered */
	uint64_t judged_boot;
	uint8_t judged_key[32];
};

struct boot_finding {
	enum reason reason;
	int64_t event;                          /* its index in the log, -1 if none */
	char detail[LIMIT_VERDICT_DETAIL];      /* the reason's words: PCR, event, digest, rule */
	char subject[LIMIT_CMDLINE + 1];        /* stored as the violation's path */
	char digest[LIMIT_DIGEST_TEXT + 1];  /* "sha256:hex", or "" */
	const char *category;                   /* BOOT_CAT_*: stored as its template name */
};

struct boot_result {
	struct boot_finding *findings; /* owned */
	size_t nfindings;
	bool judged;          /* the policy judged the events this round: store key with the boot */
	uint8_t key[32];      /* what that judgement covered */
	char *summary;        /* JSON object text for operators (owned); NULL when there is no log */
};

/*
 * bp: the policy's boot section, or NULL (then nothing is judged, and a missing log is no
 * finding). amend: the boot section of the agent's amendment (what operators approved for this
 * agent alone, review.h), or NULL: an event, PK/KEK/db/dbx entry or exact command line either
 * lists passes (the amendment's exact command line only if it keeps bp's required and forbidden
 * words), but only bp says what is judged at all and what Secure Boot state and command line
 * words are required or forbidden, so an amendment adds and never removes. quoted: the PCR
 * values the quote covers (already checked against pcrDigest). boot_number: the boot session
 * this round belongs to. 0, or -ENOMEM.
 */
int boot_check(const struct boot_policy *bp, const struct boot_policy *amend,
	       const struct boot_input *in, const struct pcr_set *quoted, uint64_t boot_number,
	       struct boot_result *out);
void boot_result_release(struct boot_result *r);

#endif
