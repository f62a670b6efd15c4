/*
 * judges: which policy and amendment judge an agent now.
 *
 * An agent is judged by the policy it is assigned (the default when it names none) and by its
 * amendment (what operators approved for it alone, store_amendment_name()), each at the
 * version the store names in its round context (store_round_context()). Both come from the
 * verifier's caches (app->policies, app->amendments), so a large policy is parsed once per
 * version whoever asks: a round (round.c) or an operator's list of violations.
 */
#ifndef VERIFIER_JUDGES_H
#define VERIFIER_JUDGES_H

#include "verifier/service/app.h"

struct judges {
	const char *policy_name;    /* the policy's name (points into the context or a constant) */
	struct policy *policy;      /* NULL: no policy is configured at all */
	struct policy *amendment;   /* NULL: the agent has no amendment */
};

/* Which of the two failed to load (judges_load()). */
enum judges_part {
	JUDGES_POLICY,
	JUDGES_AMENDMENT,
};

/*
 * The policy and amendment of agent `id` at the versions `ctx` names (ctx must outlive *j).
 * 0, or: -ENOENT (the assigned policy is not in the store), -EINVAL (a version does not load),
 * another -errno (the store's); then *failed says which one, *j holds nothing. Release with
 * judges_release().
 */
int judges_load(struct app *app, const char *id, const struct store_round_ctx *ctx,
		struct judges *j, enum judges_part *failed);
void judges_release(struct judges *j);

#endif
