/*
 * attest: the verifier's decision on one piece of evidence. Pure logic, no I/O.
 *
 * The caller (round.c) has already: found the agent, checked that its AK is activated, looked
 * up the challenge by nonce and checked it was issued to this agent, is unexpired and unused,
 * and marked it used (so a replayed body is `nonce_reused` even if this step fails), and read
 * the stored boot state and how many of its violations await review. attest_evaluate() then
 * makes every decision: it checks the quote against that nonce, the PCR values, the boot
 * session, the firmware event log (boot_check.h), replays the new IMA entries, judges each
 * against the policy and applies the review rule. It returns the verdict and the boot state to
 * store; the caller commits both (and the violations) in one transaction before it answers the
 * agent.
 *
 * Ownership: attest_evaluate() fills *out; release it with attest_result_release().
 */
#ifndef VERIFIER_ATTEST_H
#define VERIFIER_ATTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <openssl/evp.h>

#include "proto/evidence.h"
#include "proto/pcrs.h"
#include "proto/replay.h"
#include "verifier/facts/reasons.h"
#include "verifier/decision/violation_set.h"

struct policy;

#include "verifier/decision/boot_check.h"
#include "verifier/store/boot_state.h"

struct attest_request {
	EVP_PKEY *ak;
	const uint8_t *nonce;
	size_t nonce_len;
	const struct pcr_set *requested;  /* selection the challenge asked for (masks) */
	const struct policy *policy;      /* NULL: no policy assigned, every entry is allowed */
	/*
	 * The agent's own amendment (operators' approvals scoped to this agent), or NULL. An entry
	 * the policy does not allow passes if the amendment lists its path with its digest.
	 */
	const struct policy *amendment;
	/*
	 * The versions of policy and amendment above (NULL: unversioned, as attestctl evaluate's
	 * files). When prev's entries were judged by other versions, this round judges the boot
	 * again from entry 0 (attest_needs_rejudgement()).
	 */
	const struct judged_versions *judged_by;
	const struct boot_state *prev;
	/*
	 * Violations of this agent that no operator has approved or dismissed yet, from every boot,
	 * and how many of them are of prev's boot. They keep the agent untrusted, however clean
	 * the rounds after them and across reboots: what ran cannot be taken back. A policy with
	 * "reboot_clears_open_violations" counts only those of the current boot.
	 */
	uint64_t open_violations;
	uint64_t open_violations_prev_boot;
	const struct evidence *ev;
	/* The firmware event log to check (the evidence's, else the stored one); NULL: none. */
	const struct boot_input *boot;
};

struct attest_result {
	/* The verdict as the agent gets it: its reasons' codes are the wire names of reasons[]. */
	struct verdict_response verdict;
	/* reasons[i] is verdict.reason[i]'s reason (reasons.h), for whoever decides or writes by
	 * it (the EAR's claims, the stored row, the log) without reading a name back. */
	enum reason reasons[LIMIT_VERDICT_REASONS];
	struct boot_state next;       /* store this as the agent's new state */
	bool new_boot;                /* resetCount went up: a new boot session began */
	bool rejudged;                /* the same boot, judged again from entry 0 (new versions) */
	/*
	 * false when the quote's signature does not verify with the agent's AK: nothing in the
	 * evidence can be attributed to the agent, so the caller refuses it instead of storing a
	 * verdict (anyone can fetch a challenge; a forged answer must not change the record).
	 */
	bool authenticated;
	/* One per (reason, raw path, digest) of the round, with its count (violation_set.h). */
	struct attest_violation *violations;
	size_t nviolations;
	char *violation_paths; /* the arena their paths point into */
	/* What boot_check() found and summarised (boot_check.h); findings are in the verdict. */
	struct boot_result boot;
};

int attest_evaluate(const struct attest_request *req, struct attest_result *out);

/*
 * Whether the entries `prev` folded were judged by other versions than `now` (a policy put,
 * rolled back or assigned, an approval withdrawn, a key removed): the verdicts on them no
 * longer hold, the agent waits for its boot to be judged again, and the challenge of its next
 * round asks for the list from entry 0. A state with no entry folded needs nothing.
 */
bool attest_needs_rejudgement(const struct boot_state *prev, const struct judged_versions *now);
void attest_result_release(struct attest_result *res);

#endif
