/* Rolling a policy back; the contract is in policy_history.h. */
#include "verifier/service/policy_history.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "verifier/policy/policy.h"
#include "verifier/service/policy_sign.h"

enum history_status policy_history_rollback(struct app *app, const char *name, bool amendment,
					    int64_t version, const char *who,
					    struct history_rollback *out)
{
	char actor[64], err[160] = "", *json = NULL, *signer = NULL, *signature = NULL;
	int64_t before = 0;
	struct policy *p = NULL;
	struct signed_policy sp = { 0 };
	struct store_policy_sig sig;
	enum history_status hs = HISTORY_INTERNAL;
	int ret;

	memset(out, 0, sizeof(*out));
	out->from = version;
	ret = store_policy_version(app->store, name, &before);
	if (ret == -ENOENT && !(amendment && version == 0))
		return HISTORY_UNKNOWN;
	if (ret && ret != -ENOENT)
		return HISTORY_STORE_FAILED;
	if (amendment && version == 0) {
		p = policy_new(); /* the empty amendment: no approval for this agent */
		json = p ? policy_to_json(p) : NULL;
		if (!json)
			goto out;
	} else {
		ret = store_policy_get_signed_version(app->store, name, version, &json, &signer,
						      &signature);
		if (ret) {
			hs = ret == -ENOENT ? HISTORY_UNKNOWN_VERSION : HISTORY_STORE_FAILED;
			goto out;
		}
		switch (policy_sign_recheck(app, json, signature, &sp)) {
		case SIGN_OK:
			break;
		case SIGN_UNSIGNED:
			hs = HISTORY_UNSIGNED;
			snprintf(out->why, sizeof(out->why), "version %" PRId64 ": %s", version, sp.why);
			goto out;
		case SIGN_NOMEM:
			goto out;
		default:
			hs = HISTORY_BAD_SIGNATURE;
			snprintf(out->why, sizeof(out->why), "version %" PRId64 ": %s", version, sp.why);
			goto out;
		}
		/* It loaded when it was stored; a newer verifier may refuse what an older took. */
		p = policy_load(json, strlen(json), err, sizeof(err));
		if (!p) {
			snprintf(out->why, sizeof(out->why), "version %" PRId64 " does not load: %s",
				 version, err);
			hs = HISTORY_BROKEN;
			goto out;
		}
	}
	snprintf(actor, sizeof(actor), "%s (rollback to version %" PRId64 ")",
		 who ? who : "operator", version);
	/* The signature travels with the text: a signed version rolled back to stays signed. */
	sig.signer = sp.signer;
	sig.signature = signature;
	if (store_policy_put_signed(app->store, name, STORE_POLICY_ANY, json,
				    signature && signature[0] ? &sig : NULL, actor, (int64_t)time(NULL),
				    &out->version)) {
		hs = HISTORY_STORE_FAILED;
		goto out;
	}
	out->changed = out->version != before;
	snprintf(out->signer, sizeof(out->signer), "%s", sp.signer);
	policy_cache_invalidate(amendment ? &app->amendments : &app->policies, name);
	if (amendment) {
		out->agents = 1;
	} else if (store_policy_agents(app->store, strcmp(name, POLICY_DEFAULT_NAME) ? name : "",
				       &out->agents)) {
		hs = HISTORY_STORE_FAILED;
		goto out;
	}
	log_info("policy: \"%s\" rolled back to version %" PRId64 ": now version %" PRId64 "%s",
		 name, version, out->version, out->changed ? "" : " (it had that text already)");
	hs = HISTORY_OK;
out:
	policy_free(p);
	signed_policy_release(&sp);
	free(json);
	free(signer);
	free(signature);
	return hs;
}
