/*
 * reasons: every reason a verdict can give, in one table.
 *
 * A reason is a fact about one piece of evidence that keeps it from being trusted. Its wire name
 * is what agents, operators, the store and the web page see; its kind says what an
 * operator's approval of a violation with this reason does; its hint says what to look at. The
 * enum is what the code decides by: nothing compares reason names as strings. Names from outside
 * (a stored violation) are turned into the enum once, by reason_from_name().
 *
 * Adding a reason: one line in VERDICT_REASONS, then a row in SECURITY.md's reason table and a
 * label in verifier/http/ui/app.js (tests/unit/test_reasons.c fails until all three agree).
 */
#ifndef VERIFIER_REASONS_H
#define VERIFIER_REASONS_H

#include <stdbool.h>

#include "proto/quote.h"

/* What approving a violation with this reason does. */
enum reason_kind {
	REASON_KIND_VERDICT,    /* a reason of the verdict only, never a stored violation */
	/* a stored violation no policy entry fixes: approval is refused with what to do instead
	 * (review.c), dismissing closes it */
	REASON_KIND_VIOLATION,
	/* a stored violation: approving adds its path and digest to the agent's amendment (or, when
	 * asked, to its policy) and closes it */
	REASON_KIND_LEARNABLE,
	/* a stored boot finding: approving adds what booted to the boot section of the agent's
	 * amendment (or, when asked, of its policy) and closes it */
	REASON_KIND_BOOT_LEARNABLE,
};

/* X(enum suffix, wire name, kind, hint for the operator) */
#define VERDICT_REASONS(X)                                                                          \
	/* The quote (proto/quote.c decides; reason_of_quote() maps its result) */                 \
	X(BAD_SIGNATURE, "bad_signature", REASON_KIND_VERDICT,                                      \
	  "the quote is not signed by the agent's AK: refused, nothing stored")                     \
	X(MALFORMED_SIGNATURE, "malformed_signature", REASON_KIND_VERDICT,                          \
	  "the quote's signature does not parse: refused, nothing stored")                          \
	X(UNSUPPORTED_ALGORITHM, "unsupported_algorithm", REASON_KIND_VERDICT,                      \
	  "the quote is signed with a hash the verifier refuses (sha1): refused, nothing stored")   \
	X(NONCE_MISMATCH, "nonce_mismatch", REASON_KIND_VERDICT,                                    \
	  "the quote binds another nonce than the challenge's: a replayed or relayed quote")        \
	X(BAD_MAGIC, "bad_magic", REASON_KIND_VERDICT,                                              \
	  "the signed data is not a TPM-generated structure")                                       \
	X(BAD_TYPE, "bad_type", REASON_KIND_VERDICT, "the signed data is not a quote")              \
	X(PCR_SELECTION_MISMATCH, "pcr_selection_mismatch", REASON_KIND_VERDICT,                    \
	  "the quote covers other PCRs than the challenge asked for")                               \
	X(PCR_DIGEST_MISMATCH, "pcr_digest_mismatch", REASON_KIND_VERDICT,                          \
	  "the PCR values sent do not hash to the quoted pcrDigest")                                \
	X(MALFORMED_ATTEST, "malformed_attest", REASON_KIND_VERDICT,                                \
	  "the quoted structure does not parse")                                                    \
	/* The TPM's clock: the boot session */                                                     \
	X(RESET_COUNT_ROLLBACK, "reset_count_rollback", REASON_KIND_VERDICT,                        \
	  "the TPM's resetCount went back: another TPM, or a replay of an older boot")              \
	X(RESTART_COUNT_ROLLBACK, "restart_count_rollback", REASON_KIND_VERDICT,                    \
	  "the TPM's restartCount went back: another TPM, or a replay")                             \
	X(CLOCK_ROLLBACK, "clock_rollback", REASON_KIND_VERDICT,                                    \
	  "the TPM's clock went back without a reset: another TPM, or a replay")                    \
	X(REBOOT, "reboot", REASON_KIND_VERDICT,                                                    \
	  "the machine rebooted; the agent sends its list from entry 0 next round")                 \
	X(LOG_OFFSET_MISMATCH, "log_offset_mismatch", REASON_KIND_VERDICT,                          \
	  "the evidence does not start where the verifier expects; the agent resends")              \
	X(LOG_RECORDS_DELETED, "log_records_deleted", REASON_KIND_VERDICT,                          \
	  "the entries the verifier needs next were deleted from the machine's kernel memory and "  \
	  "the agent has no export of them: restore attestd's export file, or reboot the machine")  \
	/* The IMA list against the quote */                                                        \
	X(LOG_CORRUPT, "log_corrupt", REASON_KIND_VERDICT,                                          \
	  "the measurement list does not parse or an entry's template hash is wrong")               \
	X(PCR_MISMATCH, "pcr_mismatch", REASON_KIND_VERDICT,                                        \
	  "no prefix of the list replays to the quoted PCR 10: entries added, dropped or changed")  \
	X(LOG_INCOMPLETE, "log_incomplete", REASON_KIND_VERDICT,                                    \
	  "the list is larger than one request: this part is replayed, not yet confirmed by a "     \
	  "quote; the rest comes next round")                                                       \
	/* The boot */                                                                              \
	X(BOOT_AGGREGATE_MISSING, "boot_aggregate_missing", REASON_KIND_VERDICT,                    \
	  "the first entry of a boot is not boot_aggregate")                                        \
	X(TPM_BYPASS, "tpm_bypass", REASON_KIND_VERDICT,                                            \
	  "IMA has bound no TPM (zero boot_aggregate, no boot_aggregate_late): check ima_tpm=, "     \
	  "the TPM driver")                                                                         \
	X(BOOT_AGGREGATE_UNVERIFIED, "boot_aggregate_unverified", REASON_KIND_VERDICT,              \
	  "the quote does not cover PCR 0-9 in the boot_aggregate's bank")                          \
	X(BOOT_AGGREGATE_MISMATCH, "boot_aggregate_mismatch", REASON_KIND_VIOLATION,                \
	  "boot_aggregate does not match the quoted PCR 0-9 (0-7 in sha1)")                         \
	X(BOOT_AGGREGATE_NOT_ALLOWED, "boot_aggregate_not_allowed", REASON_KIND_VIOLATION,          \
	  "the boot (firmware, boot loader, kernel) is not one the policy pins")                    \
	/* Entries against the policy */                                                            \
	X(VIOLATION_ENTRY, "violation_entry", REASON_KIND_VIOLATION,                                \
	  "IMA recorded a measurement violation (a file open for write while run, ToMToU)")         \
	X(UNJUDGEABLE_ENTRY, "unjudgeable_entry", REASON_KIND_VIOLATION,                            \
	  "an entry without a path or digest the policy can judge (unknown template)")              \
	X(NOT_IN_ALLOWLIST, "not_in_allowlist", REASON_KIND_LEARNABLE,                              \
	  "a file the policy does not list ran: approve to allow it for this agent (or its policy)") \
	X(DIGEST_MISMATCH, "digest_mismatch", REASON_KIND_LEARNABLE,                                \
	  "a listed file ran with another content: approve to allow this digest")                   \
	/* File signatures and keyrings (verifier/decision/judge.c decides) */                     \
	X(BAD_FILE_SIGNATURE, "bad_file_signature", REASON_KIND_VIOLATION,                          \
	  "a file's signature is malformed or does not match its content: modified after signing?") \
	X(UNKNOWN_SIGNING_KEY, "unknown_signing_key", REASON_KIND_VIOLATION,                        \
	  "a file the policy requires signed is signed by a key the policy does not trust")         \
	X(MISSING_FILE_SIGNATURE, "missing_file_signature", REASON_KIND_VIOLATION,                  \
	  "a file under a path the policy requires signed carries no signature")                    \
	X(KEYRING_KEY_NOT_ALLOWED, "keyring_key_not_allowed", REASON_KIND_VIOLATION,                \
	  "a key loaded onto a kernel keyring is not one the policy's keyrings list")               \
	/* Review state */                                                                          \
	X(OPEN_VIOLATIONS, "open_violations", REASON_KIND_VERDICT,                                  \
	  "violations await an operator's review (from any boot): approve or dismiss them")         \
	X(MORE_REASONS, "more_reasons", REASON_KIND_VERDICT,                                        \
	  "more reasons than a verdict lists; the violations list has every entry")                 \
	/* A flood cannot hide an entry; a PCR 10 that never followed the list */                  \
	X(VIOLATIONS_UNRECORDED, "violations_unrecorded", REASON_KIND_VIOLATION,                    \
	  "more distinct files broke the policy in one round than are stored one by one: "          \
	  "their count is stored; look at the machine")                                             \
	X(IMA_PCR_NOT_EXTENDED, "ima_pcr_not_extended", REASON_KIND_VERDICT,                            \
	  "PCR 10 is zero while the list has entries: IMA never extended this TPM's PCR 10")         \
	/* The firmware's event log against the quote and the boot policy (verifier/decision/boot_check.c) */ \
	X(BOOT_LOG_MISSING, "boot_log_missing", REASON_KIND_VERDICT,                                \
	  "the policy judges the boot, and the agent sent no firmware event log")                   \
	X(BOOT_LOG_CORRUPT, "boot_log_corrupt", REASON_KIND_VERDICT,                                \
	  "the firmware event log does not parse")                                                  \
	X(BOOT_LOG_MISMATCH, "boot_log_mismatch", REASON_KIND_VERDICT,                              \
	  "the firmware event log does not replay to the quoted PCR 0-9: altered, or a PCR extended after boot") \
	X(BOOT_NOT_IN_POLICY, "boot_not_in_policy", REASON_KIND_BOOT_LEARNABLE,                     \
	  "the machine booted something the boot policy does not allow: approve to add it")        \
	X(BOOT_UNVERIFIABLE, "boot_unverifiable", REASON_KIND_VIOLATION,                            \
	  "a boot event the policy judges is missing or does not match its digest")                 \
	X(SECURE_BOOT_MISMATCH, "secure_boot_mismatch", REASON_KIND_VIOLATION,                      \
	  "Secure Boot is not in the state the boot policy requires")

enum reason {
#define REASON_ENUM(id, name, review, hint) REASON_##id,
	VERDICT_REASONS(REASON_ENUM)
#undef REASON_ENUM
	REASON_COUNT
};

struct reason_info {
	const char *name;
	enum reason_kind kind;
	const char *hint;
};

/* The row of r; r must be below REASON_COUNT. */
const struct reason_info *reason_info(enum reason r);
const char *reason_name(enum reason r);
/* true and *out set if name is a reason's wire name. */
bool reason_from_name(const char *name, enum reason *out);
/* A quote's failure (proto/quote.h, not QUOTE_OK) as the reason of the verdict; each failure
 * has its own. QUOTE_OK, which is none, gives REASON_MALFORMED_ATTEST. */
enum reason reason_of_quote(enum quote_result q);

#endif
