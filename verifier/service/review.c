/* An operator's decision on a violation; the contract is in review.h. */
#include "verifier/service/review.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "proto/alg.h"
#include "verifier/policy/boot_policy.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_cache.h"
#include "verifier/facts/reasons.h"
#include "verifier/service/policy_sign.h"

/*
 * Every decision runs under this lock: reading the violation, changing a policy and closing the
 * violation are one step for other operators, so two approvals never lose each other's digest
 * and a violation is never decided twice.
 */
static pthread_mutex_t review_lock = PTHREAD_MUTEX_INITIALIZER;

/* An approval reads, adds to and writes a policy again this often while others write it. */
#define REVIEW_WRITE_ATTEMPTS 4

const char *review_scope_str(enum review_scope s)
{
	return s == REVIEW_SCOPE_POLICY ? "policy" : "agent";
}

int review_scope_from_str(const char *s)
{
	if (s && !strcmp(s, "agent"))
		return REVIEW_SCOPE_AGENT;
	if (s && !strcmp(s, "policy"))
		return REVIEW_SCOPE_POLICY;
	return -1;
}

/* A copy of the violation an operator acts on (the store's strings die with its cursor). */
struct violation_copy {
	char agent[LIMIT_AGENT_ID + 1];
	char path[LIMIT_IMA_PATH + 1]; /* raw bytes */
	size_t path_len;
	char digest[LIMIT_DIGEST_TEXT_ESCAPED + 1];
	char reason[32];
	char template_name[LIMIT_IMA_TEMPLATE_NAME + 1]; /* a boot finding's BOOT_CAT_* */
	enum violation_state state;
	int64_t decided_at;
	char decision[256];
};

static int copy_violation(void *arg, const struct store_violation *v)
{
	struct violation_copy *c = arg;

	snprintf(c->agent, sizeof(c->agent), "%s", v->agent ? v->agent : "");
	c->path_len = v->path_len < sizeof(c->path) ? v->path_len : 0;
	memcpy(c->path, v->path, c->path_len);
	c->path[c->path_len] = '\0';
	snprintf(c->digest, sizeof(c->digest), "%s", v->digest ? v->digest : "");
	snprintf(c->reason, sizeof(c->reason), "%s", v->reason ? v->reason : "");
	snprintf(c->template_name, sizeof(c->template_name), "%s",
		 v->template_name ? v->template_name : "");
	c->state = v->state;
	c->decided_at = v->decided_at;
	snprintf(c->decision, sizeof(c->decision), "%s", v->decision ? v->decision : "");
	return 0;
}

/*
 * An exact command line in an agent's amendment passes only if it keeps the required and
 * forbidden words of the agent's policy (boot_check.h: an amendment adds, it never lifts them).
 * Approving for the agent alone a command line that breaks them would close the finding and
 * allow nothing: refused, with what to do instead.
 */
static enum review_status amendment_may_list(struct app *app, const struct violation_copy *vc,
					     struct review_result *out)
{
	struct policy *pol = NULL;
	const struct boot_policy *bp;
	char why[LIMIT_CMDLINE + 64];
	enum review_status st = REVIEW_OK;
	int ret;

	if (strcmp(vc->template_name, BOOT_CAT_CMDLINE) != 0)
		return REVIEW_OK;
	ret = policy_cache_get(&app->policies, app->store, out->policy, &pol);
	if (ret == -ENOENT)
		return REVIEW_OK; /* no such policy: no words to keep */
	if (ret) {
		snprintf(out->why, sizeof(out->why), "cannot load policy \"%s\"", out->policy);
		return ret == -EINVAL ? REVIEW_POLICY_BROKEN : REVIEW_STORE_FAILED;
	}
	bp = pol ? policy_boot(pol) : NULL;
	if (bp && boot_cmdline_judge_words(&bp->cmdline, vc->path, why, sizeof(why))) {
		snprintf(out->why, sizeof(out->why),
			 "the command line %.100s, a rule of policy %.64s that an approval for this"
			 " agent alone does not lift (its amendment only adds): approve it with scope"
			 " policy to list it there as an exact command line, or change the policy's"
			 " \"cmdline\" rules; dismiss the violation once dealt with",
			 why, out->policy);
		text_trim_utf8_tail(out->why); /* %.100s may have cut a word's UTF-8 */
		st = REVIEW_NOT_APPROVABLE;
	}
	policy_unref(pol);
	return st;
}

/* What an operator can do about a violation that no policy entry fixes. */
static const char *approve_instead(enum reason r)
{
	switch (r) {
	case REASON_BOOT_AGGREGATE_MISMATCH:
		return "boot_aggregate does not match the quoted PCR 0-9, and no policy entry changes"
		       " that: if this firmware and kernel are expected, pin their boot_aggregate in"
		       " the policy (\"boot_aggregate\": [\"alg:hex\"]), otherwise investigate the boot;"
		       " dismiss the violation once dealt with";
	case REASON_BOOT_AGGREGATE_NOT_ALLOWED:
		return "the policy pins other boot_aggregate values: if this boot is expected, add"
		       " its value to the policy's \"boot_aggregate\" list (attestctl policy put);"
		       " dismiss the violation once dealt with";
	case REASON_VIOLATION_ENTRY:
		return "IMA recorded a measurement violation (a file written while in use), which"
		       " no file entry covers: find what wrote it, or set \"violations\": \"ignore\""
		       " in the policy; dismiss the violation once dealt with";
	case REASON_UNJUDGEABLE_ENTRY:
		return "the entry has no path and digest a policy can list (an unknown template);"
		       " dismiss the violation once dealt with";
	case REASON_VIOLATIONS_UNRECORDED:
		return "these entries were not stored one by one, so there is no file to approve:"
		       " look at the machine's measurement list, then dismiss the violation";
	case REASON_BAD_FILE_SIGNATURE:
		return "the file's signature does not verify over what IMA measured (changed after"
		       " signing, or malformed), and a digest entry must not stand in for it: restore"
		       " or re-sign the file; dismiss the violation once dealt with";
	case REASON_UNKNOWN_SIGNING_KEY:
		return "the file is signed by a key the policy does not trust: if the key is yours,"
		       " add it to the policy's \"keys\" (attestctl policy put); dismiss the violation"
		       " once dealt with";
	case REASON_MISSING_FILE_SIGNATURE:
		return "the policy requires this path signed and the file carries no signature: sign"
		       " it (evmctl ima_sign) or narrow \"require_signatures\"; dismiss the violation"
		       " once dealt with";
	case REASON_KEYRING_KEY_NOT_ALLOWED:
		return "a key was loaded onto a keyring the policy does not allow it on: if expected,"
		       " list its digest under the policy's \"keyrings\"; dismiss the violation once"
		       " dealt with";
	case REASON_BOOT_LOG_MISSING:
		return "the agent sent no firmware event log, and no policy entry stands in for one:"
		       " check that attestd reads binary_bios_measurements (--event-log), or remove"
		       " the policy's \"boot\" section if this machine cannot have one";
	case REASON_BOOT_LOG_CORRUPT:
		return "the firmware event log does not parse, so there is nothing to approve: look"
		       " at the machine's log (attestctl eventlog FILE); the agent resends it when it"
		       " changes";
	case REASON_BOOT_LOG_MISMATCH:
		return "the firmware event log does not replay to the quoted PCRs (altered, or a PCR"
		       " extended after boot), and no policy entry changes that: investigate the"
		       " machine; the agent resends its log when it changes";
	case REASON_BOOT_UNVERIFIABLE:
		return "the boot event cannot be judged (missing, or its content does not match its"
		       " digest), so there is nothing to add to a boot policy: investigate the boot,"
		       " or narrow the policy's \"boot\" section; dismiss the violation once dealt"
		       " with";
	case REASON_SECURE_BOOT_MISMATCH:
		return "the Secure Boot state is a machine setting, not a list entry: turn Secure Boot"
		       " on or off in the firmware, or change the policy's \"boot\" \"secure_boot\""
		       " (attestctl policy put); dismiss the violation once dealt with";
	default:
		return "no policy entry covers this reason; dismiss the violation once dealt with";
	}
}

/*
 * The policy text `name` now, with its version in *ver, or an empty policy (version 0) when it
 * has none and `create` allows it.
 */
static enum review_status load_doc(struct app *app, const char *name, bool create,
				   struct policy **out, int64_t *ver, struct review_result *res)
{
	char err[160] = "", *json = NULL;
	int ret;

	*out = NULL;
	*ver = 0;
	ret = store_policy_get(app->store, name, &json, ver);
	if (ret == -ENOENT && create) {
		*out = policy_new();
		return *out ? REVIEW_OK : REVIEW_INTERNAL;
	}
	if (ret == -ENOENT) {
		snprintf(res->why, sizeof(res->why),
			 "agent \"%s\" uses policy \"%s\", which does not exist: there is no policy to"
			 " widen; approve for this agent only", res->agent, name);
		return REVIEW_UNKNOWN_POLICY;
	}
	if (ret)
		return REVIEW_STORE_FAILED;
	*out = policy_load(json, strlen(json), err, sizeof(err));
	free(json);
	if (!*out) {
		snprintf(res->why, sizeof(res->why), "cannot load \"%s\": %s", name, err);
		return REVIEW_POLICY_BROKEN;
	}
	return REVIEW_OK;
}

/*
 * What approval teaches a private copy of a policy document (the agent's policy or its
 * amendment): REVIEW_OK, or REVIEW_NOT_APPROVABLE / REVIEW_INTERNAL with out->why set. With
 * p NULL it only checks that the violation carries what it would teach, before any load.
 */
typedef enum review_status (*teach_fn)(struct policy *p, const struct violation_copy *vc,
				       struct review_result *out);

/* A file the policy did not list (or listed with another digest): its path with its digest. */
static enum review_status teach_file(struct policy *p, const struct violation_copy *vc,
				     struct review_result *out)
{
	uint8_t digest[LIMIT_DIGEST];
	enum ima_digest_type type;
	const char *why;
	const struct alg *alg =
		policy_file_digest_parse(vc->digest, strlen(vc->digest), digest, &type, &why);
	int ret;

	if (!alg || !vc->path_len) {
		if (alg)
			snprintf(out->why, sizeof(out->why), "the violation has no path;"
				 " dismiss it once dealt with");
		else
			snprintf(out->why, sizeof(out->why), "the violation's digest \"%.80s\" is no"
				 " policy digest (%s); dismiss it once dealt with", vc->digest, why);
		return REVIEW_NOT_APPROVABLE;
	}
	if (!p)
		return REVIEW_OK;
	ret = policy_add_file_digest(p, vc->path, vc->path_len, type, alg->id, digest, alg->size);
	if (ret) {
		snprintf(out->why, sizeof(out->why), "a policy cannot hold \"%.200s\": %s", out->path,
			 ret == -EINVAL ? "IMA never records such a path (space, NUL or too long)"
					: strerror(-ret));
		return ret == -ENOMEM ? REVIEW_INTERNAL : REVIEW_NOT_APPROVABLE;
	}
	return REVIEW_OK;
}

/*
 * Something that booted and the boot policy did not allow (boot_check.c's finding, its
 * BOOT_CAT_* in the template name): into the document's "boot" section (policy_boot_teach()).
 * In an amendment that section only ever adds to what the policy's allows (boot_check.h).
 */
static enum review_status teach_boot(struct policy *p, const struct violation_copy *vc,
				     struct review_result *out)
{
	char w[256] = "";
	int ret;

	if (!p)
		return REVIEW_OK;
	ret = policy_boot_teach(p, vc->template_name, vc->path, vc->digest, w, sizeof(w));
	if (ret) {
		snprintf(out->why, sizeof(out->why), "cannot add it to the boot policy: %s;"
			 " dismiss the violation once dealt with", w[0] ? w : strerror(-ret));
		return ret == -ENOMEM ? REVIEW_INTERNAL : REVIEW_NOT_APPROVABLE;
	}
	return REVIEW_OK;
}

/*
 * Adds what `teach` takes from the violation to `name` (the agent's policy or its amendment)
 * as a new version written by `actor`; *version gets it.
 *
 * review_lock orders approvals, but an operator's PUT or rollback of the same document does not
 * take it: the new version is written only over the version read (store_policy_put_if()), else
 * read and taught again, so that an approval never stores its addition over a text it did not
 * see (which would silently undo that PUT or rollback). An approval is an addition: on top of
 * whatever the operator wrote meanwhile is where it belongs.
 */
static enum review_status approve_into(struct app *app, const struct violation_copy *vc,
				       teach_fn teach, const char *name, bool create,
				       const char *actor, int64_t *version,
				       struct review_result *out)
{
	struct policy *p = NULL;
	enum review_status st;
	char *text = NULL;
	int64_t read_ver;
	int ret = -ESTALE;

	st = teach(NULL, vc, out);
	if (st)
		return st;
	for (int attempt = 0; attempt < REVIEW_WRITE_ATTEMPTS && ret == -ESTALE; attempt++) {
		policy_free(p);
		free(text);
		p = NULL;
		text = NULL;
		st = load_doc(app, name, create, &p, &read_ver, out);
		if (st)
			return st;
		st = teach(p, vc, out);
		if (st)
			goto out;
		st = REVIEW_INTERNAL;
		text = policy_to_json(p);
		if (!text)
			goto out;
		if (app->before_policy_write)
			app->before_policy_write(app, name);
		ret = store_policy_put_if(app->store, name, read_ver, text, actor,
					  (int64_t)time(NULL), version);
		if (ret == -ESTALE)
			log_info("review: \"%s\" was written while an approval added to it (version"
				 " %lld read, %lld now): adding to the new text", name,
				 (long long)read_ver, (long long)*version);
	}
	if (ret == -ESTALE) {
		snprintf(out->why, sizeof(out->why), "\"%s\" was written by someone else during each"
			 " of %d attempts to add to it; nothing was approved: retry", name,
			 REVIEW_WRITE_ATTEMPTS);
		st = REVIEW_CONFLICT;
		goto out;
	}
	st = ret ? REVIEW_STORE_FAILED : REVIEW_OK;
out:
	policy_free(p);
	free(text);
	return st;
}

static enum review_status approve(struct app *app, int64_t id, const struct violation_copy *vc,
				  enum review_scope scope, const char *who, struct review_result *out,
				  char *decision, size_t cap)
{
	char actor[256], name[STORE_AMENDMENT_NAME_MAX + 1];
	struct store_agent a;
	enum review_status st;
	enum reason reason;
	teach_fn teach = NULL;

	/* A reason this build does not know (a newer verifier wrote it) is not approved either. */
	if (!reason_from_name(vc->reason, &reason))
		reason = REASON_COUNT;
	if (reason != REASON_COUNT && reason_info(reason)->kind == REASON_KIND_LEARNABLE)
		teach = teach_file;
	else if (reason != REASON_COUNT && reason_info(reason)->kind == REASON_KIND_BOOT_LEARNABLE)
		teach = teach_boot;
	if (!teach) {
		snprintf(out->why, sizeof(out->why), "%s cannot be approved: %s", vc->reason,
			 approve_instead(reason));
		return REVIEW_NOT_APPROVABLE;
	}
	if (policy_sign_required(app)) {
		snprintf(out->why, sizeof(out->why),
			 "this verifier takes only signed policies (--policy-signers): an approval"
			 " would write an unsigned %s; add %s to the policy, sign it (attestctl"
			 " policy sign --key KEY.pem FILE), put it (attestctl policy put), then"
			 " dismiss violation %lld", scope == REVIEW_SCOPE_AGENT ? "amendment" :
			 "policy version", teach == teach_file ? "the file's digest" : "the boot event",
			 (long long)id);
		return REVIEW_SIGNATURE_REQUIRED;
	}
	memset(&a, 0, sizeof(a));
	if (store_agent_get(app->store, vc->agent, &a))
		return REVIEW_UNKNOWN_AGENT;
	snprintf(out->policy, sizeof(out->policy), "%s", a.policy[0] ? a.policy : POLICY_DEFAULT_NAME);
	store_agent_release(&a);

	if (scope == REVIEW_SCOPE_AGENT) {
		if (teach == teach_boot && (st = amendment_may_list(app, vc, out)) != REVIEW_OK)
			return st;
		store_amendment_name(vc->agent, name);
		snprintf(actor, sizeof(actor), "%s (approve violation %lld for agent %s)", who,
			 (long long)id, vc->agent);
		st = approve_into(app, vc, teach, name, true, actor, &out->amendment_version, out);
		if (st)
			return st;
		policy_cache_invalidate(&app->amendments, name);
		out->into_amendment = true;
		snprintf(decision, cap, "approved for agent %s only: its amendment version %lld"
			 " (over policy %s)", vc->agent, (long long)out->amendment_version,
			 out->policy);
		return REVIEW_OK;
	}
	snprintf(actor, sizeof(actor), "%s (approve violation %lld of agent %s for the policy)",
		 who, (long long)id, vc->agent);
	st = approve_into(app, vc, teach, out->policy, false, actor, &out->policy_version, out);
	if (st)
		return st;
	policy_cache_invalidate(&app->policies, out->policy);
	out->into_policy = true;
	if (store_policy_agents(app->store,
				strcmp(out->policy, POLICY_DEFAULT_NAME) ? out->policy : "",
				&out->policy_agents))
		return REVIEW_STORE_FAILED;
	snprintf(decision, cap, "approved into policy %s: version %lld, used by %llu agents",
		 out->policy, (long long)out->policy_version,
		 (unsigned long long)out->policy_agents);
	return REVIEW_OK;
}

enum review_status review_decide(struct app *app, int64_t id, enum violation_state st,
				 enum review_scope scope, const char *actor,
				 struct review_result *out)
{
	struct violation_copy vc;
	enum review_status rs = REVIEW_OK;
	char decision[400] = "dismissed";
	int ret;

	memset(out, 0, sizeof(*out));
	memset(&vc, 0, sizeof(vc));
	out->state = st;
	out->scope = scope;
	pthread_mutex_lock(&review_lock);
	ret = id > 0 ? store_violation_get(app->store, id, copy_violation, &vc) : -ENOENT;
	if (ret) {
		rs = ret == -ENOENT ? REVIEW_UNKNOWN_VIOLATION : REVIEW_STORE_FAILED;
		goto out;
	}
	snprintf(out->agent, sizeof(out->agent), "%s", vc.agent);
	snprintf(out->reason, sizeof(out->reason), "%s", vc.reason);
	snprintf(out->digest, sizeof(out->digest), "%s", vc.digest);
	out->path_escaped = text_render(vc.path, vc.path_len, out->path, sizeof(out->path));
	if (vc.state != VIOLATION_OPEN) {
		snprintf(out->why, sizeof(out->why), "violation %lld was %s already (%s); a decision"
			 " stands: if the file runs again, a new violation opens", (long long)id,
			 violation_state_str(vc.state), vc.decision[0] ? vc.decision : "no record");
		rs = REVIEW_ALREADY_DECIDED;
		goto out;
	}
	if (st == VIOLATION_APPROVED) {
		rs = approve(app, id, &vc, scope, actor ? actor : "operator", out, decision,
			     sizeof(decision));
		if (rs)
			goto out;
	}
	ret = store_violation_decide(app->store, id, st, (int64_t)time(NULL), decision);
	if (ret) {
		rs = ret == -ENOENT ? REVIEW_UNKNOWN_VIOLATION
		     : ret == -EALREADY ? REVIEW_ALREADY_DECIDED : REVIEW_STORE_FAILED;
		goto out;
	}
	log_info("violation %lld (%s \"%s\" of agent \"%s\") %s by operator: %s", (long long)id,
		 vc.reason, out->path, vc.agent, violation_state_str(st), decision);
out:
	pthread_mutex_unlock(&review_lock);
	return rs;
}
