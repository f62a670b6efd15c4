/*
 * review: an operator's decision on a stored violation, without HTTP.
 *
 * Approval is scoped. By default (REVIEW_SCOPE_AGENT) approving a learnable violation (reasons.h:
 * a file the policy did not list, or listed with another digest) adds its path and digest to the
 * violation's agent's amendment (store.h, store_amendment_name()): a small policy of that agent
 * alone, consulted after its policy says no. REVIEW_SCOPE_POLICY adds them to the policy the
 * agent is assigned instead, which every agent assigned to it shares: the result names that
 * policy, its new version and how many agents use it. Either is written as a new version before
 * the violation is closed, with the raw path bytes IMA recorded. That version is written over
 * the one the approval read, never over a PUT or rollback that landed meanwhile: the approval
 * then adds to the new text, and after a few such collisions gives up (REVIEW_CONFLICT, the
 * violation still open).
 *
 * Approving a boot finding that is learnable (reasons.h: a kernel, firmware event, PK/KEK/db/dbx
 * or command line the boot policy did not allow) teaches the "boot" section of the same
 * document the scope names (policy_boot_teach()): the agent's amendment, whose boot section
 * only ever adds to what its policy's allows (boot_check.h), or with REVIEW_SCOPE_POLICY the
 * policy itself. A command line that breaks the policy's required or forbidden words is
 * refused for the agent alone: an amendment's exact command line does not lift them.
 *
 * Approving what no policy entry can fix (a boot_aggregate, a violation entry, an unjudgeable
 * entry, entries past the per-round cap, a boot event that cannot be judged, the Secure Boot
 * state) is refused with what to do instead; dismissing closes any open violation without
 * touching a policy. A decided violation stays decided (a recurrence opens a new one).
 *
 * With --policy-signers (policy_sign.h) every approval is refused (REVIEW_SIGNATURE_REQUIRED,
 * the violation still open): it would write a policy or amendment version no signer signed,
 * and the verifier holds no signer's private key. The operator adds the entry to the policy,
 * signs it and puts it (attestctl policy sign, policy put), then dismisses the violation.
 * attestctl, the web page and the HTTP handler all call this; tests can too.
 */
#ifndef VERIFIER_REVIEW_H
#define VERIFIER_REVIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/text.h"
#include "verifier/service/app.h"
#include "verifier/decision/violation_set.h"

enum review_status {
	REVIEW_OK = 0,
	REVIEW_UNKNOWN_VIOLATION,
	REVIEW_UNKNOWN_AGENT,   /* the violation's agent is gone */
	REVIEW_ALREADY_DECIDED, /* out->why says how it was decided */
	REVIEW_NOT_APPROVABLE,  /* out->why says why, and what to do instead */
	REVIEW_UNKNOWN_POLICY,  /* REVIEW_SCOPE_POLICY, and the agent's policy does not exist */
	REVIEW_POLICY_BROKEN,   /* the stored policy does not load; out->why says why */
	REVIEW_CONFLICT,        /* the document was written by others under every attempt */
	REVIEW_SIGNATURE_REQUIRED, /* --policy-signers: approvals write nothing; out->why */
	REVIEW_STORE_FAILED,
	REVIEW_INTERNAL,
};

enum review_scope {
	REVIEW_SCOPE_AGENT = 0, /* the violation's agent only: its amendment */
	REVIEW_SCOPE_POLICY,    /* the policy the agent is assigned, for every agent using it */
};
const char *review_scope_str(enum review_scope s);
/* -1 if the text names no scope ("agent", "policy"). */
int review_scope_from_str(const char *s);

struct review_result {
	enum violation_state state;         /* the state set */
	enum review_scope scope;
	char agent[LIMIT_AGENT_ID + 1];
	char reason[32];
	char path[TEXT_ESCAPED_MAX(LIMIT_IMA_PATH)]; /* display text (proto/text.h) */
	bool path_escaped;
	char digest[LIMIT_DIGEST_TEXT_ESCAPED + 1];
	char policy[LIMIT_POLICY_NAME + 1]; /* the policy the agent is assigned */
	bool into_policy;                   /* approval added the file to `policy` ... */
	int64_t policy_version;             /* ... which is now this version */
	uint64_t policy_agents;             /* ... used by this many agents */
	bool into_amendment;                /* approval added the file to the agent's amendment */
	int64_t amendment_version;
	char why[512];                      /* a refusal's reason (may quote a short path) */
};

/*
 * Sets open violation `id` to `st` (approved or dismissed); approval as `scope` says. `actor`
 * (a token's name) is who decided: the policy or amendment version it writes names it.
 */
enum review_status review_decide(struct app *app, int64_t id, enum violation_state st,
				 enum review_scope scope, const char *actor,
				 struct review_result *out);

#endif
