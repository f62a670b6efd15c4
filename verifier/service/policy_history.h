/*
 * policy_history: a policy's versions as a service, without HTTP: list them, read one, roll back
 * to one. The same for an agent's amendment (store_amendment_name()), whose version 0 is the
 * empty amendment (rolling back to it withdraws every approval scoped to that agent).
 *
 * A rollback never rewrites history: it stores the chosen version's text as a new version
 * (actor "NAME (rollback to version N)", NAME the token's), so the versions in between stay readable and
 * a rollback can itself be rolled back. The policy caches drop the old version at once.
 *
 * Signed versions (policy_sign.h): the new version keeps the chosen one's signature. With
 * --policy-signers that signature is checked again against the signers of now (a version whose
 * signer's key was removed is refused), and a version stored unsigned is refused, except an
 * amendment's version 0 (the empty amendment withdraws approvals: it only ever narrows what an
 * agent is allowed).
 */
#ifndef VERIFIER_POLICY_HISTORY_H
#define VERIFIER_POLICY_HISTORY_H

#include <stdbool.h>
#include <stdint.h>

#include "verifier/service/app.h"

enum history_status {
	HISTORY_OK = 0,
	HISTORY_UNKNOWN,         /* no such policy (or amendment) */
	HISTORY_UNKNOWN_VERSION, /* it has no such version */
	HISTORY_BROKEN,          /* that version does not load any more; *why says why */
	HISTORY_UNSIGNED,        /* signers required and that version is unsigned; *why */
	HISTORY_BAD_SIGNATURE,   /* no signer's key verifies that version now; *why */
	HISTORY_STORE_FAILED,
	HISTORY_INTERNAL,
};

struct history_rollback {
	int64_t from;        /* the version rolled back to */
	int64_t version;     /* the version now current (new, or the same text already) */
	bool changed;        /* false: the current version had that text already */
	uint64_t agents;     /* agents assigned the policy (1 for an amendment) */
	char signer[65];     /* the keyid that verified the version now current; "" if none */
	char why[256];
};

/*
 * Rolls policy `name` back to `version` (amendment: true when name is an agent's amendment,
 * then version 0 is the empty amendment). `actor` (a token's name) is who rolled back.
 */
enum history_status policy_history_rollback(struct app *app, const char *name, bool amendment,
					    int64_t version, const char *actor,
					    struct history_rollback *out);

#endif
