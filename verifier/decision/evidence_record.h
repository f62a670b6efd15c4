/*
 * evidence_record: the inputs of one round's decision (attest.h, struct attest_request) kept
 * with its verdict, so that the verdict can be reached again offline, months later, by the
 * same code (attest_evaluate()), with no verifier running.
 *
 * Two forms, both JSON with binary parts base64 and digests hex:
 *
 *  - stored (evidence_record_encode()): what the round writes beside its verdict. It names the
 *    policy and amendment by name and version and the firmware event log by its SHA-256; the
 *    store keeps one copy of each of those however many records name them (store.h,
 *    "Evidence").
 *  - exported (evidence_record_export()): the stored form made self-contained, with the
 *    verdict's id, the AK, the policy's and amendment's JSON text and the event log's bytes.
 *
 *   {"format": 1, "verdict_id": N, "agent": ID, "time": UNIX_SECONDS,
 *    "evidence": proto/evidence.h's evidence object, without its boot log,
 *    "challenge": proto/evidence.h's challenge object (the nonce and PCRs asked for),
 *    "ak_pub": B64(TPM2B_PUBLIC of the agent's AK as enrolled)  (exported; stored beside),
 *    "prev_state": B64(boot_state.h's encoding of the state the round started from),
 *    "open_violations": N, "open_violations_in_boot": N,
 *    "judged_by": {"policy": NAME, "policy_version": N, "amendment_version": N} | null,
 *    "boot": {"sha256": HEX, "cmdline": TEXT|null, "judged_boot": N, "judged_key": HEX|null,
 *             "log": B64 (exported only)} | null,
 *    "policy": {"name": NAME, "version": N, "text": JSON TEXT} | null     (exported only)
 *    "amendment": {"name": NAME, "version": N, "text": JSON TEXT} | null  (exported only)
 *    "verdict": proto/evidence.h's verdict_response object (what the verifier answered)}
 *
 * An incremental round (the agent sends only the entries after those already folded) is
 * replayed from prev_state, the replay the verifier carried from the boot's earlier rounds:
 * the record proves those entries only through that state (SECURITY.md, "Evidence").
 *
 * Parsers take untrusted input (a file an auditor was handed): every field is checked, and
 * evidence_record_parse() fails with *why naming the field. Ownership: a parsed record owns its
 * buffers; release with evidence_record_release() (NULL-safe, idempotent). Encoders return a
 * malloc'd string (caller frees) or NULL.
 */
#ifndef VERIFIER_EVIDENCE_RECORD_H
#define VERIFIER_EVIDENCE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/evidence.h"
#include "verifier/decision/attest.h"
#include "verifier/store/boot_state.h"

#define EVIDENCE_RECORD_FORMAT 1

/* What a round hands over to be kept (all borrowed for the call). */
struct evidence_kept {
	const char *agent;
	int64_t time;
	const struct attest_request *req; /* as attest_evaluate() was called */
	const struct challenge *challenge;
	const uint8_t *ak_pub;            /* the AK's TPM2B_PUBLIC as enrolled; NULL: the */
	size_t ak_pub_len;                /* store keeps it beside the record */
	const uint8_t *boot_log_sha256;   /* of req->boot->log; NULL when there is none */
	const struct verdict_response *verdict;
};

/* The stored form. NULL on allocation failure. */
char *evidence_record_encode(const struct evidence_kept *k);

/* What the stored form names that the store keeps apart (for the export). */
struct evidence_refs {
	char agent[LIMIT_AGENT_ID + 1];
	bool has_policy;
	char policy[LIMIT_POLICY_NAME + 1];
	int64_t policy_version;
	int64_t amendment_version; /* 0: no amendment judged the round */
	bool has_boot_log;
	uint8_t boot_log_sha256[32];
};
/* -EINVAL if `stored` is not a stored record. */
int evidence_record_refs(const char *stored, struct evidence_refs *out);

/*
 * The exported form: `stored` with the verdict's id and the texts and bytes it names (NULL /
 * 0 where it names none). NULL if `stored` does not parse or on allocation failure.
 */
char *evidence_record_export(const char *stored, int64_t verdict_id, const uint8_t *ak_pub,
			     size_t ak_pub_len, const char *policy_text,
			     const char *amendment_text, const uint8_t *boot_log,
			     size_t boot_log_len);

struct evidence_record {
	int64_t verdict_id;
	char agent[LIMIT_AGENT_ID + 1];
	int64_t time;
	struct evidence ev;
	struct challenge challenge;
	uint8_t *ak_pub;
	size_t ak_pub_len;
	struct boot_state prev;
	uint64_t open_violations;
	uint64_t open_violations_in_boot;
	bool has_judged_by;
	struct judged_versions judged_by;
	bool has_boot;
	uint8_t boot_sha256[32];
	struct boot_input boot;   /* log, cmdline and judged_* point into the record */
	uint8_t *boot_log;
	char *boot_cmdline;
	char *policy_text;        /* NULL: no policy judged the round */
	char *amendment_text;     /* NULL: no amendment */
	struct verdict_response verdict; /* as recorded */
};

/* The exported form (len bytes). -EINVAL with *why naming the field, -ENOMEM. */
int evidence_record_parse(const char *json, size_t len, struct evidence_record *out,
			  const char **why);
void evidence_record_release(struct evidence_record *r);

/* What evidence_record_check() found. */
struct evidence_check {
	bool reproduced;           /* the same verdict, reasons and next entry as recorded */
	bool authenticated;        /* the quote verified with the record's AK */
	struct verdict_response verdict; /* reached now */
	char why[512];             /* the first difference, or why the inputs do not load */
};

/*
 * Reaches the verdict again from the record's inputs with attest_evaluate(), and compares it
 * with the recorded one. 0 with *out filled (reproduced or not); -EINVAL when an input does
 * not load (the AK, a policy, the event log's digest): out->why says which, nothing judged;
 * -ENOMEM.
 */
int evidence_record_check(const struct evidence_record *r, struct evidence_check *out);

#endif
