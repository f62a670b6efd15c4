/*
 * round: the services of one attestation round, without HTTP.
 *
 * round_challenge() issues a nonce to an active agent and says where its list should start;
 * round_evidence() takes the agent's answer through every step, in this order: what the store
 * holds for the agent, read in one call (store_round_context(): its state, AK name, policy and
 * amendment versions, boot state and its version, unreviewed violations of every boot and of
 * the last one), its AK (the agent cache's, if it is the AK the store names), its policy and
 * its amendment (what operators approved for it alone) at the versions the store names, the
 * nonce (spent here, before anything that depends on the evidence, so a replayed body is
 * `nonce_reused` whatever follows), the stored firmware log if there is one,
 * attest_evaluate() (which decides), and the commit of the boot state, the verdict and the
 * violations in one transaction. A verdict is returned only once it is durable.
 *
 * Several verifiers on one store (docs/design.md, Deployment shapes): everything above is read from the store each
 * round, so a change made through another verifier (a policy, an amendment, the agent's policy
 * assignment, the agent itself) is used from the next round on; caches here are keyed by what
 * the store names (policy versions, the AK's name). With a cluster key (app->cluster) a
 * challenge issued by any verifier of the fleet is accepted, and the store spends it with the
 * round's commit: a second answer anywhere is `nonce_reused`.
 *
 * Everything that can fail for the verifier's own reasons (the store, the policy) is checked
 * before the nonce is spent, so such a failure leaves the agent's challenge usable.
 *
 * Two rounds of one agent may run at once (two nonces in flight, or several verifiers on one
 * database): each judges from the boot state it read, and the commit is a compare-and-swap on
 * that state's version. The one that commits second gets ROUND_CONFLICT and stores nothing;
 * the agent asks for a new challenge and sends from the offset the newer state expects.
 */
#ifndef VERIFIER_ROUND_H
#define VERIFIER_ROUND_H

#include "proto/evidence.h"
#include "verifier/service/app.h"

enum round_status {
	ROUND_OK = 0,             /* round_evidence: *verdict is committed (trusted or not) */
	ROUND_UNKNOWN_AGENT,      /* no such agent (or an invalid id) */
	ROUND_NOT_ACTIVATED,      /* the agent has not activated its credential */
	ROUND_RETIRED,            /* an operator retired the agent (or it re-enrolled meanwhile) */
	ROUND_RESET,              /* retired, then reset by an operator: it is to enroll again */
	ROUND_RATE_LIMITED,       /* round_challenge: too many unanswered challenges */
	ROUND_NONCE_UNKNOWN,      /* the nonce was not issued to this agent */
	ROUND_NONCE_REUSED,
	ROUND_NONCE_EXPIRED,
	ROUND_NOT_AUTHENTIC,      /* the quote is not the agent's AK's; verdict->reason[0] says how */
	ROUND_POLICY_UNAVAILABLE, /* the agent's policy is missing or does not load */
	ROUND_STORE_FAILED,       /* nothing recorded; the same request may succeed later */
	ROUND_CONFLICT,           /* another round of the agent committed first: nothing stored */
	ROUND_NO_CHALLENGE,       /* round_admit: no challenge of the agent is outstanding */
	ROUND_REJUDGE,            /* the agent's policy or amendment changed since its boot was
				   * judged, and the evidence does not start at entry 0: nothing
				   * stored, the agent asks for a challenge (it names entry 0) */
	ROUND_INTERNAL,           /* out of memory, no randomness, a stored AK that does not load */
};

/*
 * A challenge for agent `id`; *c filled on ROUND_OK. ROUND_RATE_LIMITED when the agent has
 * NONCES_MAX_OUTSTANDING unanswered ones here; never with a cluster key, where answers to other
 * verifiers leave challenges outstanding here that were answered (round.c).
 */
enum round_status round_challenge(struct app *app, const char *id, struct challenge *c);

/*
 * Whether evidence from agent `id` can be valid at all, before its body is read: the agent is
 * active and has a challenge it asked for outstanding (not one a verdict carried: every active
 * agent holds one of those; with a cluster key: active, since its challenge may be another
 * verifier's). For bodies too large to read on speculation (the HTTP server asks for
 * those over LIMIT_SMALL_BODY); ROUND_OK or why not.
 */
enum round_status round_admit(struct app *app, const char *id);

/* Judges and records `ev` from agent `id`; *verdict filled (with its id) on ROUND_OK, and its
 * first reason on ROUND_NOT_AUTHENTIC. */
enum round_status round_evidence(struct app *app, const char *id, const struct evidence *ev,
				 struct verdict_response *verdict);

#endif
