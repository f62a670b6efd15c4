/* An operator's decision on a violation; the contract is in review.h. */
#include "verifier/review.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "proto/encoding.h"
#include "verifier/attest.h"
#include "verifier/policy.h"
#include "verifier/reasons.h"

/* A copy of the violation an operator acts on (the store's strings die with its cursor). */
struct violation_copy {
	char agent[LIMIT_AGENT_ID + 1];
	char path[LIMIT_IMA_PATH + 1];
	char digest[ATTEST_DIGEST_TEXT_MAX + 1];
	char reason[32];
	char template_name[LIMIT_IMA_TEMPLATE_NAME + 1]; /* a boot finding's BOOT_CAT_* */
};

static int copy_violation(void *arg, const struct store_violation *v)
{
	struct violation_copy *c = arg;

	snprintf(c->agent, sizeof(c->agent), "%s", v->agent ? v->agent : "");
	snprintf(c->path, sizeof(c->path), "%s", v->path ? v->path : "");
	snprintf(c->digest, sizeof(c->digest), "%s", v->digest ? v->digest : "");
	snprintf(c->reason, sizeof(c->reason), "%s", v->reason ? v->reason : "");
	snprintf(c->template_name, sizeof(c->template_name), "%s",
		 v->template_name ? v->template_name : "");
	return 0;
}

/* What approval teaches a private copy of the policy: 0, or -errno with why set. */
typedef int (*teach_fn)(struct policy *p, const struct violation_copy *vc, char *why, size_t whylen);

/* A file the allowlist did not know: its path with its digest. */
static int teach_file(struct policy *p, const struct violation_copy *vc, char *why, size_t whylen)
{
	const char *colon = strchr(vc->digest, ':');
	uint8_t digest[LIMIT_DIGEST];
	ssize_t dlen = -1;
	uint16_t alg = 0;
	int ret;

	if (colon) {
		alg = policy_alg_from_name(vc->digest, (size_t)(colon - vc->digest));
		dlen = hex_decode(colon + 1, strlen(colon + 1), digest, sizeof(digest));
	}
	if (!alg || dlen <= 0) {
		snprintf(why, whylen, "violation has no usable digest");
		return -EINVAL;
	}
	ret = policy_add_digest(p, vc->path, alg, digest, (size_t)dlen);
	if (ret)
		snprintf(why, whylen, "cannot add \"%s\" to the policy: %s", vc->path, strerror(-ret));
	return ret;
}

/* Something that booted (boot_check.c's finding): into the policy's boot section. */
static int teach_boot(struct policy *p, const struct violation_copy *vc, char *why, size_t whylen)
{
	char w[256] = "";
	int ret = policy_boot_teach(p, vc->template_name, vc->path, vc->digest, w, sizeof(w));

	if (ret)
		snprintf(why, whylen, "cannot add it to the boot policy: %s", w[0] ? w : strerror(-ret));
	return ret;
}

/*
 * Teaches the violation's agent's policy what `teach` adds and stores the result as a new
 * version (actor "operator"). Serialised by a lock so two approvals never lose each other's
 * addition.
 */
static enum review_status approve_into_policy(struct app *app, const struct violation_copy *vc,
					      teach_fn teach, struct review_result *out)
{
	static pthread_mutex_t approve_lock = PTHREAD_MUTEX_INITIALIZER;
	struct store_agent a;
	struct policy *p = NULL;
	char *json = NULL, *text = NULL, err[160] = "";
	enum review_status st = REVIEW_INTERNAL;
	int ret;

	memset(&a, 0, sizeof(a));
	if (store_agent_get(app->store, vc->agent, &a))
		return REVIEW_UNKNOWN_AGENT;
	snprintf(out->policy, sizeof(out->policy), "%s", a.policy[0] ? a.policy : POLICY_DEFAULT_NAME);
	store_agent_release(&a);

	pthread_mutex_lock(&approve_lock);
	ret = store_policy_get(app->store, out->policy, &json, &out->policy_version);
	if (ret == -ENOENT) {
		p = policy_new();
	} else if (ret == 0) {
		p = policy_load(json, strlen(json), err, sizeof(err));
		if (!p) {
			snprintf(out->why, sizeof(out->why), "cannot load policy \"%s\": %s",
				 out->policy, err);
			st = REVIEW_POLICY_BROKEN;
			goto out;
		}
	} else {
		st = REVIEW_STORE_FAILED;
		goto out;
	}
	if (!p)
		goto out;
	ret = teach(p, vc, out->why, sizeof(out->why));
	if (ret) {
		st = ret == -ENOMEM ? REVIEW_INTERNAL : REVIEW_NOT_APPROVABLE;
		goto out;
	}
	text = policy_to_json(p);
	if (!text)
		goto out;
	if (store_policy_put(app->store, out->policy, text, "operator", (int64_t)time(NULL),
			     &out->policy_version)) {
		st = REVIEW_STORE_FAILED;
		goto out;
	}
	policy_cache_invalidate(&app->policies, out->policy);
	out->into_policy = true;
	st = REVIEW_OK;
out:
	pthread_mutex_unlock(&approve_lock);
	policy_free(p);
	free(json);
	free(text);
	return st;
}

enum review_status review_decide(struct app *app, int64_t id, enum violation_state st,
				 struct review_result *out)
{
	struct violation_copy vc;
	enum reason reason;
	enum review_status rs;
	int ret;

	memset(out, 0, sizeof(*out));
	memset(&vc, 0, sizeof(vc));
	out->state = st;
	ret = id > 0 ? store_violation_get(app->store, id, copy_violation, &vc) : -ENOENT;
	if (ret == -ENOENT)
		return REVIEW_UNKNOWN_VIOLATION;
	if (ret)
		return REVIEW_STORE_FAILED;
	snprintf(out->reason, sizeof(out->reason), "%s", vc.reason);
	snprintf(out->path, sizeof(out->path), "%s", vc.path);
	/*
	 * Approving a file the allowlist did not know teaches the policy that file; the next
	 * attestation is judged against the new version. Other kinds (violation entries,
	 * boot_aggregate) have nothing to learn: approval only closes them. A reason this build
	 * does not know (a newer verifier wrote it) is only closed.
	 */
	if (st == VIOLATION_APPROVED && reason_from_name(vc.reason, &reason) &&
	    (reason_info(reason)->kind == REASON_KIND_LEARNABLE ||
	     reason_info(reason)->kind == REASON_KIND_BOOT_LEARNABLE)) {
		rs = approve_into_policy(app, &vc,
					 reason_info(reason)->kind == REASON_KIND_LEARNABLE ? teach_file
											  : teach_boot,
					 out);
		if (rs)
			return rs;
	}
	ret = store_violation_set_state(app->store, id, st);
	if (ret == -ENOENT)
		return REVIEW_UNKNOWN_VIOLATION;
	if (ret)
		return REVIEW_STORE_FAILED;
	log_info("violation %lld (%s \"%s\") %s by operator%s%s", (long long)id, vc.reason, vc.path,
		 violation_state_str(st), out->into_policy ? "; added to policy " : "",
		 out->into_policy ? out->policy : "");
	return REVIEW_OK;
}
