/*
 * judges: which policy and amendment judge an agent now, at which versions, and whether its
 * boot, as the verifier folded it, was judged by others (it then awaits re-judgement:
 * attest.h, attest_needs_rejudgement(); an agent awaiting it is shown as such, never as
 * trusted under old versions).
 *
 * An agent is judged by the policy it is assigned (the default when it names none) and by its
 * amendment (what operators approved for it alone, store_amendment_name()), each at the
 * version the store names in its round context (store_round_context()). Both come from the
 * verifier's caches (app->policies, app->amendments), so a large policy is parsed once per
 * version whoever asks: a round (round.c) or an operator's list of violations.
 */
#ifndef VERIFIER_JUDGES_H
#define VERIFIER_JUDGES_H

#include <stdbool.h>
#include <stdint.h>

#include "verifier/service/app.h"
#include "verifier/store/store.h"

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

/* The versions of an agent's policy, named as the agent stores it ("" = the default). */
void judges_versions_of(const char *policy_as_stored, int64_t policy_version, int64_t amendment_version,
		  struct judged_versions *out);

/*
 * The newest version of the default policy (0: none), which agents that name no policy are
 * judged by: read before a listing, since the store cannot be called from its callbacks.
 */
int judges_default_version(struct app *app, int64_t *version);

/*
 * Whether agent `a` (a store summary: its last verdict's versions, the newest versions of its
 * policy and amendment) awaits re-judgement: active, judged at least one entry, and by other
 * versions than those of now (*now). default_version: judges_default_version()'s.
 */
void judges_awaited(const struct store_agent *a, int64_t default_version, bool *awaited,
		       struct judged_versions *now);

#endif
