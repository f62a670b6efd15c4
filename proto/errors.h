/*
 * errors: every error the verifier answers over HTTP, in one table.
 *
 * An error answer is {"error":{"code":CODE,"message":TEXT}} (error_encode() in evidence.h) with
 * an HTTP status. Each row below is one condition: its enum (what the verifier's handlers reply
 * with and what agents decide by), its HTTP status, its wire code, whether it is a refusal (the
 * request was judged and refused as it is: the same request again gets the same answer) or the
 * verifier's own failure (nothing was judged; the same request later may succeed), and what an
 * agent does when it gets it. The verifier, attestd and the load generator all read this table:
 * nothing else spells a code or its status.
 *
 * A wire code may appear in two rows with different statuses (agent_retired is 403 to evidence
 * and 409 to an enrollment); the pair (status, code) names one row.
 *
 * Adding an error: one line in PROTO_ERRORS (tests/unit/test_errors.c checks that every pair is
 * unique and that the statuses are errors).
 */
#ifndef PROTO_ERRORS_H
#define PROTO_ERRORS_H

#include <stdbool.h>

/* What an agent does with an answer. */
enum proto_action {
	/* the request as sent cannot succeed (malformed, refused for good, or an operator's call):
	 * a person must act; an agent stops (attestd --once exits 2) */
	PROTO_ACTION_GIVE_UP,
	/* the verifier could not serve it now: the same request later, after a pause */
	PROTO_ACTION_RETRY,
	/* the challenge answered is not usable (unknown, expired, none outstanding): ask for a new
	 * one and answer that, at once */
	PROTO_ACTION_NEW_CHALLENGE,
	/* the verifier does not know the agent as active: enroll (again) */
	PROTO_ACTION_ENROLL,
	/* what was asked for is already done (enrolled with this AK): go on as if it succeeded */
	PROTO_ACTION_DONE,
};

/*
 * X(enum suffix, HTTP status, wire code, refusal, agent action)
 *
 * NOT_AUTHENTIC's code is the quote's first reason (reasons.h: bad_signature, nonce_mismatch,
 * ...) when the verifier knows it; "bad_signature" otherwise.
 */
#define PROTO_ERRORS(X)                                                                             \
	/* Any request (the HTTP server) */                                                         \
	X(BAD_REQUEST, 400, "bad_request", true, PROTO_ACTION_GIVE_UP)                              \
	X(UNAUTHORIZED, 401, "unauthorized", true, PROTO_ACTION_GIVE_UP)                            \
	X(READ_ONLY, 403, "read_only", true, PROTO_ACTION_GIVE_UP)                                  \
	X(NOT_FOUND, 404, "not_found", true, PROTO_ACTION_GIVE_UP)                                  \
	X(METHOD_NOT_ALLOWED, 405, "method_not_allowed", true, PROTO_ACTION_GIVE_UP)                \
	X(LENGTH_REQUIRED, 411, "length_required", true, PROTO_ACTION_GIVE_UP)                      \
	X(BODY_TOO_LARGE, 413, "body_too_large", true, PROTO_ACTION_GIVE_UP)                        \
	X(BUSY, 503, "busy", false, PROTO_ACTION_RETRY)                                             \
	X(INTERNAL, 500, "internal", false, PROTO_ACTION_RETRY)                                     \
	/* The store: one answer for every failure of it, whatever the call */                      \
	X(STORE_UNAVAILABLE, 503, "storage_unavailable", false, PROTO_ACTION_RETRY)                 \
	/* Enrollment and activation */                                                             \
	X(BAD_EK, 400, "bad_ek", true, PROTO_ACTION_GIVE_UP)                                        \
	X(BAD_AK, 400, "bad_ak", true, PROTO_ACTION_GIVE_UP)                                        \
	X(EK_UNTRUSTED, 403, "ek_untrusted", true, PROTO_ACTION_GIVE_UP)                            \
	X(EK_MISMATCH, 403, "ek_mismatch", true, PROTO_ACTION_GIVE_UP)                              \
	/* admission (--admission registered, or a registration naming another EK) */               \
	X(NOT_ADMITTED, 403, "not_admitted", true, PROTO_ACTION_GIVE_UP)                            \
	X(ACTIVATION_FAILED, 403, "activation_failed", true, PROTO_ACTION_GIVE_UP)                  \
	X(AGENT_EXISTS, 409, "agent_exists", true, PROTO_ACTION_GIVE_UP)                            \
	X(ENROLL_RETIRED, 409, "agent_retired", true, PROTO_ACTION_GIVE_UP)                         \
	X(ALREADY_ENROLLED, 409, "already_enrolled", true, PROTO_ACTION_DONE)                       \
	X(EK_IN_USE, 409, "ek_in_use", true, PROTO_ACTION_GIVE_UP)                                  \
	X(ENROLLMENT_EXPIRED, 409, "enrollment_expired", true, PROTO_ACTION_ENROLL)                 \
	X(TOO_MANY_PENDING, 429, "too_many_pending", true, PROTO_ACTION_RETRY)                      \
	/* Rounds */                                                                                \
	X(UNKNOWN_AGENT, 404, "unknown_agent", true, PROTO_ACTION_ENROLL)                           \
	X(NOT_ACTIVATED, 403, "not_activated", true, PROTO_ACTION_ENROLL)                           \
	X(AGENT_RETIRED, 403, "agent_retired", true, PROTO_ACTION_GIVE_UP)                          \
	/* retired, then reset by an operator: the agent enrolls again by itself */                 \
	X(AGENT_RESET, 403, "agent_reset", true, PROTO_ACTION_ENROLL)                               \
	X(RATE_LIMITED, 429, "rate_limited", true, PROTO_ACTION_RETRY)                              \
	X(NONCE_UNKNOWN, 400, "nonce_unknown", true, PROTO_ACTION_NEW_CHALLENGE)                    \
	X(NONCE_EXPIRED, 409, "nonce_expired", true, PROTO_ACTION_NEW_CHALLENGE)                    \
	X(NO_CHALLENGE, 409, "no_challenge", true, PROTO_ACTION_NEW_CHALLENGE)                      \
	/* the agent's policy or amendment changed since its boot was judged, and the evidence    \
	 * does not start at entry 0: a challenge asked for names entry 0 (the boot judged again) */ \
	X(REJUDGEMENT, 409, "rejudgement", true, PROTO_ACTION_NEW_CHALLENGE)                        \
	/* a replay of an answered round: the agent's next round asks for a new challenge */        \
	X(NONCE_REUSED, 409, "nonce_reused", true, PROTO_ACTION_RETRY)                              \
	/* another round of the agent committed first: the next round starts from its offset */     \
	X(ROUND_CONFLICT, 409, "round_conflict", true, PROTO_ACTION_RETRY)                          \
	X(NOT_AUTHENTIC, 400, "bad_signature", true, PROTO_ACTION_GIVE_UP)                          \
	X(POLICY_UNAVAILABLE, 503, "policy_unavailable", false, PROTO_ACTION_RETRY)                 \
	/* Operators' calls (agents never see these) */                                             \
	X(UNKNOWN_POLICY, 404, "unknown_policy", true, PROTO_ACTION_GIVE_UP)                        \
	X(UNKNOWN_VERSION, 404, "unknown_version", true, PROTO_ACTION_GIVE_UP)                      \
	X(UNKNOWN_VIOLATION, 404, "unknown_violation", true, PROTO_ACTION_GIVE_UP)                  \
	X(BAD_POLICY, 400, "bad_policy", true, PROTO_ACTION_GIVE_UP)                                \
	/* a stored version that does not load any more (rollback refused) */                       \
	X(POLICY_VERSION_BROKEN, 409, "bad_policy", true, PROTO_ACTION_GIVE_UP)                     \
	/* the newest stored version does not load (the verifier cannot show what it enforces) */ \
	X(POLICY_BROKEN, 500, "bad_policy", false, PROTO_ACTION_GIVE_UP)                            \
	X(REVIEW_UNKNOWN_POLICY, 409, "unknown_policy", true, PROTO_ACTION_GIVE_UP)                 \
	X(ALREADY_DECIDED, 409, "already_decided", true, PROTO_ACTION_GIVE_UP)                      \
	X(NOT_APPROVABLE, 409, "not_approvable", true, PROTO_ACTION_GIVE_UP)                        \
	X(POLICY_CONFLICT, 409, "policy_conflict", true, PROTO_ACTION_GIVE_UP)                      \
	X(ALREADY_RETIRED, 409, "already_retired", true, PROTO_ACTION_GIVE_UP)                      \
	X(ALREADY_RESET, 409, "already_reset", true, PROTO_ACTION_GIVE_UP)                          \
	X(POLICY_IN_USE, 409, "policy_in_use", true, PROTO_ACTION_GIVE_UP)                          \
	/* Signed policies (--policy-signers): a body that is no DSSE envelope of a policy */        \
	X(BAD_ENVELOPE, 400, "bad_envelope", true, PROTO_ACTION_GIVE_UP)                            \
	/* a policy put unsigned while signing is required */                                       \
	X(POLICY_UNSIGNED, 403, "policy_unsigned", true, PROTO_ACTION_GIVE_UP)                      \
	/* an envelope no signature of which verifies with a signer's key (wrong key, tampered) */  \
	X(POLICY_BAD_SIGNATURE, 403, "policy_bad_signature", true, PROTO_ACTION_GIVE_UP)            \
	/* a rollback to a version stored unsigned, or whose signature no signer verifies now */    \
	X(VERSION_UNSIGNED, 409, "policy_unsigned", true, PROTO_ACTION_GIVE_UP)                     \
	X(VERSION_BAD_SIGNATURE, 409, "policy_bad_signature", true, PROTO_ACTION_GIVE_UP)           \
	/* an approval would write an unsigned policy or amendment version */                       \
	X(SIGNATURE_REQUIRED, 409, "signature_required", true, PROTO_ACTION_GIVE_UP)                \
	X(REGISTRATION_EXISTS, 409, "registration_exists", true, PROTO_ACTION_GIVE_UP)              \
	X(UNKNOWN_REGISTRATION, 404, "unknown_registration", true, PROTO_ACTION_GIVE_UP)            \
	/* Attestation results for relying parties (GET /v1/agents/{id}/ear) */                     \
	X(AGENT_INACTIVE, 409, "agent_inactive", true, PROTO_ACTION_GIVE_UP)                        \
	/* no round of the agent judged by this verifier since it started: its next round makes one */\
	X(NO_RESULT, 404, "no_result", true, PROTO_ACTION_RETRY)                                    \
	X(TOO_MANY_NONCES, 429, "too_many_nonces", true, PROTO_ACTION_RETRY)                        \
	X(BACKUP_FAILED, 503, "backup_failed", false, PROTO_ACTION_RETRY)                           \
	X(BACKUP_NO_SPACE, 507, "backup_failed", false, PROTO_ACTION_GIVE_UP)

enum proto_error {
#define PROTO_ERROR_ENUM(e, status, code, refusal, action) PROTO_ERR_##e,
	PROTO_ERRORS(PROTO_ERROR_ENUM)
#undef PROTO_ERROR_ENUM
	PROTO_ERR_COUNT
};

struct proto_error_info {
	unsigned status;          /* HTTP status */
	const char *code;         /* wire code */
	bool refusal;             /* refused as sent (true) or the verifier's own failure (false) */
	enum proto_action action; /* what an agent does */
};

/* The row of e (a valid enum value; anything else is INTERNAL's row). */
const struct proto_error_info *proto_error_info(enum proto_error e);

/* The row an answer (status, code) names; false if none does (a proxy's page, a verdict reason
 * as NOT_AUTHENTIC's code, a newer verifier's code). */
bool proto_error_from_wire(long status, const char *code, enum proto_error *e);

/*
 * What an agent does with an error answer (status, code): the row's action, or for an answer
 * no row names, by its status: 429 and 5xx retry, other 4xx give up (a verdict reason as
 * NOT_AUTHENTIC's code is one), anything else retries.
 */
enum proto_action proto_error_action(long status, const char *code);

#endif
