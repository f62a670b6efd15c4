/*
 * agents: an agent's lifecycle as a service, without HTTP: enrollment (enroll.c's checks, then
 * the pending record) and activation (the credential secret proves the AK and EK share a TPM).
 *
 * A refusal changes nothing stored. Re-enrolling an id that is pending, or active with the same
 * EK and AK, replaces its pending credential; an id held by another EK or AK is refused.
 *
 * Admission (store.h, "Registrations"): a registered id enrolls only with the EK registered
 * for it; with --admission registered an id without a registration is refused. Either
 * refusal (AGENTS_NOT_ADMITTED) is logged and stores nothing.
 *
 * An id an operator retired is refused (AGENTS_RETIRED) until an operator resets it; a reset
 * lets its next enrollment bring another EK and AK, which replace the old ones (store.h,
 * store_agent_reset()).
 *
 * One TPM is one agent: an EK active under one id is refused under any other, at enrollment
 * and (should two pending ids of one EK race) at activation. Pending enrollments are bounded:
 * they expire (store_set_enroll_limits(), the verifier's --pending-ttl), and a new one past
 * LIMIT_PENDING_PER_EK for its EK or LIMIT_PENDING_ENROLLMENTS in all is refused.
 */
#ifndef VERIFIER_AGENTS_H
#define VERIFIER_AGENTS_H

#include "verifier/service/app.h"
#include "verifier/facts/enroll.h"

enum agents_status {
	AGENTS_OK = 0,
	AGENTS_REFUSED,          /* enroll_check() refused: enroll_status says how, result.why why */
	AGENTS_ALREADY_ACTIVE,   /* enrolled and active with this EK and AK */
	AGENTS_ID_TAKEN,         /* the id belongs to another EK or AK */
	AGENTS_UNKNOWN_AGENT,
	AGENTS_WRONG_SECRET,     /* the secret does not match the credential issued */
	AGENTS_CREDENTIAL_REPLACED, /* a newer enrollment replaced the credential in between */
	AGENTS_EK_IN_USE,        /* the EK is active as another agent */
	AGENTS_EK_PENDING_FULL,  /* the EK has too many pending enrollments under other ids */
	AGENTS_PENDING_FULL,     /* too many pending enrollments in all */
	AGENTS_EXPIRED,          /* activate: the pending enrollment expired; enroll again */
	AGENTS_RETIRED,          /* enroll: an operator retired the id (and did not reset it) */
	AGENTS_NOT_ADMITTED,     /* enroll: not registered (--admission registered), or registered
				  * with another EK; `unregistered` says which */
	AGENTS_STORE_FAILED,
	AGENTS_INTERNAL,
};

struct agents_enrollment {
	enum enroll_status check;   /* enroll_check()'s answer */
	struct enroll_result result; /* the credential for the agent (wipe it after use) */
	bool reenrolled;            /* an existing pending record was replaced */
	bool replaced;              /* a reset agent enrolled with new keys (store.h) */
	bool unregistered;          /* AGENTS_NOT_ADMITTED: no registration (else another EK) */
};

enum agents_status agents_enroll(struct app *app, const struct enroll_request *er,
				 struct agents_enrollment *out);

/* Activates agent `id` if `secret` answers its credential; a no-op success if already active. */
enum agents_status agents_activate(struct app *app, const char *id, const uint8_t *secret,
				   size_t secret_len);

#endif
