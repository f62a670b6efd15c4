#include "verifier/service/judges.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verifier/policy/policy.h"
#include "verifier/policy/policy_cache.h"

int judges_load(struct app *app, const char *id, const struct store_round_ctx *ctx,
		struct judges *j, enum judges_part *failed)
{
	char amendment[STORE_AMENDMENT_NAME_MAX + 1];
	int ret;

	memset(j, 0, sizeof(*j));
	j->policy_name = ctx->policy[0] ? ctx->policy : POLICY_DEFAULT_NAME;
	*failed = JUDGES_POLICY;
	ret = policy_cache_get_version(&app->policies, app->store, j->policy_name,
				       ctx->policy_version, &j->policy);
	if (ret)
		return ret;
	/* The agent's own approvals: none is the common case (version 0, nothing cached). */
	if (!ctx->amendment_version)
		return 0;
	store_amendment_name(id, amendment);
	*failed = JUDGES_AMENDMENT;
	ret = policy_cache_get_version(&app->amendments, app->store, amendment,
				       ctx->amendment_version, &j->amendment);
	if (ret)
		judges_release(j);
	return ret;
}

void judges_release(struct judges *j)
{
	policy_unref(j->policy);
	policy_unref(j->amendment);
	j->policy = j->amendment = NULL;
}

void judges_versions_of(const char *policy_as_stored, int64_t policy_version, int64_t amendment_version,
		  struct judged_versions *out)
{
	memset(out, 0, sizeof(*out));
	out->known = true;
	snprintf(out->policy, sizeof(out->policy), "%s",
		 policy_as_stored && policy_as_stored[0] ? policy_as_stored : POLICY_DEFAULT_NAME);
	out->policy_version = policy_version;
	out->amendment_version = amendment_version;
}

int judges_default_version(struct app *app, int64_t *version)
{
	int ret = store_policy_version(app->store, POLICY_DEFAULT_NAME, version);

	if (ret == -ENOENT) {
		*version = 0;
		ret = 0;
	}
	return ret;
}

void judges_awaited(const struct store_agent *a, int64_t default_version, bool *awaited,
		       struct judged_versions *now)
{
	judges_versions_of(a->policy, a->policy[0] ? a->policy_version : default_version,
		     a->amendment_version, now);
	/* The last verdict names what judged the boot as its state folds it (store.h). */
	*awaited = a->state == AGENT_ACTIVE && a->last_trusted >= 0 && a->next_entry > 0 &&
		   !judged_versions_equal(&a->judged, now);
}
