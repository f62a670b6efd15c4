/*
 * review: an operator's decision on a stored violation, without HTTP.
 *
 * Approving a violation whose reason is learnable (reasons.h: a file the policy did not list,
 * or listed with another digest) teaches the agent's policy that file, as a new policy version
 * written before the violation is closed; approving a boot finding that is learnable (a kernel,
 * firmware event, PK/KEK/db/dbx or command line the boot policy did not allow) adds it to the
 * policy's boot section the same way (policy_boot_teach()); other violations are only closed. Dismissing closes
 * without touching any policy. attestctl and the HTTP handler both call this; a test can too.
 */
#ifndef VERIFIER_REVIEW_H
#define VERIFIER_REVIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "verifier/app.h"

enum review_status {
	REVIEW_OK = 0,
	REVIEW_UNKNOWN_VIOLATION,
	REVIEW_UNKNOWN_AGENT,   /* the violation's agent is gone */
	REVIEW_NOT_APPROVABLE,  /* out->why says why (no usable digest, the policy refuses the path) */
	REVIEW_POLICY_BROKEN,   /* the stored policy does not load; out->why says why */
	REVIEW_STORE_FAILED,
	REVIEW_INTERNAL,
};

struct review_result {
	enum violation_state state;      /* the state set */
	char reason[32];                 /* the violation's reason, for the log */
	char path[LIMIT_IMA_PATH + 1];   /* the violation's path, for the log */
	bool into_policy;                /* approval added the file to `policy` */
	char policy[LIMIT_POLICY_NAME + 1];
	int64_t policy_version;
	char why[LIMIT_IMA_PATH + 256]; /* may quote the path */
};

/* Sets violation `id` to `st` (approved or dismissed), with what approval teaches the policy. */
enum review_status review_decide(struct app *app, int64_t id, enum violation_state st,
				 struct review_result *out);

#endif
