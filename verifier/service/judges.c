#include "verifier/service/judges.h"

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
