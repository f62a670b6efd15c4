/* One IMA entry against a policy: the order of the checks is judge.h's. */
#include "verifier/decision/judge.h"

#include <string.h>

#include "verifier/policy/policy.h"
#include "verifier/policy/policy_keys.h"

static bool refuse(struct judgement *j, enum reason r, const char *why)
{
	j->reason = r;
	if (why)
		j->why = why;
	return false;
}

/* Step 4: a key loaded onto a keyring. */
static bool judge_key(const struct policy *pol, const struct ima_entry *e, struct judgement *j)
{
	if (policy_excluded(pol, e->path, e->path_len))
		return true;
	switch (policy_keys_keyring(policy_keys(pol), e->path, e->path_len, e->digest_alg,
				    e->digest, e->digest_len)) {
	case POLICY_KEYRING_ALLOWED:
	case POLICY_KEYRING_IGNORED:
		return true;
	case POLICY_KEYRING_UNKNOWN:
		return refuse(j, REASON_KEYRING_KEY_NOT_ALLOWED, "the policy names no such keyring");
	case POLICY_KEYRING_MISMATCH:
		break;
	}
	return refuse(j, REASON_KEYRING_KEY_NOT_ALLOWED, "the keyring does not list this key");
}

bool judge_measurement(const struct policy *pol, const struct ima_entry *e,
		       struct judgement *j)
{
	const struct policy_keys *keys = policy_keys(pol);
	struct imasig sig;
	bool required;
	enum policy_decision d;
	enum reason r;

	memset(j, 0, sizeof(*j));
	if (e->violation) {
		if (pol && policy_violations_allowed(pol))
			return true;
		return refuse(j, REASON_VIOLATION_ENTRY, NULL);
	}
	if (!pol)
		return true;
	if (!e->path || !e->digest || !e->digest_alg || e->digest_type == IMA_DIGEST_OTHER)
		return refuse(j, REASON_UNJUDGEABLE_ENTRY, NULL);
	if (e->buf && e->buf_len && imasig_is_key(e->buf, e->buf_len))
		return judge_key(pol, e, j);

	j->signed_entry = e->sig && e->sig_len > 0;
	if (j->signed_entry) {
		j->sig = imasig_parse(e->sig, e->sig_len, &sig, &j->why);
		j->keyid = sig.keyid;
		if (j->sig == IMASIG_MALFORMED)
			return refuse(j, REASON_BAD_FILE_SIGNATURE, NULL);
	}
	if (policy_excluded(pol, e->path, e->path_len))
		return true;
	required = policy_keys_required(keys, e->path, e->path_len);
	if (j->signed_entry) {
		if (j->sig == IMASIG_VALID) {
			j->sig = imasig_verify(policy_keys_keyset(keys), &sig, e->digest_type,
					       e->digest_alg, e->digest, e->digest_len);
			j->why = j->sig == IMASIG_UNSUPPORTED ? imasig_kind_mismatch() : NULL;
		}
		switch (j->sig) {
		case IMASIG_VALID:
			return true;
		case IMASIG_INVALID:
			return refuse(j, REASON_BAD_FILE_SIGNATURE,
				      "the trusted key of its id did not sign this content");
		case IMASIG_UNKNOWN_KEY:
			if (required)
				return refuse(j, REASON_UNKNOWN_SIGNING_KEY, "no trusted key has its id");
			break;
		case IMASIG_UNSUPPORTED:
			if (required)
				return refuse(j, REASON_BAD_FILE_SIGNATURE, NULL);
			break;
		case IMASIG_MALFORMED:
			return refuse(j, REASON_BAD_FILE_SIGNATURE, NULL);
		}
	} else if (required) {
		return refuse(j, REASON_MISSING_FILE_SIGNATURE, "the policy requires this path signed");
	}
	d = policy_check_typed(pol, e->path, e->path_len, e->digest_type, e->digest_alg, e->digest,
			       e->digest_len);
	return policy_decision_reason(d, &r) ? refuse(j, r, NULL) : true;
}
