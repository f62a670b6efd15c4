/* The default policy seeded from --policy FILE; the contract is in policy_seed.h. */
#include "verifier/service/policy_seed.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_file.h"
#include "verifier/service/app.h"
#include "verifier/service/policy_sign.h"

/* What an imported Keylime policy does not enforce as Keylime would: one log line each. */
static void log_warnings(const char *file, const struct policy *p)
{
	const char *w;
	size_t n;

	for (size_t i = 0; (w = policy_warning(p, i, &n)); i++)
		log_warn("policy \"%s\": %.*s", file, (int)n, w);
}

/* "2026-12-03 07:31:57Z" for a log line. */
static void fmt_utc(int64_t t, char *out, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%d %H:%M:%SZ", &tm))
		snprintf(out, cap, "%lld", (long long)t);
}

struct newest_version {
	int64_t version, time;
	char actor[128];
};

static int newest_cb(void *arg, const struct store_policy_version *v)
{
	struct newest_version *n = arg;

	n->version = v->version;
	n->time = v->time;
	snprintf(n->actor, sizeof(n->actor), "%s", v->actor);
	return 1; /* newest first: the first row is all we want */
}

int policy_seed_default(struct app *app, const char *file, bool replace)
{
	struct newest_version cur = { 0 };
	char err[256] = "", actor[PATH_MAX + 32], when[32];
	char *text = NULL, *stored = NULL;
	const char *json;
	struct signed_policy sp;
	struct store_policy_sig sig;
	enum sign_status ss;
	size_t len = 0;
	struct policy *p;
	int64_t ver = 0;
	int ret;

	ret = policy_file_read(file, &text, &len, err, sizeof(err));
	if (ret) {
		log_error("%s", err);
		return ret;
	}
	ss = policy_sign_open(app, text, len, &sp);
	if (ss != SIGN_OK && ss != SIGN_UNSIGNED) {
		log_error("policy \"%s\": %s", file, ss == SIGN_NOMEM ? "out of memory" : sp.why);
		ret = -EINVAL;
		goto out;
	}
	/* unsigned while signers are configured: the text itself, refused below if stored */
	json = ss == SIGN_OK ? sp.json : text;
	len = ss == SIGN_OK ? sp.len : len;
	p = policy_load(json, len, err, sizeof(err));
	if (!p) {
		log_error("policy \"%s\" does not load: %s", file, err);
		ret = -EINVAL;
		goto out;
	}
	log_warnings(file, p);
	policy_unref(p);
	ret = store_policy_get(app->store, POLICY_DEFAULT_NAME, &stored, &ver);
	if (ret && ret != -ENOENT)
		goto out;
	if (!ret && strcmp(stored, json) == 0) {
		log_info("default policy: version %" PRId64 " in the store is \"%s\"", ver, file);
		goto out;
	}
	if (!ret && !replace) {
		ret = store_policy_versions(app->store, POLICY_DEFAULT_NAME, newest_cb, &cur);
		if (ret < 0)
			goto out;
		fmt_utc(cur.time, when, sizeof(when));
		log_warn("default policy: keeping the store's version %" PRId64 " (by %s, %s), which"
			 " differs from \"%s\" given with --policy; the file only seeds a store that"
			 " has no default policy. To replace the store's copy (and what approvals and"
			 " rollbacks made of it) with the file, start once with --policy-replace",
			 cur.version, cur.actor, when, file);
		ret = 0;
		goto out;
	}
	if (ss == SIGN_UNSIGNED) {
		log_error("policy \"%s\": %s", file, sp.why);
		ret = -EINVAL;
		goto out;
	}
	snprintf(actor, sizeof(actor), "command line (%s)", file);
	sig.signer = sp.signer;
	sig.signature = sp.signature;
	ret = store_policy_put_signed(app->store, POLICY_DEFAULT_NAME, STORE_POLICY_ANY, json,
				      sp.is_signed ? &sig : NULL, actor, (int64_t)time(NULL), &ver);
	if (!ret && stored)
		log_warn("default policy: --policy-replace: \"%s\" replaced the store's copy as"
			 " version %" PRId64 " (the older versions stay in its history)", file, ver);
	else if (!ret)
		log_info("default policy: seeded from \"%s\" as version %" PRId64 "%s%s", file, ver,
			 sp.signer[0] ? ", signed by " : "", sp.signer);
out:
	signed_policy_release(&sp);
	free(stored);
	free(text);
	return ret;
}
